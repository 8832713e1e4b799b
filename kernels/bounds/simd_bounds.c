/*
 * simd-bounds: measures, on the core it runs on, the latencies and instruction-mix throughputs the
 * per-cycle bounds of the Mandelbrot and π inner loops rest on (docs/simd-bounds.md), and prints
 * them as one JSON object. The runner caches it once per host and campaign (jobs/simd_bounds.py
 * writes hosts/bounds/<hostname>.json); sbcore/simd_bounds.py derives the bounds from the figures.
 *
 * What is measured, in cycles (scalar always, 256 and 512 bits where the CPU runs that path):
 * - lat_mulsd, lat_addsd, lat_subsd: latency of the scalar loop's FP ops (a chain of 12);
 * - lat_{mul,add,sub}pd_{256,512}: latency of the vector ops (a chain of 12);
 * - mix_mandelbrot_256: cycles per vector step of 4 lanes (4 vmulpd + 3 vaddpd);
 * - mix_mandelbrot_512: cycles per 2 vector steps of 8 lanes, 16 lane-steps (7 vmulpd + 7 vaddpd:
 *   2*x as x+x on every second vector);
 * - mix_mcpi_scalar: cycles per sample of the scalar loop's instructions as compiled
 *   (sb_pi_hits_inner), its long per-output chain cut into short ones from a fixed value;
 * - mix_mcpi_256, mix_mcpi_512: cycles per 4 and 8 samples of the vector loop's instructions.
 * The mixes are independent instructions in the counts of the compiled loops (objdump -d
 * build/obj/common/sb_*.o), the same mixes as perf/perf_simd_ops.py: what the loop's instructions
 * alone cost on this core; the kernel adds its dependencies and branches.
 *
 * Cycles are counted, not assumed: each timed loop runs right after a chain of dependent integer
 * adds (one per cycle, sb_clock_add_chain), beside independent 512-bit multiplies for the 512-bit
 * loops, so that a core that lowers its clock for 512-bit code counts them in the cycles of that
 * clock, as the AVX-512 path's records count theirs. A trial's figure is the loop's CPU time over
 * the chain's time per add; each figure is the lower quartile over the trials: another tenant of
 * the core (an SMT sibling) slows the mixes in windows of seconds (docs/simd-bounds.md, host
 * phases), and a bound taken in such a window would be exceeded by the kernels outside it; the
 * quartile, not the fastest trial, so that one trial whose chain was interrupted does not count.
 * Pinned to the CPU it starts on.
 *
 * Usage: simd-bounds [--trials N]   (JSON on stdout; exit 0, 2 on a bad argument)
 */
#define _GNU_SOURCE
#include "sb_clock.h"
#include "sb_simd.h"

#include <math.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SCHEMA "scalebench.simd-bounds/1"
#define DEFAULT_TRIALS 21
/* The trials are spread over this many seconds (a pause between two): a slow phase of the host
 * lasts from milliseconds to seconds, and trials taken within 40 ms all fell in one (on a Zen 4
 * guest the scalar pi mix read 7.99, 10.4 and 13.0 cycles in three back-to-back runs, and the
 * kernel then ran at 136 % of the 13.0 bound). The lower quartile over a second and a half keeps
 * the faster phases. */
#define SPREAD_S 1.5
#define CHAIN_PASSES 25000 /* x 8 adds: 200 000 cycles, about 60 us */
#define MIN_LOOP_S 40e-6   /* a timed loop runs at least this long (CPU time) */

static double thread_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define SB_BOUNDS_X86 1
#endif

#ifdef SB_BOUNDS_X86
#define REP12(x) x x x x x x x x x x x x

/* ---- scalar: SSE2 forms, as the scalar kernels are compiled (no -mavx) ---- */
#define SCALAR_CHAIN(fn, op)                                                                       \
    static void fn(uint64_t n) {                                                                   \
        const double one = 1.0;                                                                    \
        __asm__ volatile("movsd %[one], %%xmm0\n\tmovapd %%xmm0, %%xmm2\n\t"                       \
                         ".p2align 6\n1:\n\t" REP12(op " %%xmm0, %%xmm2\n\t") "dec %[n]\n\tjnz 1b" \
                         : [n] "+r"(n)                                                             \
                         : [one] "m"(one)                                                          \
                         : "cc", "xmm0", "xmm2");                                                  \
    }
