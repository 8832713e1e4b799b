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
 * Cycles are counted, not assumed: each trial of a loop runs right after a chain of dependent
 * integer adds (one per cycle, sb_clock_add_chain), beside independent 512-bit multiplies for the
 * 512-bit loops, so that a core that lowers its clock for 512-bit code counts them in the cycles of
 * that clock, as the AVX-512 path's records count theirs; all timed by the time-stamp counter. A
 * trial's figure is the loop's ticks over the chain's ticks per add. Before the chain and right
 * after the loop a check chain (the add chain with two independent adds beside each, check_chain)
 * must run at its quiet ratio to the chain, measured in the run (quiet_ratio), or the trial is
 * dropped: it takes 3 integer ops per cycle, which another tenant of the core (an SMT sibling)
 * slows by taking a share of the core's op rate, while the plain chain barely feels it, so a slow
 * phase of the host (docs/simd-bounds.md, host phases), an interruption or a change of clock drops
 * the trial. Each figure is the floor of its trials
 * (floor_estimate.h): the median of the lowest cluster that holds 15 % of them, settled when the
 * two halves of the run agree. A run lasts 1.5 s at least, then until every figure is settled,
 * 4.5 s at most (figures not settled are listed in the output); a figure without any floor (the
 * core was shared throughout) is exit 3 and no output. Pinned to the CPU it starts on.
 *
 * Usage: simd-bounds [--min-seconds S] [--max-seconds S] [--replay | --replay-checks]   (JSON on
 * stdout; exit 0, 2 on a bad argument, 3 when a figure could not be measured). --replay: one
 * figure's trials on stdin ("<seconds> <value>" a line, "nan" for a dropped trial) through the same
 * floor and stopping rule; tests/kernels/test_simd_bounds_floor.py plants slow phases in them.
 * --replay-checks: one form's trials as ticks through the check too (replay);
 * tests/kernels/test_simd_bounds_check.py plants core designs and shared phases in them.
 */
#define _GNU_SOURCE
#include "floor_estimate.h"
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
/* How long a measurement runs: at least MIN_S, then until every figure's floor is settled (two
 * halves of the run find it within 2 %, kernels/bounds/floor_estimate.h), at most MAX_S. A slow
 * phase of a shared host lasts from milliseconds to minutes: the run must span several of them,
 * and a floor that one half of the run did not reach says a phase covered that half. */
#define MIN_S 1.5
#define MAX_S 4.5
#define CHECK_EVERY_S 0.25
#define PAUSE_S 0.008      /* between rounds: each form's trials spread over the whole run */
#define CHAIN_PASSES 25000 /* x 8 adds: 200 000 cycles, about 60 us; the loop runs as long */
#define CHAIN_AGREE                                                                                \
    0.005 /* the checks around a loop within 0.5 % of their quiet ratio, or no trial */
#define CLOCK_CHAIN_PASSES 25000 /* the clock reading: 200 000 cycles, about 60 us */
#define CLOCK_TRIALS 21

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
#define REP8(x) x x x x x x x x

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

/* The check of a trial: the add chain of sb_clock_add_chain with two independent adds beside each
 * add (and, for the 512-bit forms, one independent 512-bit multiply, as the chain beside 512-bit
 * code has). Alone on its core it runs at the chain's one add per cycle: 3 integer ops per cycle
 * (4 with the multiply) issue on every x86-64 core with 4 integer ALUs. Another thread on the core
 * takes a share of its op rate (docs/simd-bounds.md, host phases) and slows it while the plain
 * chain, one op per cycle, barely notices: a trial whose check does not match the plain chain ran
 * in a slow phase, or across a change of clock, and is dropped. */
