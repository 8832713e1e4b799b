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

double sb_clock_measure_ghz(void) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    double best = 0.0;
    for (int t = 0; t < SB_CLOCK_TRIALS; t++) {
        double t0 = sb_now();
        add_chain(SB_CLOCK_ADDS / 8);
        double dt = sb_now() - t0;
        /* an interruption only lengthens a trial, so the fastest trial is the clock */
        if (dt > 0.0 && SB_CLOCK_ADDS / dt * 1e-9 > best)
            best = SB_CLOCK_ADDS / dt * 1e-9;
    }
    return best;
#else
    return 0.0; /* not measured on this architecture: the record says null */
#endif
}
