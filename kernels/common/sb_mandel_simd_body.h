/*
 * Body of one vector Mandelbrot row kernel, included by sb_mandel_simd.c once per instruction set
 * with these macros defined:
 *   SBV_FN name, SBV_TARGET function attribute, SBV_W lanes per vector of type SBV_T,
 *   SBV_LOAD/STORE/SET1/ADD/SUB/MUL;
 *   SBV_NOT_LE(r, bound) -> int: bit w set when !(r <= bound) in lane w (NaN included);
 *   lane masks of type SBV_M: SBV_M_NLE(a, b) (!(a <= b), NaN included), SBV_M_LE(a, b) (a <= b),
 *   SBV_M_OR(m1, m2), SBV_M_BITS(m) -> int (bit w = lane w), SBV_M_ZERO(x, m) (x with the lanes
 *   of m zeroed), SBV_M_BLEND(a, b, m) (b in the lanes of m, a elsewhere);
 *   SBV_MIN(a, b) lane-wise minimum and SBV_HMIN(a) -> double, the least lane (no NaN involved).
 *
 * Bit-identical to sb_mandel_count: every lane performs exactly the reference operations in the
 * reference order. For speed:
 *   - SBV_NV vectors are interleaved, because one step of one lane is a 9-cycle dependency chain;
 *     x and y stay in registers, c is read from memory (with c in registers too, the vectors would
 *     not fit 16 ymm registers and the spills would land on the chains);
 *   - the loop does no escape test at all: per step 4 multiplies (x*x, y*y, 2*x, (2x)*y) and 3
 *     adds ((x*x - y*y) + cx, (2x)*y + cy). Once per block of SBV_K steps, |z|^2 of the block's
 *     last step (one add) is compared with 4 (the reference's own test: the pixel surely stopped
 *     in this block) and with SBV_SETTLE_R2 = 2.5: a lane that left |z|^2 <= 4 at any step of the
 *     block is above 2.5 then. Exactly: with |c| <= 2, |z| > 2 gives |z'| >= |z|^2 - |c| > 2, so
 *     an escaped orbit stays outside the disc; with |c| > 2 the orbit escapes at its first step,
 *     z1 = c, and |z| >= |c| from then on. In doubles, an orbit that escaped by less than the
 *     rounding (|z| within ~1e-15 of 2) may fall back inside, but a step moves a deviation from
 *     |z| = 2 by at most 2|z| ~ 4 times, so within the block it stays below 4^(SBV_K-1) x ~3e-15
 *     ~ 0.2 for SBV_K = 24: |z| > 1.8, |z|^2 > 3.2 > 2.5. Overflow gives inf or NaN, which fail
 *     both tests. A NaN c never enters a lane: pixels with an infinite or NaN c are counted by the
 *     scalar reference;
 *   - the block's end does not wait for any scalar code: a lane whose pixel surely ended (|z|^2 >
 *     4, or max_iter reached within the block) is refilled right there by vector masks: x and y
 *     zeroed, c and the step at which the new pixel reaches max_iter blended in from the lane's
 *     next pixel, prepared beforehand. The scalar bookkeeping of a block (which pixel ended with
 *     which count, the next pixel of each refilled lane) runs in the middle of the following
 *     block, where its branches (hard to predict) find a queue of independent vector work to hide
 *     behind, instead of stalling every chain at the block's end;
 *   - the exact escape step of a lane that ended flagged is found later, for many lanes at once
 *     (SBV_REPLAY: the reference's steps from the x and y stored at that block's start, several
 *     vectors interleaved) instead of one scalar chain per lane. A lane flagged but not surely
 *     ended (|z|^2 in (2.5, 4], rare) is replayed in the bookkeeping, scalar: if it escaped, its
 *     count is written and the lane is made to end at the next block's end.
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
#ifndef SBV_H
#define SBV_H (SBV_K / 2) /* the step of a block after which the previous block is settled */
#endif
#ifndef SBV_OPAQUE /* hides a value from the optimiser (an includer may emulate SBV_T as a struct) \
                    */
#define SBV_OPAQUE(x) __asm__("" : "+v"(x))
#endif
#ifndef SBV_SETTLE_R2
#define SBV_SETTLE_R2 2.5 /* the margin: see the top */
#endif
/* Above this, a lane surely stopped in the block: the reference's own bound 4 (any value >= 4 is
 * correct, a higher one sends more lanes through the scalar replay; tests use that) */
