/*
 * Test only: the shared Mandelbrot body (kernels/common/sb_mandel_simd_body.h) instantiated with 8
 * lanes, each vector emulated by two AVX2 vectors, so the 8-lane logic the AVX-512 path runs (lane
 * flags of 6 vectors in one 64-bit word, the block test, lane masks, the vector refill) is checked
 * against the reference on every AVX2 machine. The operations per lane are the AVX-512 path's; only
 * the vector width is emulated.
 */
#ifndef SB_MANDEL_EMU8_H
#define SB_MANDEL_EMU8_H

#include "sb_mandelbrot.h"
#include "sb_simd.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define SB_HAVE_EMU8 1
#include <immintrin.h>
#include <stdint.h>

#define EMU8 __attribute__((target("avx2")))
typedef struct {
    __m256d lo, hi;
} v8;
static inline EMU8 v8 v8_load(const double *p) {
    v8 r = {_mm256_load_pd(p), _mm256_load_pd(p + 4)};
    return r;
}
static inline EMU8 void v8_store(double *p, v8 a) {
    _mm256_store_pd(p, a.lo);
    _mm256_store_pd(p + 4, a.hi);
}
static inline EMU8 v8 v8_set1(double x) {
    v8 r = {_mm256_set1_pd(x), _mm256_set1_pd(x)};
    return r;
}
#define OP2(name, f)                                                                               \
    static inline EMU8 v8 name(v8 a, v8 b) {                                                       \
        v8 r = {f(a.lo, b.lo), f(a.hi, b.hi)};                                                     \
        return r;                                                                                  \
    }
OP2(v8_add, _mm256_add_pd)
OP2(v8_sub, _mm256_sub_pd)
OP2(v8_mul, _mm256_mul_pd)
#define emu8_cmp_nle(a, b) _mm256_cmp_pd(a, b, _CMP_NLE_UQ)
#define emu8_cmp_le(a, b) _mm256_cmp_pd(a, b, _CMP_LE_OQ)
static inline EMU8 int v8_not_le(v8 r, v8 bound) {
    return _mm256_movemask_pd(_mm256_cmp_pd(r.lo, bound.lo, _CMP_NLE_UQ)) |
           _mm256_movemask_pd(_mm256_cmp_pd(r.hi, bound.hi, _CMP_NLE_UQ)) << 4;
}
OP2(v8_cmp_nle, emu8_cmp_nle)
OP2(v8_cmp_le, emu8_cmp_le)
OP2(v8_or, _mm256_or_pd)
OP2(v8_andnot, _mm256_andnot_pd)
static inline EMU8 int v8_bits(v8 m) {
    return _mm256_movemask_pd(m.lo) | _mm256_movemask_pd(m.hi) << 4;
}
OP2(v8_min, _mm256_min_pd)
static inline EMU8 double v8_hmin(v8 a) {
    const __m256d m = _mm256_min_pd(a.lo, a.hi);
    const __m128d h = _mm_min_pd(_mm256_castpd256_pd128(m), _mm256_extractf128_pd(m, 1));
    return _mm_cvtsd_f64(_mm_min_sd(h, _mm_unpackhi_pd(h, h)));
}
static inline EMU8 v8 v8_blend(v8 a, v8 b, v8 m) {
    v8 r = {_mm256_blendv_pd(a.lo, b.lo, m.lo), _mm256_blendv_pd(a.hi, b.hi, m.hi)};
    return r;
}
#define SBV_FN sb_mandel_row_emu8
#include "sb_mandel_emu8_params.h"
#include "sb_mandel_simd_body.h"
/* The same with the "surely ended" test at |z|^2 > 1e300 instead of > 4: escaped lanes then go
 * through the bookkeeping's scalar replay and are refilled one block late, a path the reference
 * bound reaches only through roundings no test region is known to produce. */
#define SBV_FN sb_mandel_row_emu8_late
#define SBV_SURE_R2 1e300
#include "sb_mandel_emu8_params.h"
#include "sb_mandel_simd_body.h"
#undef EMU8
#endif /* x86-64 */

#endif /* SB_MANDEL_EMU8_H */