SCALAR_CHAIN(lat_mulsd, "mulsd")
SCALAR_CHAIN(lat_addsd, "addsd")
SCALAR_CHAIN(lat_subsd, "subsd")

/* One output of SplitMix64 and its conversion as the scalar π loop computes it: (z ^ z>>30) * c1,
 * (z ^ z>>27) * c2, (z ^ z>>31) >> 11, to double, scaled, squared; here each of the three steps
 * starts from the fixed input instead of the previous step's result. */
#define PI_OUTPUT(x)                                                                               \
    "mov %[s], %[d]\n\tshr $30, %[d]\n\txor %[s], %[d]\n\timul %[c1], %[d]\n\t"                    \
    "mov %[s], %[e]\n\tshr $27, %[e]\n\txor %[s], %[e]\n\timul %[c2], %[e]\n\t"                    \
    "mov %[s], %[f]\n\tshr $31, %[f]\n\txor %[s], %[f]\n\tshr $11, %[f]\n\t"                       \
    "pxor " x ", " x "\n\tcvtsi2sd %[f], " x "\n\tmulsd %%xmm6, " x "\n\tmulsd " x ", " x "\n\t"

/* One sample per pass: 2 outputs, the next input (lea), the test and the count, the loop's adds. */
static void mix_mcpi_scalar(uint64_t n) {
    uint64_t s = UINT64_C(0x9e3779b97f4a7c15), c1 = UINT64_C(0xbf58476d1ce4e5b9);
    uint64_t c2 = UINT64_C(0x94d049bb133111eb), a = 0, b = 0, h = 0, d, e, f, g;
    const double scale = 0x1.0p-53, one = 1.0;
    __asm__ volatile("movsd %[scale], %%xmm6\n\tmovsd %[one], %%xmm7\n\t"
                     ".p2align 6\n1:\n\t" PI_OUTPUT("%%xmm2") PI_OUTPUT(
                         "%%xmm3") "lea (%[s],%[c1]), %[g]\n\t"
                                   "xor %%eax, %%eax\n\t"
                                   "addsd %%xmm3, %%xmm2\n\t"
                                   "comisd %%xmm2, %%xmm7\n\t"
                                   "seta %%al\n\t"
                                   "add $1, %[a]\n\tadd %[c1], %[b]\n\tadd %%rax, %[h]\n\t"
                                   "dec %[n]\n\tjnz 1b"
                     : [n] "+r"(n), [a] "+r"(a), [b] "+r"(b), [h] "+r"(h), [d] "=&r"(d),
                       [e] "=&r"(e), [f] "=&r"(f), [g] "=&r"(g)
                     : [s] "r"(s), [c1] "r"(c1), [c2] "r"(c2), [scale] "m"(scale), [one] "m"(one)
                     : "cc", "rax", "xmm2", "xmm3", "xmm6", "xmm7");
}

/* ---- vector: registers 0 and 1 are the sources (1.0), 2..13 the destinations ---- */
#define VEC_CLOBBERS                                                                               \
    "cc", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", \
        "xmm11", "xmm12", "xmm13"
#define VEC_LOOP(fn, isa, r, body, ...)                                                            \
    __attribute__((target(isa))) static void fn(uint64_t n) {                                      \
        const double one = 1.0;                                                                    \
        __asm__ volatile("vbroadcastsd %[one], %%" r "0\n\tvmovapd %%" r "0, %%" r                 \
                         "1\n\tvmovapd %%" r "0, %%" r "2\n\t"                                     \
                         ".p2align 6\n1:\n\t" body "dec %[n]\n\tjnz 1b\n\tvzeroupper"              \
                         : [n] "+r"(n)                                                             \
                         : [one] "m"(one)                                                          \
                         : VEC_CLOBBERS __VA_ARGS__);                                              \
    }
#define VEC_CHAIN(op, r) REP12(op " %%" r "0, %%" r "2, %%" r "2\n\t")
#define T256 "avx2"
#define T512 "avx512f,avx512dq"