#define CHECK_STEP "add %[one], %[a]\n\tadd %[one], %[b]\n\tadd %[one], %[c]\n\t"
static void check_chain(uint64_t passes) {
    uint64_t a = 0, b = 0, c = 0;
    __asm__ volatile(".p2align 6\n1:\n\t" REP8(CHECK_STEP) "dec %[n]\n\tjnz 1b"
                     : [a] "+r"(a), [b] "+r"(b), [c] "+r"(c), [n] "+r"(passes)
                     : [one] "r"((uint64_t)1)
                     : "cc");
}
__attribute__((target("avx512f"))) static void check_chain_beside_zmm(uint64_t passes) {
    uint64_t a = 0, b = 0, c = 0;
    const double one = 1.0;
    __asm__ volatile("vbroadcastsd %[x], %%zmm0\n\tvmovapd %%zmm0, %%zmm1\n\t"
                     ".p2align 6\n1:\n\t" REP8(
                         CHECK_STEP
                         "vmulpd %%zmm0, %%zmm1, %%zmm2\n\t") "dec %[n]\n\tjnz 1b\n\tvzeroupper"
                     : [a] "+r"(a), [b] "+r"(b), [c] "+r"(c), [n] "+r"(passes)
                     : [one] "r"((uint64_t)1), [x] "m"(one)
                     : "cc", "xmm0", "xmm1", "xmm2");
}

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

/* Time-stamp counter ticks, fenced so that the work before and after is not moved across it. Only
 * ratios of ticks are used (the loop's ticks over the add chain's ticks per add), so the counter's
 * own rate does not matter, only that it is constant over one trial, which the two chains around
 * the loop check. */
static inline uint64_t ticks(void) {
    uint32_t lo, hi;
    __asm__ volatile("lfence\n\trdtsc\n\tlfence" : "=a"(lo), "=d"(hi)::"memory");
    return ((uint64_t)hi << 32) | lo;
}

/* Passes of the form's loop that take at least as many ticks as the add chain of a trial (and
 * warm it up). */
static uint64_t calibrated_passes(const struct form *f) {
    const int wide = f->path == SB_PATH_AVX512;
    uint64_t chain = UINT64_MAX;
    for (int i = 0; i < 3; i++) {
        const uint64_t t0 = ticks();
        sb_clock_add_chain(CHAIN_PASSES, wide);
        const uint64_t t1 = ticks();
        if (t1 - t0 < chain)
            chain = t1 - t0;
    }
    uint64_t passes = 16;
    for (;;) {
        const uint64_t t0 = ticks();
        f->fn(passes);
        if (ticks() - t0 >= chain || passes >= (UINT64_C(1) << 30))
            return passes;
        passes *= 2;
    }
}

static double seconds_since(const struct timespec *start) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)(now.tv_sec - start->tv_sec) + 1e-9 * (double)(now.tv_nsec - start->tv_nsec);
}

/* The check chain's ticks, or 0 where the ticks went backwards. */
static uint64_t timed_check(int wide) {
    const uint64_t t0 = ticks();
    if (wide)
        check_chain_beside_zmm(CHAIN_PASSES);
    else
        check_chain(CHAIN_PASSES);
    const uint64_t t1 = ticks();
    return t1 > t0 ? t1 - t0 : 0;
}

/* One trial of a form, as ticks: the check chain (check_chain), the add chain, the loop, the check
 * chain again. Whether it counts is decided later, against the check's quiet ratio (passing). */
struct reading {
    double t_s;                  /* when, seconds from the start of the run */
    double before, chain, after; /* ticks of the checks and of the add chain */
    double loop;                 /* ticks of the loop; 0: no reading (the ticks went backwards) */
};
static struct reading trial(const struct form *f, uint64_t passes, double t_s) {
    const int wide = f->path == SB_PATH_AVX512;
    struct reading r = {.t_s = t_s, .before = (double)timed_check(wide)};
    const uint64_t t0 = ticks();
    sb_clock_add_chain(CHAIN_PASSES, wide);
    const uint64_t t1 = ticks();
    f->fn(passes);
    const uint64_t t2 = ticks();
    r.after = (double)timed_check(wide);
    r.chain = (double)(t1 - t0);
    r.loop = t1 > t0 && t2 > t1 ? (double)(t2 - t1) : 0.0;
    return r;
}