#ifndef SBV_SURE_R2
#define SBV_SURE_R2 4.0
#endif
#define SBV_L (SBV_NV * SBV_W)
/* after this the compiler no longer knows where ptr points */
#define SBV_LAUNDER(ptr) __asm__("" : "+r"(ptr))
/* 2*x is computed as x+x (the same double, exactly) on every SBV_XADD-th vector, 0 = none: where
   multiplies and adds go to separate pipe pairs (Zen 4 and 5), 4 multiplies and 3 adds per step
   keep the multiply pipes busier than the add pipes; on every second vector x+x evens them out
   (docs/simd-bounds.md). */
#ifndef SBV_XADD
#define SBV_XADD 0
#endif
#define SBV_TWICE_BY_ADD(v) (SBV_XADD > 0 && (v) % (SBV_XADD > 0 ? SBV_XADD : 1) == 0)
/* One step of every vector: 4 multiplies and 3 adds each (or 3 and 4, see SBV_XADD). y first: then
   x's register can take the new x, no register copy. */
#define SBV_STEP_ALL()                                                                             \
    do {                                                                                           \
        SBV_LAUNDER(cxp);                                                                          \
        SBV_LAUNDER(cyp);                                                                          \
        _Pragma("GCC unroll 8") for (int v = 0; v < SBV_NV; v++) {                                 \
            const SBV_T xx = SBV_MUL(X[v], X[v]);                                                  \
            const SBV_T yy = SBV_MUL(Y[v], Y[v]);                                                  \
            const SBV_T x2 = SBV_TWICE_BY_ADD(v) ? SBV_ADD(X[v], X[v]) : SBV_MUL(two, X[v]);       \
            Y[v] = SBV_ADD(SBV_MUL(x2, Y[v]), SBV_LOAD(cyp + v * SBV_W));                          \
            X[v] = SBV_ADD(SBV_SUB(xx, yy), SBV_LOAD(cxp + v * SBV_W));                            \
        }                                                                                          \
    } while (0)
_Static_assert(SBV_L <= 64, "lane flags are a uint64_t");
#ifndef SBV_PENDING
#define SBV_PENDING 256 /* ended lanes whose exact escape step is found later, all together */
#endif
#define SBV_RV 4 /* vectors interleaved when the pending lanes are replayed */
_Static_assert(SBV_PENDING >= SBV_L + SBV_RV * SBV_W && SBV_PENDING % (SBV_RV * SBV_W) == 0,
               "a settle adds at most SBV_L pending lanes; the replay takes whole groups");
#define SBV_CAT2(a, b) a##b
#define SBV_CAT(a, b) SBV_CAT2(a, b)
#define SBV_LANES SBV_CAT(SBV_FN, _lanes)
#define SBV_SETTLE SBV_CAT(SBV_FN, _settle)
#define SBV_ESCAPE SBV_CAT(SBV_FN, _escape)
#define SBV_REPLAY SBV_CAT(SBV_FN, _replay)
#define SBV_PUT SBV_CAT(SBV_FN, _put)
#define SBV_TAKE SBV_CAT(SBV_FN, _take)

/* The row's lanes (x and y live in vector registers in SBV_FN). */
struct SBV_LANES {
    /* read and written by the vector code */
    _Alignas(64) double cxs[SBV_L], cys[SBV_L];   /* c of the pixel each lane runs */
    _Alignas(64) double ncxs[SBV_L], ncys[SBV_L]; /* c of the lane's next pixel (0: none) */
    _Alignas(64) double ends[SBV_L]; /* step at which the lane's pixel reaches max_iter */
    _Alignas(64) double xs[2][SBV_L], ys[2][SBV_L]; /* x and y at the start of the last 2 blocks */
    _Alignas(64) double r2s[SBV_L];                 /* |z|^2 tested at the last block's end */
    double deadline; /* at most the earliest of ends (the refill's vector min; 0 from the
                        bookkeeping when it makes a lane due) */
    /* the scalar bookkeeping's view, brought up to date half a block late */
    int32_t pix[SBV_L];   /* pixel in the lane, -1 = none, -2 = counted, not yet refilled */
    int32_t npix[SBV_L];  /* the lane's next pixel (in ncxs, ncys), -1 = none */
    int64_t start[SBV_L]; /* step at which pix started */
    double pcx[SBV_L], pcy[SBV_L]; /* c of pix */
    uint64_t ended, flags;         /* of the last block: lanes refilled at its end; |z|^2 > 2.5 */
    double x0, dx, cy;
    uint32_t *row_out;
    int32_t next, active, width, max_iter;
    /* lanes that ended flagged, their count still to find: SBV_REPLAY */
    _Alignas(64) double pxs[SBV_PENDING], pys[SBV_PENDING], pcxs[SBV_PENDING], pcys[SBV_PENDING];
    int64_t pdone[SBV_PENDING]; /* steps the pixel took before that block */
    int32_t ppix[SBV_PENDING];
    int32_t npending;
};

