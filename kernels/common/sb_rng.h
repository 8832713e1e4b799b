/*
 * The counter-based π generator of docs/formats.md: output n of SplitMix64 seeded with s is
 * mix(s + (n+1) * golden), a pure function of (s, n), so any worker can start at any sample.
 */
#ifndef SB_RNG_H
#define SB_RNG_H

#include <stdint.h>

#define SB_SPLITMIX_GAMMA UINT64_C(0x9e3779b97f4a7c15)

static inline uint64_t sb_splitmix64_mix(uint64_t z) {
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

/* Output n (0-based) of SplitMix64 seeded with `seed`. */
static inline uint64_t sb_splitmix64_at(uint64_t seed, uint64_t n) {
    return sb_splitmix64_mix(seed + (n + 1) * SB_SPLITMIX_GAMMA);
}

/* Top 53 bits as an exact double in [0, 1). */
static inline double sb_unit_double(uint64_t bits) {
    return (double)(bits >> 11) * 0x1.0p-53;
}

/* Whether sample k of `seed` falls inside the quarter circle (no FMA: built -ffp-contract=off). */
static inline int sb_pi_is_hit(uint64_t seed, uint64_t k) {
    double x = sb_unit_double(sb_splitmix64_at(seed, 2 * k));
    double y = sb_unit_double(sb_splitmix64_at(seed, 2 * k + 1));
    return x * x + y * y < 1.0;
}

/* Hits among samples [begin, end). */
static inline int64_t sb_pi_count_hits(uint64_t seed, int64_t begin, int64_t end) {
    int64_t hits = 0;
    for (int64_t k = begin; k < end; k++)
        hits += sb_pi_is_hit(seed, (uint64_t)k);
    return hits;
}

#endif /* SB_RNG_H */
