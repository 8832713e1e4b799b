/*
 * Body of one vector Mandelbrot row kernel, included by sb_mandel_simd.c once per instruction set
 * with these macros defined:
 *   SBV_FN name, SBV_TARGET function attribute, SBV_W lanes per vector of type SBV_T,
 *   SBV_LOAD/STORE/SET1/ADD/SUB/MUL;
 *   SBV_MAX(a, b): per 64-bit lane, a value whose high 32 bits are the larger (signed) high 32 bits
 *     of a and b (the low 32 bits are don't-care);
 *   SBV_FLAGS(m) -> int: bit w set when lane w of such a max has high 32 bits above 0x400fffff,
 *     i.e. it may hold a |z|^2 >= 4;
 *   SBV_NOT_LE(r, four) -> int: bit w set when !(r <= 4) in lane w (the reference's test fails);
 *   SBV_ZERO_LANES(x, lanes): x with the lanes whose bit is set in `lanes` zeroed.
 *
 * Bit-identical to sb_mandel_count: every lane performs exactly the reference operations in the
 * reference order. For speed:
 *   - SBV_NV vectors are interleaved, because one step of one lane is a 9-cycle dependency chain;
 *     x and y stay in registers, c is read from memory (with c in registers too, the vectors would
 *     not fit 16 ymm registers and the spills would land on the chains);
 *   - the escape test runs once per block of SBV_K steps: each step stores |z|^2; after the block
 *     a max tree over the high 32 bits of the stored |z|^2 (for doubles >= 0 they order as the
 *     values do) flags the lanes that may have left |z|^2 <= 4; it runs on the vector unit's
 *     integer side, as the FP add pipes are the bottleneck. A NaN |z|^2 may be lost in that max
 *     (negative NaN), which is safe: with c finite, x and y stay finite while |z|^2 <= 4, so an
 *     orbit turns NaN only after a |z|^2 > 4 that the max has seen; pixels with a non-finite c
 *     are counted by the scalar reference at refill time. The exact escape step is then
 *     recovered from the stored |z|^2 with the reference's own test;
 *   - the block loop is branch-free; after a block where a lane ended (escaped or at max_iter) a
 *     settle step writes the counts and refills each such lane with the next pixel of the row
 *     right away (its x, y are zeroed by a lane mask, so x and y never leave the registers);
 *     lanes with no pixel left run c = 0, which never escapes.
 * Measured on Zen 3 (docs/simd-bounds.md): the loop alone runs at ~87 % of its bound; the rest
 * goes to the settle steps and the row's tail (idle lanes).
 */
#ifndef SBV_NV
#define SBV_NV 6 /* measured: 5 -3 %, 7 -16 % (spills) with AVX2 */
#endif
#ifndef SBV_K
#define SBV_K 8 /* 8, 16 or 32 (the max tree); 8 measured fastest */
#endif
#ifndef SBV_OPAQUE /* hides a value from the optimiser (an includer may emulate SBV_T as a struct) \
                    */
#define SBV_OPAQUE(x) __asm__("" : "+v"(x))
#endif
#define SBV_L (SBV_NV * SBV_W)
_Static_assert(SBV_L <= 64, "lane flags are a uint64_t");
_Static_assert(SBV_K *SBV_W <= 64, "a vector's test results of a block are a uint64_t");
#define SBV_LANE_BITS (UINT64_MAX / ((UINT64_C(1) << SBV_W) - 1)) /* bit 0 of every SBV_W bits */
#define SBV_CAT2(a, b) a##b
#define SBV_CAT(a, b) SBV_CAT2(a, b)
#define SBV_LANES SBV_CAT(SBV_FN, _lanes)
#define SBV_SETTLE SBV_CAT(SBV_FN, _settle)

/* The row's lanes between blocks (x and y live in vector registers in SBV_FN). */
struct SBV_LANES {
    _Alignas(64) double cxs[SBV_L], cys[SBV_L];
    _Alignas(64) double rbuf[SBV_K][SBV_L]; /* |z|^2 before each step of the block */
    int32_t pix[SBV_L];                     /* pixel in the lane, -1 = none */
    int64_t ends[SBV_L];                    /* step count at which the pixel reaches max_iter */
    int64_t deadline;                       /* the earliest ends[l] */
    double x0, dx, cy;
    uint32_t *row_out;
    int32_t next, active, width, max_iter;
};