/* Lane l's next pixel: the next of the row whose c is finite (a pixel with an infinite or NaN c is
 * counted by the reference right here: the block test relies on c finite), or none (c = 0, which
 * never escapes). */
static inline __attribute__((always_inline)) void SBV_PUT(struct SBV_LANES *st, int l) {
    for (; st->next < st->width; st->next++) {
        const double cx = st->x0 + (st->next + 0.5) * st->dx;
        if (__builtin_isfinite(cx) && __builtin_isfinite(st->cy)) {
            st->npix[l] = st->next++;
            st->ncxs[l] = cx;
            st->ncys[l] = st->cy;
            return;
        }
        st->row_out[st->next] = sbv_count_scalar(cx, st->cy, st->max_iter);
    }
    st->npix[l] = -1;
    st->ncxs[l] = st->ncys[l] = 0.0;
}

/* The bookkeeping of lane l's refill at step t (the vector code has already switched the lane to
 * its next pixel): that pixel becomes the lane's, and the one after it is prepared. */
static inline __attribute__((always_inline)) void SBV_TAKE(struct SBV_LANES *st, int l, int64_t t) {
    st->pix[l] = st->npix[l];
    st->pcx[l] = st->ncxs[l];
    st->pcy[l] = st->ncys[l];
    st->start[l] = t;
    st->active += st->pix[l] >= 0;
    SBV_PUT(st, l);
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

/* Writes the count of every pending lane: the first step whose test |z|^2 <= 4 fails, within the
 * block, from the x and y at the block's start, vector by vector with the reference's operations,
 * is the one the reference stops at, unless the pixel reaches max_iter first (or does not fail
 * within the block: then it reached max_iter in it, or it would not have ended). Not inlined: the
 * block loop's registers are saved around the call, which comes once per ~SBV_PENDING escapes. */
static SBV_TARGET __attribute__((noinline)) void SBV_REPLAY(struct SBV_LANES *st) {
    enum { G = SBV_RV * SBV_W };
    const int32_t n = st->npending, max_iter = st->max_iter;
    for (int32_t i = n; i % G != 0; i++) /* padding: c = 0 from 0 never escapes */
        st->pxs[i] = st->pys[i] = st->pcxs[i] = st->pcys[i] = 0.0;
    const SBV_T four = SBV_SET1(4.0), two = SBV_SET1(2.0), never = SBV_SET1((double)SBV_K);
    for (int32_t base = 0; base < n; base += G) {
        SBV_T X[SBV_RV], Y[SBV_RV], E[SBV_RV]; /* E: the first step whose test failed, or SBV_K */
#pragma GCC unroll 8
        for (int v = 0; v < SBV_RV; v++) {
            X[v] = SBV_LOAD(st->pxs + base + v * SBV_W);
            Y[v] = SBV_LOAD(st->pys + base + v * SBV_W);
            E[v] = never;
        }
        const int32_t m = n - base < G ? n - base : G;
        uint64_t alive = m == 64 ? ~UINT64_C(0) : (UINT64_C(1) << m) - 1;
        /* no branch per lane: each lane's first failing step is kept in E, the loop ends when the
           last lane of the group has failed (or after SBV_K steps) */
        for (int s = 0; alive && s < SBV_K; s++) {
            uint64_t out = 0;
            const SBV_T step = SBV_SET1((double)s);
#pragma GCC unroll 8
            for (int v = 0; v < SBV_RV; v++) {
                const SBV_T xx = SBV_MUL(X[v], X[v]);
                const SBV_T yy = SBV_MUL(Y[v], Y[v]);
                const SBV_T r2 = SBV_ADD(xx, yy);
                out |= (uint64_t)(unsigned)SBV_NOT_LE(r2, four) << (v * SBV_W);
                E[v] = SBV_MIN(E[v], SBV_M_BLEND(never, step, SBV_M_NLE(r2, four)));
                Y[v] = SBV_ADD(SBV_MUL(SBV_MUL(two, X[v]), Y[v]),
                               SBV_LOAD(st->pcys + base + v * SBV_W));
                X[v] = SBV_ADD(SBV_SUB(xx, yy), SBV_LOAD(st->pcxs + base + v * SBV_W));
            }
            alive &= ~out;
        }
        _Alignas(64) double e[G];
#pragma GCC unroll 8
        for (int v = 0; v < SBV_RV; v++)
            SBV_STORE(e + v * SBV_W, E[v]);
        for (int32_t k = 0; k < m; k++) {
            const int32_t i = base + k;
            const int64_t left = max_iter - st->pdone[i], s = (int64_t)e[k];
            /* a lane that did not fail within the block reached max_iter in it */
            st->row_out[st->ppix[i]] =
                s < SBV_K && s < left ? (uint32_t)(st->pdone[i] + s) : (uint32_t)max_iter;
        }
    }
    st->npending = 0;
}

/* The bookkeeping of the block of steps [t, t + SBV_K), whose start x and y are in xs[par],
 * ys[par]: the count of every lane refilled at its end (written now, or pending), those lanes'
 * next pixels, and the flagged lanes that were not refilled (scalar replay: if one escaped, its
 * count is written and it is made due, so the vector code refills it at the next block's end).
 * Inlined: a call would make the caller spill x and y (the ABI saves no vector register). */
static inline __attribute__((always_inline)) void SBV_SETTLE(struct SBV_LANES *st, int64_t t,
                                                             int par) {
    const int32_t max_iter = st->max_iter;
    const uint64_t ended = st->ended, flags = st->flags;
    st->ended = st->flags = 0;
    for (uint64_t lanes = ended | flags; lanes; lanes &= lanes - 1) {
        const int l = __builtin_ctzll(lanes);
        const int32_t pix = st->pix[l];
        const int64_t done = t - st->start[l]; /* steps before this block */
        if (!(ended >> l & 1)) {               /* flagged, |z|^2 in (2.5, 4], not due */
            if (pix >= 0) {
                const int64_t esc =
                    SBV_ESCAPE(st->xs[par][l], st->ys[par][l], st->pcx[l], st->pcy[l], SBV_K);
                if (esc < SBV_K) {
                    st->row_out[pix] = (uint32_t)(done + esc);
                    st->pix[l] = -2; /* counted; the lane still runs it until refilled */
                    st->ends[l] = st->deadline = 0.0; /* due at the next block's end */
                }
            }
            continue;
        }
        if (pix >= 0) {
            /* not flagged: due, no escape in the block, max_iter; flagged: pending, and the
             * replay overwrites the count. Written without a branch (escape or not is hard to
             * predict): the pending entry is written either way and kept if flagged. */
            const int32_t i = st->npending;
            st->pxs[i] = st->xs[par][l];
            st->pys[i] = st->ys[par][l];
            st->pcxs[i] = st->pcx[l];
            st->pcys[i] = st->pcy[l];
            st->pdone[i] = done;
            st->ppix[i] = pix;
            st->npending = i + (int32_t)(flags >> l & 1);
            st->row_out[pix] = (uint32_t)max_iter;
        }
        st->active -= pix != -1;
        SBV_TAKE(st, l, t + SBV_K);
    }
    if (st->npending > SBV_PENDING - SBV_L)
        SBV_REPLAY(st);
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
    st.next = st.active = st.npending = 0;
    st.ended = st.flags = 0;
    st.deadline = max_iter;
    for (int l = 0; l < SBV_L; l++) {
        SBV_PUT(&st, l);
        SBV_TAKE(&st, l, 0);
        st.cxs[l] = st.pcx[l];
        st.cys[l] = st.pcy[l];
        st.ends[l] = max_iter;
    }
    const SBV_T bound = SBV_SET1(SBV_SETTLE_R2);
    SBV_T two = SBV_SET1(2.0);
    /* opaque to the compiler: it would turn 2.0*x into x+x (exact too), moving a multiply onto the
     * add pipes; this way 4 multiplies and 3 adds, one more on the multiply pipes */
    SBV_OPAQUE(two);
    SBV_T X[SBV_NV], Y[SBV_NV];
#pragma GCC unroll 8
    for (int v = 0; v < SBV_NV; v++)
        X[v] = Y[v] = SBV_SET1(0.0);
    /* c is read from memory at every step: hoisted out of the step loops, it would spill */
    const double *cxp = st.cxs, *cyp = st.cys;
    int par = 0;
    for (int64_t t = 0; st.active > 0; t += SBV_K, par ^= 1) {
#pragma GCC unroll 8
        for (int v = 0; v < SBV_NV; v++) {
            SBV_STORE(st.xs[par] + v * SBV_W, X[v]);
            SBV_STORE(st.ys[par] + v * SBV_W, Y[v]);
        }
        for (int s = 0; s < SBV_H; s++)
            SBV_STEP_ALL();
        if (__builtin_expect((st.ended | st.flags) != 0, 0)) /* the previous block's bookkeeping */
            SBV_SETTLE(&st, t - SBV_K, par ^ 1);
        for (int s = SBV_H; s < SBV_K - 1; s++) /* all but the block's last step */
            SBV_STEP_ALL();
        uint64_t flags = 0;
        SBV_LAUNDER(cxp);
        SBV_LAUNDER(cyp);
#pragma GCC unroll 8
        for (int v = 0; v < SBV_NV; v++) { /* the block's last step, and the test on its |z|^2 */
            const SBV_T xx = SBV_MUL(X[v], X[v]);
            const SBV_T yy = SBV_MUL(Y[v], Y[v]);
            const SBV_T r2 = SBV_ADD(xx, yy);
            flags |= (uint64_t)(unsigned)SBV_NOT_LE(r2, bound) << (v * SBV_W);
            SBV_STORE(st.r2s + v * SBV_W, r2); /* for the refill; a register would spill */
            Y[v] = SBV_ADD(SBV_MUL(SBV_MUL(two, X[v]), Y[v]), SBV_LOAD(cyp + v * SBV_W));
            X[v] = SBV_ADD(SBV_SUB(xx, yy), SBV_LOAD(cxp + v * SBV_W));
        }
        if (flags || t + SBV_K >= st.deadline) {
            const SBV_T sure = SBV_SET1(SBV_SURE_R2), t_end = SBV_SET1((double)(t + SBV_K));
            const SBV_T t_due = SBV_SET1((double)(t + SBV_K + max_iter));
            uint64_t ended = 0;
            SBV_T due = t_due; /* the earliest step at which a lane reaches max_iter */
            double *cx = st.cxs, *cy = st.cys;
            SBV_LAUNDER(cx);
            SBV_LAUNDER(cy);
#pragma GCC unroll 8
            for (int v = 0; v < SBV_NV; v++) { /* the refills */
                /* surely ended: the reference's own test fails, or max_iter is reached */
                const SBV_M m = SBV_M_OR(SBV_M_NLE(SBV_LOAD(st.r2s + v * SBV_W), sure),
                                         SBV_M_LE(SBV_LOAD(st.ends + v * SBV_W), t_end));
                ended |= (uint64_t)(unsigned)SBV_M_BITS(m) << (v * SBV_W);
                X[v] = SBV_M_ZERO(X[v], m);
                Y[v] = SBV_M_ZERO(Y[v], m);
                SBV_STORE(cx + v * SBV_W,
                          SBV_M_BLEND(SBV_LOAD(cx + v * SBV_W), SBV_LOAD(st.ncxs + v * SBV_W), m));
                SBV_STORE(cy + v * SBV_W,
                          SBV_M_BLEND(SBV_LOAD(cy + v * SBV_W), SBV_LOAD(st.ncys + v * SBV_W), m));
                const SBV_T ends = SBV_M_BLEND(SBV_LOAD(st.ends + v * SBV_W), t_due, m);
                SBV_STORE(st.ends + v * SBV_W, ends);
                due = SBV_MIN(due, ends);
            }
            st.deadline = SBV_HMIN(due);
            st.ended = ended;
            st.flags = flags;
        }
    }
    if (st.npending)
        SBV_REPLAY(&st);
}

#undef SBV_NV
#undef SBV_XADD
#undef SBV_TWICE_BY_ADD
#undef SBV_K
#undef SBV_H
#undef SBV_L
#undef SBV_LAUNDER
#undef SBV_STEP_ALL
#undef SBV_LANES
#undef SBV_SETTLE
#undef SBV_ESCAPE
#undef SBV_REPLAY
#undef SBV_PUT
#undef SBV_TAKE
#undef SBV_RV
#undef SBV_PENDING
#undef SBV_SETTLE_R2
#undef SBV_SURE_R2
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
#undef SBV_M
#undef SBV_M_NLE
#undef SBV_M_LE
#undef SBV_M_OR
#undef SBV_M_BITS
#undef SBV_M_ZERO
#undef SBV_M_BLEND
#undef SBV_MIN
#undef SBV_HMIN