/* mandelbrot 512: 2 unit(s) per pass, 28 instructions */
#define MIX_MANDELBROT_512                                                                         \
    "vmulpd %%zmm0, %%zmm1, %%zmm2\n\t"                                                            \
    "vaddpd %%zmm0, %%zmm1, %%zmm3\n\t"                                                            \
    "vmulpd %%zmm0, %%zmm1, %%zmm4\n\t"                                                            \
    "vaddpd %%zmm0, %%zmm1, %%zmm5\n\t"                                                            \
    "vmulpd %%zmm0, %%zmm1, %%zmm6\n\t"                                                            \
    "vaddpd %%zmm0, %%zmm1, %%zmm7\n\t"                                                            \
    "vmulpd %%zmm0, %%zmm1, %%zmm8\n\t"                                                            \
    "vaddpd %%zmm0, %%zmm1, %%zmm9\n\t"                                                            \
    "vmulpd %%zmm0, %%zmm1, %%zmm10\n\t"                                                           \
    "vaddpd %%zmm0, %%zmm1, %%zmm11\n\t"                                                           \
    "vmulpd %%zmm0, %%zmm1, %%zmm12\n\t"                                                           \
    "vaddpd %%zmm0, %%zmm1, %%zmm13\n\t"                                                           \
    "vmulpd %%zmm0, %%zmm1, %%zmm2\n\t"                                                            \
    "vaddpd %%zmm0, %%zmm1, %%zmm3\n\t"                                                            \
    "vmulpd %%zmm0, %%zmm1, %%zmm4\n\t"                                                            \
    "vaddpd %%zmm0, %%zmm1, %%zmm5\n\t"                                                            \
    "vmulpd %%zmm0, %%zmm1, %%zmm6\n\t"                                                            \
    "vaddpd %%zmm0, %%zmm1, %%zmm7\n\t"                                                            \
    "vmulpd %%zmm0, %%zmm1, %%zmm8\n\t"                                                            \
    "vaddpd %%zmm0, %%zmm1, %%zmm9\n\t"                                                            \
    "vmulpd %%zmm0, %%zmm1, %%zmm10\n\t"                                                           \
    "vaddpd %%zmm0, %%zmm1, %%zmm11\n\t"                                                           \
    "vmulpd %%zmm0, %%zmm1, %%zmm12\n\t"                                                           \
    "vaddpd %%zmm0, %%zmm1, %%zmm13\n\t"                                                           \
    "vmulpd %%zmm0, %%zmm1, %%zmm2\n\t"                                                            \
    "vaddpd %%zmm0, %%zmm1, %%zmm3\n\t"                                                            \
    "vmulpd %%zmm0, %%zmm1, %%zmm4\n\t"                                                            \
    "vaddpd %%zmm0, %%zmm1, %%zmm5\n\t"

/* mandelbrot 256: 4 unit(s) per pass, 28 instructions */
#define MIX_MANDELBROT_256                                                                         \
    "vmulpd %%ymm0, %%ymm1, %%ymm2\n\t"                                                            \
    "vaddpd %%ymm0, %%ymm1, %%ymm3\n\t"                                                            \
    "vmulpd %%ymm0, %%ymm1, %%ymm4\n\t"                                                            \
    "vaddpd %%ymm0, %%ymm1, %%ymm5\n\t"                                                            \
    "vmulpd %%ymm0, %%ymm1, %%ymm6\n\t"                                                            \
    "vaddpd %%ymm0, %%ymm1, %%ymm7\n\t"                                                            \
    "vmulpd %%ymm0, %%ymm1, %%ymm8\n\t"                                                            \
    "vaddpd %%ymm0, %%ymm1, %%ymm9\n\t"                                                            \
    "vmulpd %%ymm0, %%ymm1, %%ymm10\n\t"                                                           \
    "vaddpd %%ymm0, %%ymm1, %%ymm11\n\t"                                                           \
    "vmulpd %%ymm0, %%ymm1, %%ymm12\n\t"                                                           \
    "vaddpd %%ymm0, %%ymm1, %%ymm13\n\t"                                                           \
    "vmulpd %%ymm0, %%ymm1, %%ymm2\n\t"                                                            \
    "vaddpd %%ymm0, %%ymm1, %%ymm3\n\t"                                                            \
    "vmulpd %%ymm0, %%ymm1, %%ymm4\n\t"                                                            \
    "vaddpd %%ymm0, %%ymm1, %%ymm5\n\t"                                                            \
    "vmulpd %%ymm0, %%ymm1, %%ymm6\n\t"                                                            \
    "vaddpd %%ymm0, %%ymm1, %%ymm7\n\t"                                                            \
    "vmulpd %%ymm0, %%ymm1, %%ymm8\n\t"                                                            \
    "vaddpd %%ymm0, %%ymm1, %%ymm9\n\t"                                                            \
    "vmulpd %%ymm0, %%ymm1, %%ymm10\n\t"                                                           \
    "vaddpd %%ymm0, %%ymm1, %%ymm11\n\t"                                                           \
    "vmulpd %%ymm0, %%ymm1, %%ymm12\n\t"                                                           \
    "vaddpd %%ymm0, %%ymm1, %%ymm13\n\t"                                                           \
    "vmulpd %%ymm0, %%ymm1, %%ymm2\n\t"                                                            \
    "vmulpd %%ymm0, %%ymm1, %%ymm3\n\t"                                                            \
    "vmulpd %%ymm0, %%ymm1, %%ymm4\n\t"                                                            \
    "vmulpd %%ymm0, %%ymm1, %%ymm5\n\t"

