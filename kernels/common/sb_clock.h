/* Core clock measurement around the compute region (sb_clock.c). */
#ifndef SB_CLOCK_H
#define SB_CLOCK_H

#include <stdint.h>

/* 3 trials of 500,000 dependent adds: about 0.17 ms each at 3 GHz, thousands of timer resolutions
 * long, and short enough that the two measurements around every repetition cost about 1 ms. */
#define SB_CLOCK_ADDS 500000.0
#define SB_CLOCK_TRIALS 3

/* Measured clock of the calling thread's core in GHz (best of the trials); 0 = not measurable.
 * beside_512bit: the chain runs beside independent 512-bit multiplies (the clock of the AVX-512
 * path's region; call only where the CPU has AVX-512). */
double sb_clock_measure_ghz(int beside_512bit);
/* The chain itself: `passes` x 8 dependent adds (one cycle each), beside independent 512-bit
 * multiplies if beside_512bit (call that only where the CPU has AVX-512). The SIMD bounds tool
 * (kernels/bounds/simd_bounds.c) counts cycles with it. Does nothing off x86-64. */
void sb_clock_add_chain(uint64_t passes, int beside_512bit);
/* The method of that measurement, as the record states it. */
#define SB_CLOCK_METHOD_PLAIN "dependent integer add chain"
#define SB_CLOCK_METHOD_WIDE "dependent integer add chain beside 512-bit multiplies"

#endif /* SB_CLOCK_H */
