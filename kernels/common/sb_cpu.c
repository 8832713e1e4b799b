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
