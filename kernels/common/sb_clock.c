/*
 * The core clock, measured: a chain of dependent integer adds (one cycle each on every x86-64 core
 * since the Pentium 4's successors: Intel Core, AMD K8 to Zen) timed with CLOCK_MONOTONIC. Taken
 * just before and just after each repetition's compute region, so the record says at which clock
 * the work ran (turbo, frequency scaling and a throttled or oversubscribed VM all show up) and the
 * analysis can turn seconds into cycles. Only the calling thread's core is measured.
 */
#include "sb_clock.h"
#include "sb_internal.h"

#include <stdint.h>

/* 8 dependent adds per pass; the loop counter runs beside the chain on other ALUs. */
static void add_chain(uint64_t passes) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    uint64_t acc = 0;
    __asm__ volatile(".p2align 6\n1:\n\t" /* one cache line: see sb_probe.c */
                     "add %[one], %[acc]\n\tadd %[one], %[acc]\n\t"
                     "add %[one], %[acc]\n\tadd %[one], %[acc]\n\t"
                     "add %[one], %[acc]\n\tadd %[one], %[acc]\n\t"
                     "add %[one], %[acc]\n\tadd %[one], %[acc]\n\t"
                     "dec %[n]\n\t"
                     "jnz 1b"
                     : [acc] "+r"(acc), [n] "+r"(passes)
                     : [one] "r"((uint64_t)1)
                     : "cc");
#else
    (void)passes;
#endif
}

/* The same chain with one independent 512-bit multiply beside each add (2 per cycle fit beside it
 * on every AVX-512 core, so the adds still set the pace): the clock the core runs at while 512-bit
 * code runs, which is what a core with an AVX-512 frequency licence drops to during the compute
 * region of the AVX-512 path (the plain chain, run between regions, may read the higher clock).
 * perf/perf_simd_ops.py measures both side by side. */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
__attribute__((target("avx512f"))) static void add_chain_beside_zmm(uint64_t passes) {
    uint64_t acc = 0;
    const double one = 1.0;
    __asm__ volatile("vbroadcastsd %[x], %%zmm0\n\t"
                     "vmovapd %%zmm0, %%zmm1\n\t"
                     ".p2align 6\n1:\n\t"
                     "add %[one], %[acc]\n\tvmulpd %%zmm0, %%zmm1, %%zmm2\n\t"
                     "add %[one], %[acc]\n\tvmulpd %%zmm0, %%zmm1, %%zmm3\n\t"
                     "add %[one], %[acc]\n\tvmulpd %%zmm0, %%zmm1, %%zmm4\n\t"
                     "add %[one], %[acc]\n\tvmulpd %%zmm0, %%zmm1, %%zmm5\n\t"
                     "add %[one], %[acc]\n\tvmulpd %%zmm0, %%zmm1, %%zmm2\n\t"
                     "add %[one], %[acc]\n\tvmulpd %%zmm0, %%zmm1, %%zmm3\n\t"
                     "add %[one], %[acc]\n\tvmulpd %%zmm0, %%zmm1, %%zmm4\n\t"
                     "add %[one], %[acc]\n\tvmulpd %%zmm0, %%zmm1, %%zmm5\n\t"
                     "dec %[n]\n\t"
                     "jnz 1b"
                     : [acc] "+r"(acc), [n] "+r"(passes)
                     : [one] "r"((uint64_t)1), [x] "m"(one)
                     : "cc", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5");
}
#endif

void sb_clock_add_chain(uint64_t passes, int beside_512bit) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    if (beside_512bit)
        add_chain_beside_zmm(passes);
    else
        add_chain(passes);
#else
    (void)passes;
    (void)beside_512bit;
#endif
}

double sb_clock_measure_ghz(int beside_512bit) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    double best = 0.0;
    /* the wide variant warms up first: a licence change takes effect some microseconds in */
    if (beside_512bit)
        add_chain_beside_zmm(SB_CLOCK_ADDS / 8);
    for (int t = 0; t < SB_CLOCK_TRIALS; t++) {
        double t0 = sb_now();
        sb_clock_add_chain(SB_CLOCK_ADDS / 8, beside_512bit);
        double dt = sb_now() - t0;
        /* an interruption only lengthens a trial, so the fastest trial is the clock */
        if (dt > 0.0 && SB_CLOCK_ADDS / dt * 1e-9 > best)
            best = SB_CLOCK_ADDS / dt * 1e-9;
    }
    return best;
#else
    (void)beside_512bit;
    return 0.0; /* not measured on this architecture: the record says null */
#endif
}