/* mcpi 256: 1 unit(s) per pass, 55 instructions */
#define MIX_MCPI_256                                                                               \
    "vpaddq %%ymm0, %%ymm1, %%ymm2\n\t"                                                            \
    "vpsrlq $30, %%ymm0, %%ymm3\n\t"                                                               \
    "vpxor %%ymm0, %%ymm1, %%ymm4\n\t"                                                             \
    "vaddpd %%ymm0, %%ymm1, %%ymm5\n\t"                                                            \
    "vpsllq $32, %%ymm0, %%ymm6\n\t"                                                               \
    "vpmuludq %%ymm0, %%ymm1, %%ymm7\n\t"                                                          \
    "vpmulld %%ymm0, %%ymm1, %%ymm8\n\t"                                                           \
    "vpand %%ymm0, %%ymm1, %%ymm9\n\t"                                                             \
    "vpor %%ymm0, %%ymm1, %%ymm10\n\t"                                                             \
    "vpblendd $0xaa, %%ymm0, %%ymm1, %%ymm11\n\t"                                                  \
    "vmulpd %%ymm0, %%ymm1, %%ymm12\n\t"                                                           \
    "vcmpltpd %%ymm0, %%ymm1, %%ymm13\n\t"                                                         \
    "vpaddq %%ymm0, %%ymm1, %%ymm2\n\t"                                                            \
    "vpsrlq $30, %%ymm0, %%ymm3\n\t"                                                               \
    "vpxor %%ymm0, %%ymm1, %%ymm4\n\t"                                                             \
    "vaddpd %%ymm0, %%ymm1, %%ymm5\n\t"                                                            \
    "vpsllq $32, %%ymm0, %%ymm6\n\t"                                                               \
    "vpmuludq %%ymm0, %%ymm1, %%ymm7\n\t"                                                          \
    "vpmulld %%ymm0, %%ymm1, %%ymm8\n\t"                                                           \
    "vpand %%ymm0, %%ymm1, %%ymm9\n\t"                                                             \
    "vpor %%ymm0, %%ymm1, %%ymm10\n\t"                                                             \
    "vpblendd $0xaa, %%ymm0, %%ymm1, %%ymm11\n\t"                                                  \
    "vmulpd %%ymm0, %%ymm1, %%ymm12\n\t"                                                           \
    "vpaddq %%ymm0, %%ymm1, %%ymm13\n\t"                                                           \
    "vpsrlq $30, %%ymm0, %%ymm2\n\t"                                                               \
    "vpxor %%ymm0, %%ymm1, %%ymm3\n\t"                                                             \
    "vaddpd %%ymm0, %%ymm1, %%ymm4\n\t"                                                            \
    "vpsllq $32, %%ymm0, %%ymm5\n\t"                                                               \
    "vpmuludq %%ymm0, %%ymm1, %%ymm6\n\t"                                                          \
    "vpmulld %%ymm0, %%ymm1, %%ymm7\n\t"                                                           \
    "vpand %%ymm0, %%ymm1, %%ymm8\n\t"                                                             \
    "vpaddq %%ymm0, %%ymm1, %%ymm9\n\t"                                                            \
    "vpsrlq $30, %%ymm0, %%ymm10\n\t"                                                              \
    "vpxor %%ymm0, %%ymm1, %%ymm11\n\t"                                                            \
    "vaddpd %%ymm0, %%ymm1, %%ymm12\n\t"                                                           \
    "vpsllq $32, %%ymm0, %%ymm13\n\t"                                                              \
    "vpmuludq %%ymm0, %%ymm1, %%ymm2\n\t"                                                          \
    "vpmulld %%ymm0, %%ymm1, %%ymm3\n\t"                                                           \
    "vpand %%ymm0, %%ymm1, %%ymm4\n\t"                                                             \
    "vpaddq %%ymm0, %%ymm1, %%ymm5\n\t"                                                            \
    "vpsrlq $30, %%ymm0, %%ymm6\n\t"                                                               \
    "vpxor %%ymm0, %%ymm1, %%ymm7\n\t"                                                             \
    "vaddpd %%ymm0, %%ymm1, %%ymm8\n\t"                                                            \
    "vpaddq %%ymm0, %%ymm1, %%ymm9\n\t"                                                            \
    "vpsrlq $30, %%ymm0, %%ymm10\n\t"                                                              \
    "vpxor %%ymm0, %%ymm1, %%ymm11\n\t"                                                            \
    "vpaddq %%ymm0, %%ymm1, %%ymm12\n\t"                                                           \
    "vpsrlq $30, %%ymm0, %%ymm13\n\t"                                                              \
    "vpaddq %%ymm0, %%ymm1, %%ymm2\n\t"                                                            \
    "vpsrlq $30, %%ymm0, %%ymm3\n\t"                                                               \
    "vpaddq %%ymm0, %%ymm1, %%ymm4\n\t"                                                            \
    "vpsrlq $30, %%ymm0, %%ymm5\n\t"                                                               \
    "vpaddq %%ymm0, %%ymm1, %%ymm6\n\t"                                                            \
    "vpsrlq $30, %%ymm0, %%ymm7\n\t"                                                               \
    "vpaddq %%ymm0, %%ymm1, %%ymm8\n\t"

