/*
 * Body of one vector Mandelbrot row kernel, included by sb_mandel_simd.c once per instruction set
 * with these macros defined:
 *   SBV_FN name, SBV_TARGET function attribute, SBV_W lanes per vector of type SBV_T,
 *   SBV_LOAD/STORE/SET1/ADD/SUB/MUL;
 *   SBV_NOT_LE(r, bound) -> int: bit w set when !(r <= bound) in lane w (NaN included);
 *   SBV_ZERO_LANES(x, lanes): x with the lanes whose bit is set in `lanes` zeroed.
 *
 * Bit-identical to sb_mandel_count: every lane performs exactly the reference operations in the
 * reference order. For speed:
 *   - SBV_NV vectors are interleaved, because one step of one lane is a 9-cycle dependency chain;
 *     x and y stay in registers, c is read from memory (with c in registers too, the vectors would
 *     not fit 16 ymm registers and the spills would land on the chains);
 *   - the loop does no escape test at all: per step 4 multiplies (x*x, y*y, 2*x, (2x)*y) and 3
 *     adds ((x*x - y*y) + cx, (2x)*y + cy). Once per block of SBV_K steps, |z|^2 of the block's
 *     last step (one add) is compared with SBV_SETTLE_R2 = 2.5: a lane that left |z|^2 <= 4 at any
 *     step of the block is above it then. Exactly: with |c| <= 2, |z| > 2 gives |z'| >= |z|^2 -
 *     |c| > 2, so an escaped orbit stays outside the disc; with |c| > 2 the orbit escapes at its
 *     first step, z1 = c, and |z| >= |c| from then on. In doubles, an orbit that escaped by less
 *     than the rounding (|z| within ~1e-15 of 2) may fall back inside, but a step moves a
 *     deviation from |z| = 2 by at most 2|z| ~ 4 times, so within the block it stays below
 *     4^(SBV_K-1) x ~3e-15 ~ 0.2 for SBV_K = 24: |z| > 1.8, |z|^2 > 3.2 > 2.5. Overflow gives inf
 *     or NaN, which fail the test too. A NaN c never enters a lane: pixels with an infinite or NaN
 *     c are counted by the scalar reference;
 *   - a flagged lane is settled from the x and y it had at the block's start (stored once per
 *     block): the reference's own steps, scalar, find the exact escape step or show that it did
 *     not escape (|z|^2 in (2.5, 4]: it goes on). Lanes whose pixel ended are refilled with the
 * next pixel of the row right after the block (x, y zeroed by a lane mask, so they never leave the
 *     registers); lanes with no pixel left run c = 0 (never escapes).
 * Measured on Zen 3: docs/simd-bounds.md.
 */
#ifndef SBV_COUNT_SCALAR_DEFINED /* once per translation unit, whatever the instruction sets */
#define SBV_COUNT_SCALAR_DEFINED
/* the reference count, out of line: rare (c not finite), kept out of the vector loop's registers */
static __attribute__((noinline, cold)) uint32_t sbv_count_scalar(double cx, double cy,
                                                                 int32_t max_iter) {
    return sb_mandel_count(cx, cy, max_iter);
}
#endif
#ifndef SBV_NV
#define SBV_NV 6
#endif
#ifndef SBV_K
#define SBV_K 24 /* steps per block */
#endif
_Static_assert(SBV_K <= 24, "the block test's margin (see the top) holds for at most 24 steps");
#ifndef SBV_OPAQUE /* hides a value from the optimiser (an includer may emulate SBV_T as a struct) \
                    */
#define SBV_OPAQUE(x) __asm__("" : "+v"(x))
#endif
#ifndef SBV_SETTLE_R2
#define SBV_SETTLE_R2 2.5 /* the margin: see the top */
#endif
#define SBV_L (SBV_NV * SBV_W)
_Static_assert(SBV_L <= 64, "lane flags are a uint64_t");
#define SBV_CAT2(a, b) a##b
#define SBV_CAT(a, b) SBV_CAT2(a, b)
#define SBV_LANES SBV_CAT(SBV_FN, _lanes)
#define SBV_SETTLE SBV_CAT(SBV_FN, _settle)
#define SBV_ESCAPE SBV_CAT(SBV_FN, _escape)

/* The row's lanes between blocks (x and y live in vector registers in SBV_FN). */
struct SBV_LANES {
    _Alignas(64) double cxs[SBV_L], cys[SBV_L];
    _Alignas(64) double xs[SBV_L], ys[SBV_L]; /* x and y at the start of the block */
    int32_t pix[SBV_L];                       /* pixel in the lane, -1 = none */
    int64_t ends[SBV_L];                      /* step count at which the pixel reaches max_iter */
    int64_t deadline;                         /* the earliest ends[l] */
    double x0, dx, cy;
    uint32_t *row_out;
    int32_t next, active, width, max_iter;
};

/* Lane l takes the next pixel of the row whose c is finite, starting at step t; a pixel with an
 * infinite or NaN c is counted by the reference right here (the block test relies on c finite). */
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