/* The check chain's quiet ratio to the add chain, for the plain (wide 0) or the 512-bit (wide 1)
 * forms: the quiet level (floor_estimate.h) of the ratios of all their trials' checks, before and
 * after. It is measured, not assumed to be 1: alone on a core the check runs within a fraction of a
 * percent of the chain, but not at it on every design (Zen 4 1.000, Zen 5 1.0046, its spread
 * 0.35 %), and a fixed ratio would drop most quiet trials where it is off by as much as the
 * tolerance. A shared core slows the check, not the chain, and only raises the ratio. */
static double quiet_ratio(const struct form *forms, size_t nforms, const uint64_t *passes,
                          const struct reading *readings, size_t cap, size_t n, int wide,
                          double *scratch) {
    size_t m = 0;
    for (size_t k = 0; k < nforms; k++)
        if (passes[k] && (forms[k].path == SB_PATH_AVX512) == wide)
            for (size_t i = 0; i < n; i++) {
                const struct reading *r = &readings[k * cap + i];
                scratch[m++] = r->chain > 0 ? r->before / r->chain : NAN;
                scratch[m++] = r->chain > 0 ? r->after / r->chain : NAN;
            }
    return m ? sb_quiet_level(scratch, m, CHAIN_AGREE) : NAN;
}

/* A form's trials with their figures, cycles per unit (the loop's ticks over the add chain's ticks
 * per add, the checks counted too at their quiet ratio); NAN where either check's ratio to the
 * chain is off the quiet ratio by more than CHAIN_AGREE: one of them was interrupted, the clock
 * changed, or the core was shared just before or just after the loop (both checks must pass, so a
 * lull in a slow phase that one of them happens to fall in does not let its trial through).
 * Returns how many passed. */
static int passing(const struct form *f, uint64_t passes, const struct reading *readings, size_t n,
                   double ratio, struct sb_trial *out) {
    int passed = 0;
    for (size_t i = 0; i < n; i++) {
        const struct reading *r = &readings[i];
        out[i] = (struct sb_trial){r->t_s, NAN};
        if (!(r->loop > 0 && r->chain > 0 && isfinite(ratio)) ||
            fabs(r->before / r->chain - ratio) > CHAIN_AGREE * ratio ||
            fabs(r->after / r->chain - ratio) > CHAIN_AGREE * ratio)
            continue;
        const double per_add =
            (r->chain + (r->before + r->after) / ratio) / (3.0 * 8.0 * CHAIN_PASSES);
        out[i].value = r->loop / per_add / ((double)passes * f->units_per_pass);
        passed++;
    }
    return passed;
}

/* Each form's trials that pass the check (passing), its count in passed[k]; then its floor in
 * cycles[k], settled or not (floor_estimate.h) at `now`. Returns whether all are settled. */
static int floors(const struct form *forms, size_t nforms, const uint64_t *passes,
                  const struct reading *readings, size_t cap, size_t n, double now,
                  struct sb_trial *trials, double *scratch, double *cycles, int *unsettled,
                  int *passed) {
    const double ratio[2] = {quiet_ratio(forms, nforms, passes, readings, cap, n, 0, scratch),
                             quiet_ratio(forms, nforms, passes, readings, cap, n, 1, scratch)};
    int settled = 1;
    for (size_t k = 0; k < nforms; k++) {
        unsettled[k] = 0;
        cycles[k] = NAN;
        if (!passes[k])
            continue;
        passed[k] = passing(&forms[k], passes[k], readings + k * cap, n,
                            ratio[forms[k].path == SB_PATH_AVX512], trials);
        if (!sb_floor_settled(trials, n, now, scratch, &cycles[k])) {
            unsettled[k] = 1;
            settled = 0;
        }
    }
    return settled;
}

/* Cycles per unit of each form: the floor of its passing trials (kernels/bounds/floor_estimate.h).
 * A round runs every form once (so each form's trials are spread over the whole run), then pauses;
 * after MIN_S the run stops as soon as every form's floor is settled, at MAX_S in any case. Returns
 * whether all settled; *seconds and *rounds say how long it ran; unsettled[k] marks the others,
 * passed[k] counts the trials that passed the check. */
