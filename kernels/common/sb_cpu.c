/* Run-time choice of the --inner simd path for this CPU, and the dispatching entry points. */
#include "sb_mandelbrot.h"
#include "sb_rng.h"
#include "sb_simd.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

int sb_cpu_supports_path(int32_t path) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    __builtin_cpu_init();
    switch (path) {
    case SB_PATH_SCALAR:
        return 1;
    case SB_PATH_AVX2:
        return __builtin_cpu_supports("avx2");
    case SB_PATH_AVX512:
        /* DQ for the 64-bit multiply and the exact u64 -> double of the π kernel */
        return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq");
    default:
        return 0;
    }
#else
    return path == SB_PATH_SCALAR;
#endif
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#endif

/* The core design family from CPUID: the analysis looks up per-cycle bounds by it. Only the FP and
 * vector pipe layout matters, so Intel cores are grouped by whether they have AVX-512. */
const char *sb_cpu_uarch(void) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    unsigned a, b, c, d;
    if (!__get_cpuid(0, &a, &b, &c, &d))
        return "unknown";
    char vendor[13];
    memcpy(vendor, &b, 4);
    memcpy(vendor + 4, &d, 4);
    memcpy(vendor + 8, &c, 4);
    vendor[12] = '\0';
    __get_cpuid(1, &a, &b, &c, &d);
    unsigned family = (a >> 8) & 0xf, model = (a >> 4) & 0xf;
    if (family == 0xf)
        family += (a >> 20) & 0xff;
    if (family == 0x6 || family >= 0xf)
        model |= ((a >> 16) & 0xf) << 4;
    if (strcmp(vendor, "AuthenticAMD") == 0) {
        if (family == 0x17)
            return model < 0x30 ? "zen1" : "zen2";
        if (family == 0x19)
            return (model >= 0x10 && model < 0x20) || (model >= 0x60 && model < 0xb0) ? "zen4"
                                                                                      : "zen3";
        if (family == 0x1a)
            return "zen5";
    }
    if (strcmp(vendor, "GenuineIntel") == 0 && family == 6)
        return sb_cpu_supports_path(SB_PATH_AVX512) ? "intel-avx512" : "intel";
#endif
    return "unknown";
}

const char *sb_inner_path_name(int32_t path) {
    static const char *const names[] = {"scalar", "avx2", "avx512"};
    return path >= 0 && path <= SB_PATH_AVX512 ? names[path] : "unknown";
}

static int32_t best_path_uncached(void) {
    int32_t cap = SB_PATH_AVX512;
    const char *env = getenv("SB_INNER_PATH");
    if (env && *env)
        for (int32_t k = SB_PATH_SCALAR; k <= SB_PATH_AVX512; k++)
            if (strcmp(env, sb_inner_path_name(k)) == 0)
                cap = k;
    for (int32_t k = cap; k > SB_PATH_SCALAR; k--)
        if (sb_cpu_supports_path(k))
            return k;
    return SB_PATH_SCALAR;
}

int32_t sb_cpu_best_path(void) {
    static _Atomic int32_t cached = -1; /* racing first calls compute the same value */
    int32_t path = atomic_load_explicit(&cached, memory_order_relaxed);
    if (path < 0) {
        path = best_path_uncached();
        atomic_store_explicit(&cached, path, memory_order_relaxed);
    }
    return path;
}

int32_t sb_inner_path(const sb_params *p) {
    return p->inner == SB_INNER_SIMD ? sb_cpu_best_path() : SB_PATH_SCALAR;
}

void sb_mandel_row_inner(const sb_params *p, int32_t j, uint32_t *row_out) {
    switch (sb_inner_path(p)) {
    case SB_PATH_AVX512:
        sb_mandel_row_avx512(p, j, row_out);
        break;
    case SB_PATH_AVX2:
        sb_mandel_row_avx2(p, j, row_out);
        break;
    default:
        sb_mandel_row(p, j, row_out);
        break;
    }
}

int64_t sb_pi_hits_batches(const sb_params *p, int64_t first, int64_t end) {
    int64_t hits = 0;
    for (int64_t b = first; b < end; b++) {
        int64_t s0 = b * p->batch;
        hits += sb_pi_hits_inner(p, s0, sb_pi_batch_end(s0, p->batch, p->samples));
    }
    return hits;
}

int64_t sb_pi_hits_inner(const sb_params *p, int64_t begin, int64_t end) {
    switch (sb_inner_path(p)) {
    case SB_PATH_AVX512:
        return sb_pi_hits_avx512((uint64_t)p->seed, begin, end);
    case SB_PATH_AVX2:
        return sb_pi_hits_avx2((uint64_t)p->seed, begin, end);
    default:
        return sb_pi_count_hits((uint64_t)p->seed, begin, end);
    }
}