/* mcpi 512: 1 unit(s) per pass, 27 instructions */
#define MIX_MCPI_512                                                                               \
    "vpsrlq $30, %%zmm0, %%zmm2\n\t"                                                               \
    "vpxorq %%zmm0, %%zmm1, %%zmm3\n\t"                                                            \
    "vpmullq %%zmm0, %%zmm1, %%zmm4\n\t"                                                           \
    "vpaddq %%zmm0, %%zmm1, %%zmm5\n\t"                                                            \
    "vmulpd %%zmm0, %%zmm1, %%zmm6\n\t"                                                            \
    "vcvtuqq2pd %%zmm0, %%zmm7\n\t"                                                                \
    "vaddpd %%zmm0, %%zmm1, %%zmm8\n\t"                                                            \
    "vcmpltpd %%zmm0, %%zmm1, %%k1\n\t"                                                            \
    "vpsubq %%zmm0, %%zmm1, %%zmm10%{%%k1%}\n\t"                                                   \
    "vpsrlq $30, %%zmm0, %%zmm11\n\t"                                                              \
    "vpxorq %%zmm0, %%zmm1, %%zmm12\n\t"                                                           \
    "vpmullq %%zmm0, %%zmm1, %%zmm13\n\t"                                                          \
    "vpaddq %%zmm0, %%zmm1, %%zmm2\n\t"                                                            \
    "vmulpd %%zmm0, %%zmm1, %%zmm3\n\t"                                                            \
    "vcvtuqq2pd %%zmm0, %%zmm4\n\t"                                                                \
    "vpsrlq $30, %%zmm0, %%zmm5\n\t"                                                               \
    "vpxorq %%zmm0, %%zmm1, %%zmm6\n\t"                                                            \
    "vpmullq %%zmm0, %%zmm1, %%zmm7\n\t"                                                           \
    "vpsrlq $30, %%zmm0, %%zmm8\n\t"                                                               \
    "vpxorq %%zmm0, %%zmm1, %%zmm9\n\t"                                                            \
    "vpmullq %%zmm0, %%zmm1, %%zmm10\n\t"                                                          \
    "vpsrlq $30, %%zmm0, %%zmm11\n\t"                                                              \
    "vpxorq %%zmm0, %%zmm1, %%zmm12\n\t"                                                           \
    "vpsrlq $30, %%zmm0, %%zmm13\n\t"                                                              \
    "vpxorq %%zmm0, %%zmm1, %%zmm2\n\t"                                                            \
    "vpsrlq $30, %%zmm0, %%zmm3\n\t"                                                               \
    "vpsrlq $30, %%zmm0, %%zmm4\n\t"