static int measure(const struct form *forms, size_t nforms, const int *paths, double min_s,
                   double max_s, double *cycles, int *unsettled, int *passed, double *seconds,
                   int *rounds) {
    enum { NFORMS = sizeof FORMS / sizeof *FORMS };
    const size_t cap = (size_t)(max_s / PAUSE_S) + 2;
    uint64_t passes[NFORMS];
    struct reading *readings = calloc(cap * NFORMS, sizeof *readings);
    struct sb_trial *trials = calloc(cap, sizeof *trials);
    double *scratch = calloc(2 * cap * NFORMS, sizeof *scratch);
    size_t n = 0;
    int settled = 0;
    for (size_t k = 0; k < nforms; k++)
        passes[k] = paths[forms[k].path] ? calibrated_passes(&forms[k]) : 0;
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    double next_check = min_s;
    *rounds = 0;
    while (readings && trials && scratch && n < cap) {
        sb_clock_add_chain(CHAIN_PASSES, 0); /* after the pause: the core back at its clock */
        const double t = seconds_since(&start);
        for (size_t k = 0; k < nforms; k++)
            if (passes[k])
                readings[k * cap + n] = trial(&forms[k], passes[k], t);
        n++;
        ++*rounds;
        const double now = seconds_since(&start);
        if (now >= next_check) {
            if (floors(forms, nforms, passes, readings, cap, n, now, trials, scratch, cycles,
                       unsettled, passed) ||
                now >= max_s)
                break;
            next_check = now + CHECK_EVERY_S;
        }
        struct timespec pause = {0, (long)(PAUSE_S * 1e9)};
        nanosleep(&pause, NULL);
    }
    *seconds = seconds_since(&start);
    /* the last rounds after the last check may have settled a figure */
    if (readings && trials && scratch)
        settled = floors(forms, nforms, passes, readings, cap, n, *seconds, trials, scratch, cycles,
                         unsettled, passed);
    else
        for (size_t k = 0; k < nforms; k++)
            cycles[k] = NAN;
    free(readings);
    free(trials);
    free(scratch);
    return settled;
}

/* --replay and --replay-checks: one figure's trials from stdin, in time order, through the same
 * check, floor and stopping rule as a measurement (tests replay recorded slow phases and plant core
 * designs and shared phases). --replay: a line "<seconds> <value>" each, "nan" for a dropped trial
 * (a trial whose checks ran exactly at its chain's speed); prints {"floor": ..., "settled": ...,
 * "seconds": ..., "trials": ...}. --replay-checks (`checks`): a line "<seconds> <check before> <add
 * chain> <check after> <loop>" each, as ticks (the loop of one unit per pass); prints "ratio" (the
 * checks' quiet ratio) and "passed" first. */
static int replay(double min_s, double max_s, int checks) {
    static const struct form one = {"replayed", NULL, 1, SB_PATH_SCALAR};
    const uint64_t passes = 1;
    const double chain = 8.0 * CHAIN_PASSES; /* a --replay trial's ticks: one per add */
    size_t cap = 0, n = 0;
    struct reading *readings = NULL, r;
    struct sb_trial *trials = NULL;
    double *scratch = NULL, cycles = NAN, now = 0.0, next_check = min_s, value;
    int settled = 0, unsettled = 0, passed = 0;
    while (checks
               ? scanf("%lf %lf %lf %lf %lf", &r.t_s, &r.before, &r.chain, &r.after, &r.loop) == 5
               : scanf("%lf %lf", &r.t_s, &value) == 2) {
        if (!checks) /* a dropped trial: no loop ticks */
            r = (struct reading){r.t_s, chain, chain, chain, isfinite(value) ? value : 0.0};
        if (n == cap) {
            cap = cap ? 2 * cap : 1024;
            struct reading *more = realloc(readings, cap * sizeof *readings);
            struct sb_trial *more_trials = realloc(trials, cap * sizeof *trials);
            double *more_scratch = realloc(scratch, 2 * cap * sizeof *scratch);
            readings = more ? more : readings;
            trials = more_trials ? more_trials : trials;
            scratch = more_scratch ? more_scratch : scratch;
            if (!more || !more_trials || !more_scratch)
                break;
        }
        readings[n++] = r;
        now = r.t_s;
        if (now >= next_check) {
            settled = floors(&one, 1, &passes, readings, cap, n, now, trials, scratch, &cycles,
                             &unsettled, &passed);
            if (settled || now >= max_s)
                break;
            next_check = now + CHECK_EVERY_S;
        }
    }
    double ratio = NAN;
    if (n) { /* the floor of all the trials read, settled or not */
        floors(&one, 1, &passes, readings, cap, n, now, trials, scratch, &cycles, &unsettled,
               &passed);
        ratio = quiet_ratio(&one, 1, &passes, readings, cap, n, 0, scratch);
    }
    if (checks)
        printf("{\"ratio\":%.6g,\"passed\":%d,", isfinite(ratio) ? ratio : -1.0, passed);
    else
        printf("{");
    printf("\"floor\":%.6g,\"settled\":%s,\"seconds\":%.4f,\"trials\":%zu}\n",
           isfinite(cycles) ? cycles : -1.0, settled ? "true" : "false", now, n);
    free(readings);
    free(trials);
    free(scratch);
    return 0;
}

