/*
 * Vector Mandelbrot row kernels for --inner simd: AVX2 (4 lanes) and AVX-512 (8 lanes), both
 * compiled on every x86-64 machine (function target attributes) and called only where the CPU has
 * them (sb_cpu.c). The kernel body is shared: sb_mandel_simd_body.h. Built -ffp-contract=off: with
 * contraction GCC would fuse the multiplies and adds into FMA and break bit-identity.
 */
#include "sb_mandelbrot.h"
#include "sb_simd.h"

#include <stddef.h>
#include <stdint.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

static inline __attribute__((target("avx2"))) double sbv_hmin_avx2(__m256d v) {
    __m128d m = _mm_min_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
    return _mm_cvtsd_f64(_mm_min_sd(m, _mm_unpackhi_pd(m, m)));
}

/* ---- AVX2
 * ---------------------------------------------------------------------------------------- */
#define SBV_FN sb_mandel_row_avx2
#define SBV_NV SB_MANDEL_AVX2_VECTORS
#define SBV_TARGET __attribute__((target("avx2")))
#define SBV_W 4
#define SBV_T __m256d
#define SBV_LOAD _mm256_load_pd
#define SBV_STORE _mm256_store_pd
#define SBV_SET1 _mm256_set1_pd
#define SBV_ADD _mm256_add_pd
#define SBV_SUB _mm256_sub_pd
#define SBV_MUL _mm256_mul_pd
#define SBV_NOT_LE(r, bound) _mm256_movemask_pd(_mm256_cmp_pd(r, bound, _CMP_NLE_UQ))
#define SBV_M __m256d
#define SBV_M_NLE(a, b) _mm256_cmp_pd(a, b, _CMP_NLE_UQ)
#define SBV_M_LE(a, b) _mm256_cmp_pd(a, b, _CMP_LE_OQ)
#define SBV_M_OR _mm256_or_pd
#define SBV_M_BITS _mm256_movemask_pd
#define SBV_M_ZERO(x, m) _mm256_andnot_pd(m, x)
#define SBV_M_BLEND _mm256_blendv_pd
#define SBV_MIN _mm256_min_pd
#define SBV_HMIN sbv_hmin_avx2
#include "sb_mandel_simd_body.h"

/* ---- AVX-512
 * ------------------------------------------------------------------------------------- */
#define SBV_FN sb_mandel_row_avx512
#define SBV_NV SB_MANDEL_AVX512_VECTORS
#define SBV_XADD SB_MANDEL_AVX512_XADD
#define SBV_TARGET __attribute__((target("avx512f,avx512dq")))
#define SBV_W 8
#define SBV_T __m512d
#define SBV_LOAD _mm512_load_pd
#define SBV_STORE _mm512_store_pd
#define SBV_SET1 _mm512_set1_pd
#define SBV_ADD _mm512_add_pd
#define SBV_SUB _mm512_sub_pd
#define SBV_MUL _mm512_mul_pd
#define SBV_NOT_LE(r, bound) ((int)_mm512_cmp_pd_mask(r, bound, _CMP_NLE_UQ))
#define SBV_M __mmask8
#define SBV_M_NLE(a, b) _mm512_cmp_pd_mask(a, b, _CMP_NLE_UQ)
#define SBV_M_LE(a, b) _mm512_cmp_pd_mask(a, b, _CMP_LE_OQ)
#define SBV_M_OR(m1, m2) ((__mmask8)((m1) | (m2)))
#define SBV_M_BITS(m) ((int)(m))
#define SBV_M_ZERO(x, m) _mm512_maskz_mov_pd((__mmask8) ~(m), x)
#define SBV_M_BLEND(a, b, m) _mm512_mask_blend_pd(m, a, b)
#define SBV_MIN _mm512_min_pd
#define SBV_HMIN _mm512_reduce_min_pd
#include "sb_mandel_simd_body.h"

#else /* not x86-64: never selected (sb_cpu_supports_path), defined so every build links */
void sb_mandel_row_avx2(const sb_params *p, int32_t j, uint32_t *row_out) {
    sb_mandel_row(p, j, row_out);
}
void sb_mandel_row_avx512(const sb_params *p, int32_t j, uint32_t *row_out) {
    sb_mandel_row(p, j, row_out);
}
#endif
