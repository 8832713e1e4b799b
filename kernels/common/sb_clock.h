/* Core clock measurement around the compute region (sb_clock.c). */
#ifndef SB_CLOCK_H
#define SB_CLOCK_H

/* 3 trials of 500,000 dependent adds: about 0.17 ms each at 3 GHz, thousands of timer resolutions
 * long, and short enough that the two measurements around every repetition cost about 1 ms. */
#define SB_CLOCK_ADDS 500000.0
#define SB_CLOCK_TRIALS 3

/* Measured clock of the calling thread's core in GHz (best of the trials); 0 = not measurable. */
double sb_clock_measure_ghz(void);

#endif /* SB_CLOCK_H */