/* Lane l takes the next pixel of the row whose c is finite, starting at step t; a pixel with an
 * infinite or NaN c is counted by the reference right here (the block test relies on c finite:
 * then an orbit turns NaN only after |z|^2 > 4 was seen). */
static inline __attribute__((always_inline)) void SBV_CAT(SBV_FN, _put)(struct SBV_LANES *st, int l,
                                                                        int64_t t) {
    for (; st->next < st->width; st->next++) {
        const double cx = st->x0 + (st->next + 0.5) * st->dx;
        if (__builtin_isfinite(cx) && __builtin_isfinite(st->cy)) {
            st->ends[l] = t + st->max_iter;
            st->pix[l] = st->next++;
            st->cxs[l] = cx;
            st->cys[l] = st->cy;
            st->active++;
            return;
        }
        st->row_out[st->next] = sbv_count_scalar(cx, st->cy, st->max_iter);
    }
    st->ends[l] = INT64_MAX; /* no pixel: never due */
    st->pix[l] = -1;
    st->cxs[l] = st->cys[l] = 0.0;
}

/* After the block of steps [t, t + SBV_K): write the count of every lane in `flags` that ended
 * (escaped) or is at max_iter; refill those with pixels that start at step t + SBV_K. Returns the
 * lanes refilled (their x, y must restart at 0). Inlined: a call would make the caller spill x
 * and y (the ABI saves no vector register) and stall every chain on the reload. */
static inline __attribute__((always_inline)) SBV_TARGET uint64_t SBV_SETTLE(struct SBV_LANES *st,
                                                                            uint64_t flags,
                                                                            int64_t t, SBV_T four,
                                                                            uint32_t *row_out) {
    const int32_t max_iter = st->max_iter;
    if (t + SBV_K >= st->deadline)
        for (int l = 0; l < SBV_L; l++)
            flags |= (uint64_t)(st->ends[l] <= t + SBV_K) << l;
    uint64_t refilled = 0;
    for (int v = 0; v < SBV_NV; v++) {
        unsigned lanes = (unsigned)(flags >> (v * SBV_W)) & ((1u << SBV_W) - 1);
        if (!lanes)
            continue;
        /* bit s * SBV_W + w: lane w fails the reference's test |z|^2 <= 4 (NaN fails it too)
         * before step s of the block; no branch per step */
        uint64_t fails = 0;
        for (int s = 0; s < SBV_K; s++)
            fails |= (uint64_t)(unsigned)SBV_NOT_LE(SBV_LOAD(st->rbuf[s] + v * SBV_W), four)
                     << (s * SBV_W);
        for (; lanes; lanes &= lanes - 1) {
            const int w = __builtin_ctz(lanes), l = v * SBV_W + w;
            if (st->pix[l] < 0)
                continue;
            const int64_t done = t - (st->ends[l] - max_iter); /* steps before this block */
            const int64_t left = max_iter - done; /* steps the reference may still take */
            const uint64_t lane_fails = fails & (SBV_LANE_BITS << w);
            const int64_t esc = lane_fails ? __builtin_ctzll(lane_fails) / SBV_W : INT64_MAX;
            uint32_t count;
            if (esc < left)
                count = (uint32_t)(done + esc);
            else if (left <= SBV_K)
                count = (uint32_t)max_iter;
            else
                continue; /* flagged for |z|^2 == 4 (see SBV_FLAGS): the reference goes on */
            row_out[st->pix[l]] = count;
            st->active--;
            SBV_CAT(SBV_FN, _put)(st, l, t + SBV_K);
            refilled |= UINT64_C(1) << l;
        }
    }
    if (refilled) {
        int64_t deadline = INT64_MAX;
        for (int l = 0; l < SBV_L; l++)
            deadline = st->ends[l] < deadline ? st->ends[l] : deadline;
        st->deadline = deadline;
    }
    return refilled;
}

