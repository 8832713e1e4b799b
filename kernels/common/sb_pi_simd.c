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

/* z * c modulo 2^64 per lane: lo(z)*lo(c) by vpmuludq; the cross terms lo(z)*hi(c) and hi(z)*lo(c)
 * only matter modulo 2^32, so one vpmulld against c with its halves swapped (c_swap) gives both. */
static inline AVX2 __m256i mul64_avx2(__m256i z, __m256i c, __m256i c_swap) {
    const __m256i lo = _mm256_mul_epu32(z, c);
    const __m256i cross = _mm256_mullo_epi32(z, c_swap);
    const __m256i sum = _mm256_add_epi64(cross, _mm256_srli_epi64(cross, 32));
    return _mm256_add_epi64(lo, _mm256_slli_epi64(sum, 32));
}

static inline AVX2 __m256i mix_avx2(__m256i z, __m256i c1, __m256i c1_swap, __m256i c2,
                                    __m256i c2_swap) {
    z = mul64_avx2(_mm256_xor_si256(z, _mm256_srli_epi64(z, 30)), c1, c1_swap);
    z = mul64_avx2(_mm256_xor_si256(z, _mm256_srli_epi64(z, 27)), c2, c2_swap);
    return _mm256_xor_si256(z, _mm256_srli_epi64(z, 31));
}

/* Exact double of the top 53 bits: hi 21 bits scaled by 2^32 plus the low 32 bits, both made by
 * bit tricks on the exponent 2^84 resp. 2^52; the final add is exact (the sum is below 2^53). */
static inline AVX2 __m256d top53_avx2(__m256i u) {
    const __m256i hi = _mm256_or_si256(_mm256_srli_epi64(u, 43),
                                       _mm256_set1_epi64x(0x4530000000000000LL)); /* 2^84 */
    const __m256i lo = _mm256_or_si256(
        _mm256_and_si256(_mm256_srli_epi64(u, 11), _mm256_set1_epi64x(0xffffffffLL)),
        _mm256_set1_epi64x(0x4330000000000000LL)); /* 2^52 */
    const __m256d h = _mm256_sub_pd(_mm256_castsi256_pd(hi), _mm256_set1_pd(0x1.0p84 + 0x1.0p52));
    return _mm256_add_pd(h, _mm256_castsi256_pd(lo));
}

/* Hit mask (all ones = hit) of the 4 samples whose first generator input is zx. */
static inline AVX2 __m256i hits4_avx2(__m256i zx, __m256i gamma, __m256i c1, __m256i c1_swap,
                                      __m256i c2, __m256i c2_swap) {
    const __m256d a = top53_avx2(mix_avx2(zx, c1, c1_swap, c2, c2_swap));
    const __m256d b = top53_avx2(mix_avx2(_mm256_add_epi64(zx, gamma), c1, c1_swap, c2, c2_swap));
    const __m256d r = _mm256_add_pd(_mm256_mul_pd(a, a), _mm256_mul_pd(b, b));
    return _mm256_castpd_si256(_mm256_cmp_pd(r, _mm256_set1_pd(0x1.0p106), _CMP_LT_OQ));
}

