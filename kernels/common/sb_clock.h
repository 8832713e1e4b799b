/* Core clock measurement around the compute region (sb_clock.c). */
#ifndef SB_CLOCK_H
#define SB_CLOCK_H

/* 3 trials of 2 million dependent adds: about 0.7 ms each at 3 GHz. */
#define SB_CLOCK_ADDS 2000000.0
#define SB_CLOCK_TRIALS 3

/* Measured clock of the calling thread's core in GHz (best of the trials); 0 = not measurable. */
double sb_clock_measure_ghz(void);

#endif /* SB_CLOCK_H */