/* The first of the next n steps (n <= SBV_K) at which the reference's test |z|^2 <= 4 fails from
 * (x, y), or INT64_MAX: the reference's operations, so the same values as the vector lane's. */
static inline __attribute__((always_inline)) int64_t SBV_ESCAPE(double x, double y, double cx,
                                                                double cy, int64_t n) {
    for (int64_t s = 0; s < n; s++) {
        const double xx = x * x, yy = y * y;
        if (!(xx + yy <= 4.0))
            return s;
        y = ((2.0 * x) * y) + cy;
        x = (xx - yy) + cx;
    }
    return INT64_MAX;
}

/* After the block of steps [t, t + SBV_K): write the count of every lane in `flags` that escaped
 * and of every lane at max_iter; refill those with pixels that start at step t + SBV_K. Returns
 * the lanes refilled (their x, y must restart at 0). Inlined: a call would make the caller spill
 * x and y (the ABI saves no vector register) and stall every chain on the reload. */
static inline __attribute__((always_inline)) uint64_t
SBV_SETTLE(struct SBV_LANES *st, uint64_t flags, int64_t t, uint32_t *row_out) {
    const int32_t max_iter = st->max_iter;
    uint64_t due = 0;
    if (t + SBV_K >= st->deadline)
        for (int l = 0; l < SBV_L; l++)
            due |= (uint64_t)(st->ends[l] <= t + SBV_K) << l;
    uint64_t refilled = 0;
    for (uint64_t lanes = flags | due; lanes; lanes &= lanes - 1) {
        const int l = __builtin_ctzll(lanes);
        if (st->pix[l] < 0)
            continue;
        const int64_t done = t - (st->ends[l] - max_iter); /* steps before this block */
        const int64_t left = max_iter - done;              /* steps the reference may still take */
        const int64_t esc = (flags >> l & 1) ? SBV_ESCAPE(st->xs[l], st->ys[l], st->cxs[l],
                                                          st->cys[l], left < SBV_K ? left : SBV_K)
                                             : INT64_MAX;
        uint32_t count;
        if (esc < left)
            count = (uint32_t)(done + esc);
        else if (left <= SBV_K)
            count = (uint32_t)max_iter;
        else
            continue; /* |z|^2 in (SBV_SETTLE_R2, 4]: the reference goes on */
        row_out[st->pix[l]] = count;
        st->active--;
        SBV_CAT(SBV_FN, _put)(st, l, t + SBV_K);
        refilled |= UINT64_C(1) << l;
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
    const SBV_T bound = SBV_SET1(SBV_SETTLE_R2);
    SBV_T two = SBV_SET1(2.0);
    /* opaque to the compiler: it would turn 2.0*x into x+x (exact too), moving a multiply onto the
     * add pipes; this way 4 multiplies and 3 adds, one more on the multiply pipes */
    SBV_OPAQUE(two);
    SBV_T X[SBV_NV], Y[SBV_NV];
#pragma GCC unroll 8
    for (int v = 0; v < SBV_NV; v++)
        X[v] = Y[v] = SBV_SET1(0.0);
    for (int64_t t = 0; st.active > 0; t += SBV_K) {
#pragma GCC unroll 8
        for (int v = 0; v < SBV_NV; v++) {
            SBV_STORE(st.xs + v * SBV_W, X[v]);
            SBV_STORE(st.ys + v * SBV_W, Y[v]);
        }
        for (int s = 0; s < SBV_K - 1; s++) { /* all but the block's last step, which also tests */
#pragma GCC unroll 8
            for (int v = 0; v < SBV_NV; v++) {
                const SBV_T xx = SBV_MUL(X[v], X[v]);
                const SBV_T yy = SBV_MUL(Y[v], Y[v]);
                /* y first: then x's register can take the new x, no register copy */
                Y[v] = SBV_ADD(SBV_MUL(SBV_MUL(two, X[v]), Y[v]), SBV_LOAD(st.cys + v * SBV_W));
                X[v] = SBV_ADD(SBV_SUB(xx, yy), SBV_LOAD(st.cxs + v * SBV_W));
            }
        }
        uint64_t flags = 0;
#pragma GCC unroll 8
        for (int v = 0; v < SBV_NV; v++) { /* the block's last step, and the test on its |z|^2 */
            const SBV_T xx = SBV_MUL(X[v], X[v]);
            const SBV_T yy = SBV_MUL(Y[v], Y[v]);
            flags |= (uint64_t)(unsigned)SBV_NOT_LE(SBV_ADD(xx, yy), bound) << (v * SBV_W);
            Y[v] = SBV_ADD(SBV_MUL(SBV_MUL(two, X[v]), Y[v]), SBV_LOAD(st.cys + v * SBV_W));
            X[v] = SBV_ADD(SBV_SUB(xx, yy), SBV_LOAD(st.cxs + v * SBV_W));
        }
        if (flags || t + SBV_K >= st.deadline) {
            const uint64_t refilled = SBV_SETTLE(&st, flags, t, row_out);
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
#undef SBV_ESCAPE
#undef SBV_SETTLE_R2
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
#undef SBV_NOT_LE
#undef SBV_ZERO_LANES