VEC_LOOP(lat_mulpd_256, T256, "ymm", VEC_CHAIN("vmulpd", "ymm"))
VEC_LOOP(lat_addpd_256, T256, "ymm", VEC_CHAIN("vaddpd", "ymm"))
VEC_LOOP(lat_subpd_256, T256, "ymm", VEC_CHAIN("vsubpd", "ymm"))
VEC_LOOP(mix_mandelbrot_256, T256, "ymm", MIX_MANDELBROT_256)
VEC_LOOP(mix_mcpi_256, T256, "ymm", MIX_MCPI_256)
VEC_LOOP(lat_mulpd_512, T512, "zmm", VEC_CHAIN("vmulpd", "zmm"))
VEC_LOOP(lat_addpd_512, T512, "zmm", VEC_CHAIN("vaddpd", "zmm"))
VEC_LOOP(lat_subpd_512, T512, "zmm", VEC_CHAIN("vsubpd", "zmm"))
VEC_LOOP(mix_mandelbrot_512, T512, "zmm", MIX_MANDELBROT_512)
VEC_LOOP(mix_mcpi_512, T512, "zmm", MIX_MCPI_512, , "k1")

typedef void (*loop_fn)(uint64_t passes);
struct form {
    const char *name;
    loop_fn fn;
    double units_per_pass; /* chain links or mix units */
    int32_t path; /* the inner path whose bound needs it; also the clock it is counted at */
};
static const struct form FORMS[] = {
    {"lat_mulsd", lat_mulsd, 12, SB_PATH_SCALAR},
    {"lat_addsd", lat_addsd, 12, SB_PATH_SCALAR},
    {"lat_subsd", lat_subsd, 12, SB_PATH_SCALAR},
    {"mix_mcpi_scalar", mix_mcpi_scalar, 1, SB_PATH_SCALAR},
    {"lat_mulpd_256", lat_mulpd_256, 12, SB_PATH_AVX2},
    {"lat_addpd_256", lat_addpd_256, 12, SB_PATH_AVX2},
    {"lat_subpd_256", lat_subpd_256, 12, SB_PATH_AVX2},
    {"mix_mandelbrot_256", mix_mandelbrot_256, 4, SB_PATH_AVX2},
    {"mix_mcpi_256", mix_mcpi_256, 1, SB_PATH_AVX2},
    {"lat_mulpd_512", lat_mulpd_512, 12, SB_PATH_AVX512},
    {"lat_addpd_512", lat_addpd_512, 12, SB_PATH_AVX512},
    {"lat_subpd_512", lat_subpd_512, 12, SB_PATH_AVX512},
    {"mix_mandelbrot_512", mix_mandelbrot_512, 2, SB_PATH_AVX512},
    {"mix_mcpi_512", mix_mcpi_512, 1, SB_PATH_AVX512},
};

/* Passes of the form's loop that run at least MIN_LOOP_S (and warm it up). */
static uint64_t calibrated_passes(const struct form *f) {
    uint64_t passes = 64;
    for (;;) {
        const double t0 = thread_s();
        f->fn(passes);
        if (thread_s() - t0 >= MIN_LOOP_S || passes >= (UINT64_C(1) << 30))
            return passes;
        passes *= 2;
    }
}

