/*
 * Body of one vector Mandelbrot row kernel, included by sb_mandel_simd.c once per instruction set
 * with these macros defined:
 *   SBV_FN name, SBV_TARGET function attribute, SBV W lanes per vector of type SBV_T,
 *   SBV_LOAD/STORE/SET1/ADD/SUB/MUL/MAX, SBV_FLAGS(acc, x, y, four) -> int, bit w set when lane w
 *   saw |z|^2 > 4 in the block (acc) or its x or y is NaN.
 *
 * Bit-identical to sb_mandel_count: every lane performs exactly the reference operations in the
 * reference order. For speed:
 *   - SBV_NV vectors are interleaved, because one step of one lane is a 9-cycle dependency chain;
 *   - the escape test runs once per block of SBV_K steps: each step stores |z|^2 and folds it into
 *     a running max (NaN never wins a max, so a NaN orbit is caught by its NaN x or y at the block
 *     end: NaN is absorbing); the exact escape step is then recovered from the stored |z|^2;
 *   - a lane whose pixel ended is refilled with the next pixel of the row right away; lanes with no
 *     pixel left run c = 0, which never escapes.
 */
#ifndef SBV_NV
#define SBV_NV 5
#endif
#ifndef SBV_K
#define SBV_K 16 /* at most 32: the escape bits of a block fit a uint32_t */
#endif
#define SBV_L (SBV_NV * SBV_W)

SBV_TARGET void SBV_FN(const sb_params *p, int32_t j, uint32_t *row_out) {
    const double x0 = p->region[0], x1 = p->region[1], y0 = p->region[2], y1 = p->region[3];
    const double dx = (x1 - x0) / p->width;
    const double dy = (y1 - y0) / p->height;
    const double cy = y1 - (j + 0.5) * dy;
    const int32_t width = p->width, max_iter = p->max_iter;
    if (max_iter <= 0) {
        for (int32_t i = 0; i < width; i++)
            row_out[i] = 0;
        return;
    }
    _Alignas(64) double xs[SBV_L], ys[SBV_L], cxs[SBV_L], cys[SBV_L];
    _Alignas(64) double rbuf[SBV_K][SBV_L]; /* |z|^2 before each step of the block */
    int32_t pix[SBV_L];                     /* pixel in the lane, -1 = none */
    int64_t start[SBV_L];                   /* block step count T at which the pixel started */
    int32_t next = 0, active = 0;
    for (int l = 0; l < SBV_L; l++) {
        xs[l] = ys[l] = 0.0;
        start[l] = 0;
        if (next < width) {
            pix[l] = next;
            cxs[l] = x0 + (next + 0.5) * dx;
            cys[l] = cy;
            next++;
            active++;
        } else {
            pix[l] = -1;
            cxs[l] = cys[l] = 0.0;
        }
    }
    const SBV_T four = SBV_SET1(4.0);
    SBV_T two = SBV_SET1(2.0);
    /* opaque to the compiler: it would turn 2.0*x into x+x (exact too), moving a multiply onto the
     * add pipes, which are the bottleneck */
    __asm__("" : "+v"(two));
    SBV_T X[SBV_NV], Y[SBV_NV], CX[SBV_NV], CY[SBV_NV];
    for (int v = 0; v < SBV_NV; v++) {
        X[v] = SBV_LOAD(xs + v * SBV_W);
        Y[v] = SBV_LOAD(ys + v * SBV_W);
        CX[v] = SBV_LOAD(cxs + v * SBV_W);
        CY[v] = SBV_LOAD(cys + v * SBV_W);
    }
    int64_t T = 0;                        /* steps every lane has done so far */
    int64_t deadline = (int64_t)max_iter; /* lower bound of the earliest start[l] + max_iter */
    while (active > 0) {
        SBV_T ACC[SBV_NV];
#pragma GCC unroll 8
        for (int v = 0; v < SBV_NV; v++)
            ACC[v] = SBV_SET1(0.0);
        for (int s = 0; s < SBV_K; s++) {
#pragma GCC unroll 8
            for (int v = 0; v < SBV_NV; v++) {
                const SBV_T xx = SBV_MUL(X[v], X[v]);
                const SBV_T yy = SBV_MUL(Y[v], Y[v]);
                const SBV_T r = SBV_ADD(xx, yy);
                SBV_STORE(rbuf[s] + v * SBV_W, r);
                ACC[v] = SBV_MAX(r, ACC[v]);
                const SBV_T xt = SBV_ADD(SBV_SUB(xx, yy), CX[v]);
                Y[v] = SBV_ADD(SBV_MUL(SBV_MUL(two, X[v]), Y[v]), CY[v]);
                X[v] = xt;
            }
        }
        const int at_deadline = T + SBV_K >= deadline;
        int refilled = 0;
        for (int v = 0; v < SBV_NV; v++) {
            int flags = SBV_FLAGS(ACC[v], X[v], Y[v], four);
            if (at_deadline)
                flags = (1 << SBV_W) - 1;
            if (!flags)
                continue;
            SBV_STORE(xs + v * SBV_W, X[v]);
            SBV_STORE(ys + v * SBV_W, Y[v]);
            /* bit s of escaped[w]: lane w had !(|z|^2 <= 4) before step s of the block */
            uint32_t escaped[SBV_W] = {0};
            for (int s = 0; s < SBV_K; s++) {
                const uint32_t m = (uint32_t)SBV_NOT_LE(SBV_LOAD(rbuf[s] + v * SBV_W), four);
                for (int w = 0; w < SBV_W; w++)
                    escaped[w] |= (m >> w & 1u) << s;
            }
            for (unsigned todo = (unsigned)flags; todo; todo &= todo - 1) {
                const int w = __builtin_ctz(todo);
                const int l = v * SBV_W + w;
                if (pix[l] < 0)
                    continue;
                const int64_t done = T - start[l];    /* steps before this block */
                const int64_t left = max_iter - done; /* steps the reference may still take */
                const int64_t esc = escaped[w] ? __builtin_ctz(escaped[w]) : -1;
                uint32_t count;
                if (esc >= 0 && esc < left)
                    count = (uint32_t)(done + esc);
                else if (left <= SBV_K)
                    count = (uint32_t)max_iter;
                else
                    continue; /* NaN appeared after the last stored |z|^2: caught next block */
                row_out[pix[l]] = count;
                xs[l] = ys[l] = 0.0;
                start[l] = T + SBV_K;
                if (next < width) {
                    pix[l] = next;
                    cxs[l] = x0 + (next + 0.5) * dx;
                    next++;
                } else {
                    pix[l] = -1;
                    cxs[l] = cys[l] = 0.0;
                    active--;
                }
                refilled = 1;
            }
            X[v] = SBV_LOAD(xs + v * SBV_W);
            Y[v] = SBV_LOAD(ys + v * SBV_W);
            CX[v] = SBV_LOAD(cxs + v * SBV_W);
            CY[v] = SBV_LOAD(cys + v * SBV_W);
        }
        T += SBV_K;
        if (at_deadline || refilled) {
            deadline = INT64_MAX;
            for (int l = 0; l < SBV_L; l++)
                if (pix[l] >= 0 && start[l] + max_iter < deadline)
                    deadline = start[l] + max_iter;
        }
    }
}

#undef SBV_NV
#undef SBV_K
#undef SBV_L