SBV_TARGET void SBV_FN(const sb_params *p, int32_t j, uint32_t *row_out) {
    const double x0 = p->region[0], x1 = p->region[1], y0 = p->region[2], y1 = p->region[3];
    const int32_t width = p->width, max_iter = p->max_iter;
    if (max_iter <= 0) {
        for (int32_t i = 0; i < width; i++)
            row_out[i] = 0;
        return;
    }
    struct SBV_LANES st;
    st.dx = (x1 - x0) / p->width;
    st.cy = y1 - (j + 0.5) * ((y1 - y0) / p->height);
    st.x0 = x0;
    st.row_out = row_out;
    st.width = width;
    st.max_iter = max_iter;
    st.next = st.active = 0;
    st.deadline = max_iter;
    for (int l = 0; l < SBV_L; l++)
        SBV_CAT(SBV_FN, _put)(&st, l, 0);
    const SBV_T four = SBV_SET1(4.0);
    SBV_T two = SBV_SET1(2.0);
    /* opaque to the compiler: it would turn 2.0*x into x+x (exact too), moving a multiply onto the
     * add pipes, which are the bottleneck */
    SBV_OPAQUE(two);
    SBV_T X[SBV_NV], Y[SBV_NV];
#pragma GCC unroll 8
    for (int v = 0; v < SBV_NV; v++)
        X[v] = Y[v] = SBV_SET1(0.0);
    for (int64_t t = 0; st.active > 0; t += SBV_K) {
        for (int s = 0; s < SBV_K; s++) {
#pragma GCC unroll 8
            for (int v = 0; v < SBV_NV; v++) {
                const SBV_T xx = SBV_MUL(X[v], X[v]);
                const SBV_T yy = SBV_MUL(Y[v], Y[v]);
                SBV_STORE(st.rbuf[s] + v * SBV_W, SBV_ADD(xx, yy));
                /* y first: then x's register can take the new x, no register copy */
                Y[v] = SBV_ADD(SBV_MUL(SBV_MUL(two, X[v]), Y[v]), SBV_LOAD(st.cys + v * SBV_W));
                X[v] = SBV_ADD(SBV_SUB(xx, yy), SBV_LOAD(st.cxs + v * SBV_W));
            }
        }
        uint64_t flags = 0;
#pragma GCC unroll 8
        for (int v = 0; v < SBV_NV; v++) {
            SBV_T m[SBV_K / 2];
#pragma GCC unroll 16
            for (int s = 0; s < SBV_K / 2; s++)
                m[s] = SBV_MAX(SBV_LOAD(st.rbuf[2 * s] + v * SBV_W),
                               SBV_LOAD(st.rbuf[2 * s + 1] + v * SBV_W));
#if SBV_K >= 16
#pragma GCC unroll 16
            for (int s = 0; s < SBV_K / 4; s++)
                m[s] = SBV_MAX(m[s], m[s + SBV_K / 4]);
#endif
#if SBV_K >= 32
#pragma GCC unroll 16
            for (int s = 0; s < SBV_K / 8; s++)
                m[s] = SBV_MAX(m[s], m[s + SBV_K / 8]);
#endif
            m[0] = SBV_MAX(SBV_MAX(m[0], m[2]), SBV_MAX(m[1], m[3]));
            flags |= (uint64_t)(unsigned)SBV_FLAGS(m[0]) << (v * SBV_W);
        }
        if (flags || t + SBV_K >= st.deadline) {
            const uint64_t refilled = SBV_SETTLE(&st, flags, t, four, row_out);
#pragma GCC unroll 8
            for (int v = 0; v < SBV_NV; v++) {
                const unsigned lanes = (unsigned)(refilled >> (v * SBV_W)) & ((1u << SBV_W) - 1);
                X[v] = SBV_ZERO_LANES(X[v], lanes);
                Y[v] = SBV_ZERO_LANES(Y[v], lanes);
            }
        }
    }
}

#undef SBV_NV
#undef SBV_K
#undef SBV_L
#undef SBV_LANES
#undef SBV_SETTLE
#undef SBV_LANE_BITS
#undef SBV_OPAQUE
/* and the includer's parameters, so the next instruction set defines its own */
#undef SBV_FN
#undef SBV_TARGET
#undef SBV_W
#undef SBV_T
#undef SBV_LOAD
#undef SBV_STORE
#undef SBV_SET1
#undef SBV_ADD
#undef SBV_SUB
#undef SBV_MUL
#undef SBV_MAX
#undef SBV_FLAGS
#undef SBV_NOT_LE
#undef SBV_ZERO_LANES
