/*
 * --inner simd: vector Mandelbrot rows and π hit counts, bit-identical to the scalar reference in
 * sb_mandelbrot.h / sb_rng.h (same operations in the same order, no FMA). The path (AVX-512, AVX2
 * or the scalar reference) is chosen once per process from the CPU (sb_cpu.c); every model calls
 * the *_inner functions, which honour --inner.
 */
#ifndef SB_SIMD_H
#define SB_SIMD_H

#include "harness.h"

#include <stdint.h>

/* The inner loop that actually runs ("inner_path" in the record). */
enum sb_inner_path { SB_PATH_SCALAR = 0, SB_PATH_AVX2 = 1, SB_PATH_AVX512 = 2 };

/* Best path this CPU and build support, capped by the environment variable SB_INNER_PATH
 * (scalar|avx2|avx512: never above what the CPU has; lets tests and users compare paths). */
int32_t sb_cpu_best_path(void);
/* Whether the CPU (and OS) can run `path`. */
int sb_cpu_supports_path(int32_t path);
/* The path --inner selects: scalar for --inner scalar, sb_cpu_best_path() for --inner simd. */
int32_t sb_inner_path(const sb_params *p);
const char *sb_inner_path_name(int32_t path);
/* Core design family ("zen3", "intel-avx512", ... "unknown"), the record's "uarch". */
const char *sb_cpu_uarch(void);

/* Row j of the image into row_out[0 .. width-1], by the path --inner selects. Callable from
 * Fortran (bind(C), params by reference). */
void sb_mandel_row_inner(const sb_params *p, int32_t j, uint32_t *row_out);
/* Hits among π samples [begin, end) of p->seed, by the path --inner selects. */
int64_t sb_pi_hits_inner(const sb_params *p, int64_t begin, int64_t end);
/* Batches of p->batch samples in p->samples, the last one possibly short (no overflow near 2^62).
 */
static inline int64_t sb_pi_batches(const sb_params *p) {
    return (p->samples - 1) / p->batch + 1;
}
/* The end of the batch of `batch` samples that starts at sample s0, in samples [.., end). */
static inline int64_t sb_pi_batch_end(int64_t s0, int64_t batch, int64_t end) {
    return end - s0 > batch ? s0 + batch : end;
}
/* Hits among the samples of batches [first, end) of p->batch samples each (the last one may be
 * short), one sb_pi_hits_inner call per batch: the loop of every model that publishes nothing per
 * batch (serial, pthreads --sync none), so their per-batch code is one piece of machine code at
 * one address in every binary. Two copies of this loop in two kernels differed by 0.4 % in
 * speed (the threaded one faster on one thread, with more instructions per sample): code layout. */
int64_t sb_pi_hits_batches(const sb_params *p, int64_t first, int64_t end);

/* Vectors of 4 lanes the AVX2 Mandelbrot row kernel keeps in flight (docs/simd-bounds.md). */
#define SB_MANDEL_AVX2_VECTORS 6
/* The AVX-512 Mandelbrot row kernel's shape (docs/simd-bounds.md); the test's 8-lane emulation
 * uses the same. Vectors of 8 lanes in flight: 64 lanes, the most its lane flags hold (32 zmm
 * registers leave room for more than AVX2's 6); 2*x as x+x on every second of them. */
#define SB_MANDEL_AVX512_VECTORS 8
#define SB_MANDEL_AVX512_XADD 2
/* Vectors of 8 π samples the AVX-512 kernel computes in lockstep per loop trip. */
#define SB_PI_AVX512_VECTORS 4

/* The vector kernels themselves (call only when sb_cpu_supports_path says so). */
void sb_mandel_row_avx2(const sb_params *p, int32_t j, uint32_t *row_out);
void sb_mandel_row_avx512(const sb_params *p, int32_t j, uint32_t *row_out);
int64_t sb_pi_hits_avx2(uint64_t seed, int64_t begin, int64_t end);
int64_t sb_pi_hits_avx512(uint64_t seed, int64_t begin, int64_t end);

#endif /* SB_SIMD_H */
