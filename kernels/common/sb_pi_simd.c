/*
 * Vector π hit counts for --inner simd: SplitMix64 (sb_rng.h) in 64-bit lanes, AVX2 (4 lanes) and
 * AVX-512 (8 lanes), compiled on every x86-64 machine and called only where the CPU has them.
 *
 * Bit-identical to sb_pi_count_hits:
 *   - the generator is integer arithmetic modulo 2^64 (AVX2 has no 64-bit multiply: it is built
 *     from one 32x32->64 vpmuludq and one vpmulld for the cross terms, only needed modulo 2^32);
 *   - the top 53 bits a convert to a double exactly (a < 2^53);
 *   - the reference tests (a 2^-53)^2 + (b 2^-53)^2 < 1; scaling by a power of two is exact (no
 *     overflow or underflow here), so the same roundings give a^2 + b^2 < 2^106 without the
 * scaling.
 */
#include "sb_rng.h"
#include "sb_simd.h"

#include <stdint.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

#define AVX2 __attribute__((target("avx2")))
#define AVX512 __attribute__((target("avx512f,avx512dq")))

/* One operation on all NU vectors before the next: GCC keeps source order on x86 at -O2, and
 * with one chain after another the scheduler window would hold mostly ops waiting on the same
 * chain (a SplitMix64 output is a ~25-cycle dependency chain). */
#define EACH(i, n) _Pragma("GCC unroll 16") for (int i = 0; i < (n); i++)

AVX2 int64_t sb_pi_hits_avx2(uint64_t seed, int64_t begin, int64_t end) {
    /* NV vectors of samples, NU generator outputs; 4 vectors measured 8 % faster than 2 (more
     * independent chains in flight), 3, 5 and 6 slower than 4 */
    enum { LANES = 4, NV = 4, NU = 2 * NV };
    const uint64_t g = SB_SPLITMIX_GAMMA, c1v = UINT64_C(0xbf58476d1ce4e5b9),
                   c2v = UINT64_C(0x94d049bb133111eb);
    const __m256i c1 = _mm256_set1_epi64x((long long)c1v);
    const __m256i c1_swap = _mm256_set1_epi64x((long long)(c1v >> 32 | c1v << 32)); /* swapped */
    const __m256i c2 = _mm256_set1_epi64x((long long)c2v);
    const __m256i c2_swap = _mm256_set1_epi64x((long long)(c2v >> 32 | c2v << 32));
    const __m256i step = _mm256_set1_epi64x((long long)(2 * LANES * NV * g));
    const __m256i exp84 = _mm256_set1_epi64x(0x4530000000000000LL); /* 2^84 */
    const __m256i exp52 = _mm256_set1_epi64x(0x4330000000000000LL); /* 2^52 */
    const __m256i high32 = _mm256_set1_epi64x((long long)0xffffffff00000000ULL);
    const __m256d bias = _mm256_set1_pd(0x1.0p84 + 0x1.0p52);
    const __m256d limit = _mm256_set1_pd(0x1.0p106);
    int64_t k = begin;
    /* sample k reads generator inputs seed + (2k + 1) * gamma and seed + (2k + 2) * gamma */
    __m256i z[NU];
    z[0] = _mm256_setr_epi64x((long long)(seed + (2 * (uint64_t)k + 1) * g),
                              (long long)(seed + (2 * (uint64_t)k + 3) * g),
                              (long long)(seed + (2 * (uint64_t)k + 5) * g),
                              (long long)(seed + (2 * (uint64_t)k + 7) * g));
    z[1] = _mm256_add_epi64(z[0], _mm256_set1_epi64x((long long)g));
    for (int u = 2; u < NU; u++)
        z[u] = _mm256_add_epi64(z[u - 2], _mm256_set1_epi64x((long long)(2 * LANES * g)));
    __m256i count = _mm256_setzero_si256(); /* minus the number of hits per lane */
    for (; end - k >= LANES * NV; k += LANES * NV) {
        __m256i t[NU], lo[NU], cr[NU];
        __m256d d[NU];
        /* SplitMix64 mix. z * c modulo 2^64 per lane: lo(z)*lo(c) by vpmuludq; the cross terms
         * lo(z)*hi(c) and hi(z)*lo(c) only matter modulo 2^32, so one vpmulld against c with its
         * halves swapped gives both, in the low and high half of each lane; both go to the high
         * half (a shift and a mask: one shift fewer than adding the halves first, and the
         * shifts share two pipes) */
        EACH(u, NU) t[u] = _mm256_xor_si256(z[u], _mm256_srli_epi64(z[u], 30));
        EACH(u, NU) lo[u] = _mm256_mul_epu32(t[u], c1);
        EACH(u, NU) cr[u] = _mm256_mullo_epi32(t[u], c1_swap);
        EACH(u, NU) lo[u] = _mm256_add_epi64(lo[u], _mm256_and_si256(cr[u], high32));
        EACH(u, NU) t[u] = _mm256_add_epi64(lo[u], _mm256_slli_epi64(cr[u], 32));
        EACH(u, NU) t[u] = _mm256_xor_si256(t[u], _mm256_srli_epi64(t[u], 27));
        EACH(u, NU) lo[u] = _mm256_mul_epu32(t[u], c2);
        EACH(u, NU) cr[u] = _mm256_mullo_epi32(t[u], c2_swap);
        EACH(u, NU) lo[u] = _mm256_add_epi64(lo[u], _mm256_and_si256(cr[u], high32));
        EACH(u, NU) t[u] = _mm256_add_epi64(lo[u], _mm256_slli_epi64(cr[u], 32));
        EACH(u, NU) t[u] = _mm256_xor_si256(t[u], _mm256_srli_epi64(t[u], 31));
        /* exact double of the top 53 bits a: high 21 bits under exponent 2^84, low 32 bits
         * under exponent 2^52 (a blend puts them under it), (hi - 2^84 - 2^52) + lo is exact */
        EACH(u, NU) lo[u] = _mm256_blend_epi32(_mm256_srli_epi64(t[u], 11), exp52, 0xaa);
        EACH(u, NU) {
            const __m256i hi = _mm256_or_si256(_mm256_srli_epi64(t[u], 43), exp84);
            d[u] = _mm256_sub_pd(_mm256_castsi256_pd(hi), bias);
        }
        EACH(u, NU) d[u] = _mm256_add_pd(d[u], _mm256_castsi256_pd(lo[u]));
        EACH(v, NV) {
            const __m256d r = _mm256_add_pd(_mm256_mul_pd(d[2 * v], d[2 * v]),
                                            _mm256_mul_pd(d[2 * v + 1], d[2 * v + 1]));
            count =
                _mm256_add_epi64(count, _mm256_castpd_si256(_mm256_cmp_pd(r, limit, _CMP_LT_OQ)));
        }
        EACH(u, NU) z[u] = _mm256_add_epi64(z[u], step);
    }
    _Alignas(32) int64_t lanes[LANES];
    _mm256_store_si256((__m256i *)lanes, count);
    int64_t hits = -(lanes[0] + lanes[1] + lanes[2] + lanes[3]);
    return hits + sb_pi_count_hits(seed, k, end);
}
#undef EACH