/* The fastest of the trials of the add chain, in GHz (an interruption only slows one). */
static double chain_ghz(int wide, int trials) {
    double best = 0.0;
    sb_clock_add_chain(CLOCK_CHAIN_PASSES, wide);
    for (int t = 0; t < trials; t++) {
        const double t0 = thread_s();
        sb_clock_add_chain(CLOCK_CHAIN_PASSES, wide);
        const double dt = thread_s() - t0;
        if (dt > 0.0 && 8.0 * CLOCK_CHAIN_PASSES / dt * 1e-9 > best)
            best = 8.0 * CLOCK_CHAIN_PASSES / dt * 1e-9;
    }
    return best;
}
#endif /* SB_BOUNDS_X86 */

static int seconds_arg(const char *text, double *out) {
    char *end = NULL;
    const double v = strtod(text, &end);
    if (end == text || *end != '\0' || !(v >= 0.1 && v <= 600.0))
        return 0;
    *out = v;
    return 1;
}

int main(int argc, char **argv) {
    double min_s = MIN_S, max_s = MAX_S;
    int replaying = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--min-seconds") == 0 && i + 1 < argc &&
            seconds_arg(argv[i + 1], &min_s)) {
            i++;
            continue;
        }
        if (strcmp(argv[i], "--max-seconds") == 0 && i + 1 < argc &&
            seconds_arg(argv[i + 1], &max_s)) {
            i++;
            continue;
        }
        if (strcmp(argv[i], "--replay") == 0 || strcmp(argv[i], "--replay-checks") == 0) {
            replaying = strcmp(argv[i], "--replay") == 0 ? 1 : 2;
            continue;
        }
        if (strcmp(argv[i], "--help") == 0) {
            puts("usage: simd-bounds [--min-seconds S] [--max-seconds S] [--replay | "
                 "--replay-checks]\n"
                 "Measures the latencies and instruction-mix throughputs the SIMD bounds rest on\n"
                 "(docs/simd-bounds.md) on this core; one JSON object on stdout. The run lasts at\n"
                 "least --min-seconds (1.5), then until every figure's floor is settled, at most\n"
                 "--max-seconds (4.5).\n"
                 "--replay: read one figure's trials (\"<seconds> <value>\" per line) from stdin\n"
                 "and print the floor the same rule takes from them.\n"
                 "--replay-checks: read one form's trials as ticks (\"<seconds> <check before>\n"
                 "<add chain> <check after> <loop>\" per line) and print the check's quiet ratio,\n"
                 "the trials that pass it and their floor.");
            return 0;
        }
        fprintf(stderr,
                "simd-bounds: bad argument %s (usage: simd-bounds [--min-seconds 0.1..600] "
                "[--max-seconds 0.1..600] [--replay | --replay-checks])\n",
                argv[i]);
        return 2;
    }
    if (max_s < min_s) {
        fprintf(stderr, "simd-bounds: --max-seconds %g is below --min-seconds %g\n", max_s, min_s);
        return 2;
    }
    if (replaying) {
#ifdef SB_BOUNDS_X86
        return replay(min_s, max_s, replaying == 2);
#else
        fprintf(stderr, "simd-bounds: --replay and --replay-checks: only on x86-64\n");
        return 2;
#endif
    }
    /* the CPU it starts on, for the whole run (the clock and the loops on one core) */
    const int cpu = sched_getcpu();
    if (cpu >= 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(cpu, &set);
        sched_setaffinity(0, sizeof set, &set);
    }