static int by_value(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Cycles per unit of each form: per trial, its loop's time over the time per add of the chain run
 * just before it; the lower quartile over the trials. A trial runs every form once, so that each
 * form's trials are spread over the whole run, and the trials over SPREAD_S seconds. */
static void measure(const struct form *forms, size_t nforms, const int *paths, int trials,
                    double *cycles) {
    enum { NFORMS = sizeof FORMS / sizeof *FORMS };
    uint64_t passes[NFORMS];
    double *ratios = calloc((size_t)trials * NFORMS, sizeof *ratios);
    int kept[NFORMS] = {0};
    for (size_t k = 0; k < nforms; k++)
        passes[k] = paths[forms[k].path] ? calibrated_passes(&forms[k]) : 0;
    const double pause_s = trials > 1 ? SPREAD_S / (trials - 1) : 0.0;
    for (int t = 0; ratios && t < trials; t++) {
        if (t > 0) {
            struct timespec pause = {(time_t)pause_s, (long)((pause_s - (time_t)pause_s) * 1e9)};
            nanosleep(&pause, NULL);
        }
        for (size_t k = 0; k < nforms; k++) {
            if (!passes[k])
                continue;
            const double c0 = thread_s();
            sb_clock_add_chain(CHAIN_PASSES, forms[k].path == SB_PATH_AVX512);
            const double c1 = thread_s();
            forms[k].fn(passes[k]);
            const double l1 = thread_s();
            if (c1 > c0 && l1 > c1)
                ratios[k * (size_t)trials + (size_t)kept[k]++] =
                    (l1 - c1) / ((c1 - c0) / (8.0 * CHAIN_PASSES)) /
                    ((double)passes[k] * forms[k].units_per_pass);
        }
    }
    for (size_t k = 0; k < nforms; k++) {
        double *r = ratios ? ratios + k * (size_t)trials : NULL;
        cycles[k] = NAN;
        if (r && kept[k]) {
            qsort(r, (size_t)kept[k], sizeof *r, by_value);
            cycles[k] = r[(kept[k] - 1) / 4]; /* the lower quartile */
        }
    }
    free(ratios);
}

/* The fastest of the trials of the add chain, in GHz (an interruption only slows one). */
static double chain_ghz(int wide, int trials) {
    double best = 0.0;
    sb_clock_add_chain(CHAIN_PASSES, wide);
    for (int t = 0; t < trials; t++) {
        const double t0 = thread_s();
        sb_clock_add_chain(CHAIN_PASSES, wide);
        const double dt = thread_s() - t0;
        if (dt > 0.0 && 8.0 * CHAIN_PASSES / dt * 1e-9 > best)
            best = 8.0 * CHAIN_PASSES / dt * 1e-9;
    }
    return best;
}
#endif /* SB_BOUNDS_X86 */

int main(int argc, char **argv) {
    int trials = DEFAULT_TRIALS;
    for (int i = 1; i < argc; i++) {
        char *end = NULL;
        if (strcmp(argv[i], "--trials") == 0 && i + 1 < argc) {
            long v = strtol(argv[++i], &end, 10);
            if (*end == '\0' && v >= 1 && v <= 1000) {
                trials = (int)v;
                continue;
            }
        } else if (strcmp(argv[i], "--help") == 0) {
            puts("usage: simd-bounds [--trials N]\n"
                 "Measures the latencies and instruction-mix throughputs the SIMD bounds rest on\n"
                 "(docs/simd-bounds.md) on this core; one JSON object on stdout.");
            return 0;
        }
        fprintf(stderr,
                "simd-bounds: bad argument %s%s%s (usage: simd-bounds [--trials 1..1000])\n",
                end ? argv[i - 1] : argv[i], end ? " " : "", end ? argv[i] : "");
        return 2;
    }
    /* the CPU it starts on, for the whole run (the clock and the loops on one core) */
    const int cpu = sched_getcpu();
    if (cpu >= 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(cpu, &set);
        sched_setaffinity(0, sizeof set, &set);
    }
    printf("{\"schema\":\"%s\",\"uarch\":\"%s\",\"trials\":%d,\"vectors\":{\"mandelbrot_256\":%d,"
           "\"mandelbrot_512\":%d}",
           SCHEMA, sb_cpu_uarch(), trials, SB_MANDEL_AVX2_VECTORS, SB_MANDEL_AVX512_VECTORS);
#ifdef SB_BOUNDS_X86
    int paths[3] = {1, sb_cpu_supports_path(SB_PATH_AVX2), sb_cpu_supports_path(SB_PATH_AVX512)};
    printf(",\"paths\":[");
    for (int32_t p = SB_PATH_SCALAR, first = 1; p <= SB_PATH_AVX512; p++)
        if (paths[p]) {
            printf("%s\"%s\"", first ? "" : ",", sb_inner_path_name(p));
            first = 0;
        }
    printf("],\"clock_ghz\":{\"plain\":%.4f", chain_ghz(0, trials));
    if (paths[SB_PATH_AVX512])
        printf(",\"beside_512bit\":%.4f", chain_ghz(1, trials));
    printf("},\"figures\":{");
    double cycles[sizeof FORMS / sizeof *FORMS];
    measure(FORMS, sizeof FORMS / sizeof *FORMS, paths, trials, cycles);
    int first = 1;
    for (size_t k = 0; k < sizeof FORMS / sizeof *FORMS; k++) {
        if (!paths[FORMS[k].path])
            continue;
        printf("%s\"%s\":%.4f", first ? "" : ",", FORMS[k].name, cycles[k]);
        first = 0;
    }
    printf("}}\n");
#else
    printf(",\"paths\":[],\"clock_ghz\":{},\"figures\":{}}\n"); /* nothing to measure off x86-64 */
#endif
    return 0;
}