/* NV vectors of 8 samples (2 NV generator outputs) per loop trip, in lockstep as the AVX2 kernel;
 * hits are counted per lane by a masked subtract, not by a popcount per vector (a mask move and a
 * scalar add in the loop). */
#define EACH(i, n) _Pragma("GCC unroll 16") for (int i = 0; i < (n); i++)
AVX512 int64_t sb_pi_hits_avx512(uint64_t seed, int64_t begin, int64_t end) {
    enum { LANES = 8, NV = SB_PI_AVX512_VECTORS, NU = 2 * NV };
    const uint64_t g = SB_SPLITMIX_GAMMA;
    const __m512i c1 = _mm512_set1_epi64((long long)UINT64_C(0xbf58476d1ce4e5b9));
    const __m512i c2 = _mm512_set1_epi64((long long)UINT64_C(0x94d049bb133111eb));
    const __m512i step = _mm512_set1_epi64((long long)(2 * LANES * NV * g));
    const __m512i minus_one = _mm512_set1_epi64(-1);
    const __m512d limit = _mm512_set1_pd(0x1.0p106);
    int64_t k = begin;
    /* output u of a trip: even u the x of vector u/2's samples, odd u their y (input + gamma) */
    const uint64_t z0 = seed + (2 * (uint64_t)k + 1) * g;
    __m512i z[NU];
    z[0] = _mm512_add_epi64(_mm512_set1_epi64((long long)z0),
                            _mm512_mullo_epi64(_mm512_setr_epi64(0, 2, 4, 6, 8, 10, 12, 14),
                                               _mm512_set1_epi64((long long)g)));
    z[1] = _mm512_add_epi64(z[0], _mm512_set1_epi64((long long)g));
    for (int u = 2; u < NU; u++)
        z[u] = _mm512_add_epi64(z[u - 2], _mm512_set1_epi64((long long)(2 * LANES * g)));
    __m512i count = _mm512_setzero_si512(); /* hits per lane */
    for (; end - k >= LANES * NV; k += LANES * NV) {
        __m512i t[NU];
        __m512d d[NU];
        EACH(u, NU) t[u] = _mm512_xor_si512(z[u], _mm512_srli_epi64(z[u], 30));
        EACH(u, NU) t[u] = _mm512_mullo_epi64(t[u], c1);
        EACH(u, NU) t[u] = _mm512_xor_si512(t[u], _mm512_srli_epi64(t[u], 27));
        EACH(u, NU) t[u] = _mm512_mullo_epi64(t[u], c2);
        EACH(u, NU) t[u] = _mm512_xor_si512(t[u], _mm512_srli_epi64(t[u], 31));
        EACH(u, NU) d[u] = _mm512_cvtepu64_pd(_mm512_srli_epi64(t[u], 11)); /* exact: < 2^53 */
        EACH(v, NV) {
            const __m512d r = _mm512_add_pd(_mm512_mul_pd(d[2 * v], d[2 * v]),
                                            _mm512_mul_pd(d[2 * v + 1], d[2 * v + 1]));
            count = _mm512_mask_sub_epi64(count, _mm512_cmp_pd_mask(r, limit, _CMP_LT_OQ), count,
                                          minus_one);
        }
        EACH(u, NU) z[u] = _mm512_add_epi64(z[u], step);
    }
    return _mm512_reduce_add_epi64(count) + sb_pi_count_hits(seed, k, end);
}
#undef EACH

#else /* not x86-64: never selected (sb_cpu_supports_path), defined so every build links */
int64_t sb_pi_hits_avx2(uint64_t seed, int64_t begin, int64_t end) {
    return sb_pi_count_hits(seed, begin, end);
}
int64_t sb_pi_hits_avx512(uint64_t seed, int64_t begin, int64_t end) {
    return sb_pi_count_hits(seed, begin, end);
}
#endif