AVX2 int64_t sb_pi_hits_avx2(uint64_t seed, int64_t begin, int64_t end) {
    enum { LANES = 4, NV = 2 }; /* more vectors in flight measured no faster */
    const uint64_t g = SB_SPLITMIX_GAMMA, c1v = UINT64_C(0xbf58476d1ce4e5b9),
                   c2v = UINT64_C(0x94d049bb133111eb);
    const __m256i c1 = _mm256_set1_epi64x((long long)c1v);
    const __m256i c1_swap = _mm256_set1_epi64x((long long)(c1v >> 32 | c1v << 32)); /* swapped */
    const __m256i c2 = _mm256_set1_epi64x((long long)c2v);
    const __m256i c2_swap = _mm256_set1_epi64x((long long)(c2v >> 32 | c2v << 32));
    const __m256i gamma = _mm256_set1_epi64x((long long)g);
    const __m256i step = _mm256_set1_epi64x((long long)(2 * LANES * NV * g));
    int64_t k = begin;
    /* sample k reads generator input seed + (2k + 1) * gamma */
    __m256i z0 = _mm256_setr_epi64x((long long)(seed + (2 * (uint64_t)k + 1) * g),
                                    (long long)(seed + (2 * (uint64_t)k + 3) * g),
                                    (long long)(seed + (2 * (uint64_t)k + 5) * g),
                                    (long long)(seed + (2 * (uint64_t)k + 7) * g));
    __m256i z[NV];
    z[0] = z0;
    for (int v = 1; v < NV; v++)
        z[v] = _mm256_add_epi64(z[v - 1], _mm256_set1_epi64x((long long)(2 * LANES * g)));
    __m256i count = _mm256_setzero_si256(); /* minus the number of hits per lane */
    for (; end - k >= LANES * NV; k += LANES * NV) {
        for (int v = 0; v < NV; v++) {
            count = _mm256_add_epi64(count, hits4_avx2(z[v], gamma, c1, c1_swap, c2, c2_swap));
            z[v] = _mm256_add_epi64(z[v], step);
        }
    }
    _Alignas(32) int64_t lanes[LANES];
    _mm256_store_si256((__m256i *)lanes, count);
    int64_t hits = -(lanes[0] + lanes[1] + lanes[2] + lanes[3]);
    return hits + sb_pi_count_hits(seed, k, end);
}

AVX512 int64_t sb_pi_hits_avx512(uint64_t seed, int64_t begin, int64_t end) {
    enum { LANES = 8, NV = 2 };
    const uint64_t g = SB_SPLITMIX_GAMMA;
    const __m512i c1 = _mm512_set1_epi64((long long)UINT64_C(0xbf58476d1ce4e5b9));
    const __m512i c2 = _mm512_set1_epi64((long long)UINT64_C(0x94d049bb133111eb));
    const __m512i gamma = _mm512_set1_epi64((long long)g);
    const __m512i lane_step = _mm512_set1_epi64((long long)(2 * LANES * g));
    const __m512i step = _mm512_set1_epi64((long long)(2 * LANES * NV * g));
    const __m512d limit = _mm512_set1_pd(0x1.0p106);
    int64_t k = begin;
    const uint64_t z = seed + (2 * (uint64_t)k + 1) * g;
    __m512i zv[NV];
    zv[0] =
        _mm512_add_epi64(_mm512_set1_epi64((long long)z),
                         _mm512_mullo_epi64(_mm512_setr_epi64(0, 2, 4, 6, 8, 10, 12, 14), gamma));
    for (int v = 1; v < NV; v++)
        zv[v] = _mm512_add_epi64(zv[v - 1], lane_step);
    int64_t hits = 0;
    for (; end - k >= LANES * NV; k += LANES * NV) {
        for (int v = 0; v < NV; v++) {
            __m512i u[2] = {zv[v], _mm512_add_epi64(zv[v], gamma)};
            __m512d d[2];
            for (int h = 0; h < 2; h++) {
                __m512i t = u[h];
                t = _mm512_mullo_epi64(_mm512_xor_si512(t, _mm512_srli_epi64(t, 30)), c1);
                t = _mm512_mullo_epi64(_mm512_xor_si512(t, _mm512_srli_epi64(t, 27)), c2);
                t = _mm512_xor_si512(t, _mm512_srli_epi64(t, 31));
                d[h] = _mm512_cvtepu64_pd(_mm512_srli_epi64(t, 11)); /* exact: below 2^53 */
            }
            const __m512d r = _mm512_add_pd(_mm512_mul_pd(d[0], d[0]), _mm512_mul_pd(d[1], d[1]));
            hits += __builtin_popcount((unsigned)_mm512_cmp_pd_mask(r, limit, _CMP_LT_OQ));
            zv[v] = _mm512_add_epi64(zv[v], step);
        }
    }
    return hits + sb_pi_count_hits(seed, k, end);
}

#else /* not x86-64: never selected (sb_cpu_supports_path), defined so every build links */
int64_t sb_pi_hits_avx2(uint64_t seed, int64_t begin, int64_t end) {
    return sb_pi_count_hits(seed, begin, end);
}
int64_t sb_pi_hits_avx512(uint64_t seed, int64_t begin, int64_t end) {
    return sb_pi_count_hits(seed, begin, end);
}
#endif