#ifdef SB_BOUNDS_X86
    int paths[3] = {1, sb_cpu_supports_path(SB_PATH_AVX2), sb_cpu_supports_path(SB_PATH_AVX512)};
    const double ghz = chain_ghz(0, CLOCK_TRIALS);
    const double ghz_512 = paths[SB_PATH_AVX512] ? chain_ghz(1, CLOCK_TRIALS) : NAN;
    enum { NFORMS = sizeof FORMS / sizeof *FORMS };
    double cycles[NFORMS], seconds = 0.0;
    int unsettled[NFORMS] = {0}, passed[NFORMS] = {0}, rounds = 0;
    const int settled =
        measure(FORMS, NFORMS, paths, min_s, max_s, cycles, unsettled, passed, &seconds, &rounds);
    for (size_t k = 0; k < NFORMS; k++)
        if (paths[FORMS[k].path] && !isfinite(cycles[k])) {
            fprintf(stderr,
                    "simd-bounds: %s: %d of %d trials passed the check in %.1f s, too few for a "
                    "floor (another thread kept the core busy, or the core issues fewer than 3 "
                    "integer adds per cycle); nothing measured\n",
                    FORMS[k].name, passed[k], rounds, seconds);
            return 3;
        }
    printf("{\"schema\":\"%s\",\"uarch\":\"%s\",\"vectors\":{\"mandelbrot_256\":%d,"
           "\"mandelbrot_512\":%d}",
           SCHEMA, sb_cpu_uarch(), SB_MANDEL_AVX2_VECTORS, SB_MANDEL_AVX512_VECTORS);
    printf(",\"paths\":[");
    for (int32_t p = SB_PATH_SCALAR, first = 1; p <= SB_PATH_AVX512; p++)
        if (paths[p]) {
            printf("%s\"%s\"", first ? "" : ",", sb_inner_path_name(p));
            first = 0;
        }
    printf("],\"clock_ghz\":{\"plain\":%.4f", ghz);
    if (paths[SB_PATH_AVX512])
        printf(",\"beside_512bit\":%.4f", ghz_512);
    printf("},\"figures\":{");
    int first = 1;
    for (size_t k = 0; k < NFORMS; k++) {
        if (!paths[FORMS[k].path])
            continue;
        printf("%s\"%s\":%.4f", first ? "" : ",", FORMS[k].name, cycles[k]);
        first = 0;
    }
    printf("},\"passed\":{");
    first = 1;
    for (size_t k = 0; k < NFORMS; k++) {
        if (!paths[FORMS[k].path])
            continue;
        printf("%s\"%s\":%d", first ? "" : ",", FORMS[k].name, passed[k]);
        first = 0;
    }
    printf("},\"rounds\":%d,\"seconds\":%.3f,\"settled\":%s,\"unsettled\":[", rounds, seconds,
           settled ? "true" : "false");
    first = 1;
    for (size_t k = 0; k < NFORMS; k++)
        if (paths[FORMS[k].path] && unsettled[k]) {
            printf("%s\"%s\"", first ? "" : ",", FORMS[k].name);
            first = 0;
        }
    printf("]}\n");
#else /* nothing to measure off x86-64 */
    printf("{\"schema\":\"%s\",\"uarch\":\"%s\",\"vectors\":{\"mandelbrot_256\":%d,"
           "\"mandelbrot_512\":%d},\"paths\":[],\"clock_ghz\":{},\"figures\":{}}\n",
           SCHEMA, sb_cpu_uarch(), SB_MANDEL_AVX2_VECTORS, SB_MANDEL_AVX512_VECTORS);
#endif
    return 0;
}
