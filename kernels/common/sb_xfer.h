/*
 * Cache-line transfer between two CPUs, timed: two threads, one on each CPU, hand one cache line
 * back and forth (a ping-pong). A round trip is what every contended lock, atomic and barrier pays
 * per hand-off between those CPUs. A host that places our vCPUs further apart (another core complex
 * or socket), or gives the partner's vCPU to someone else, makes it slower while every single-CPU
 * chain of the machine-state probe stays as it was: the probe then records a slow transfer.
 */
#ifndef SB_XFER_H
#define SB_XFER_H

#include <stdatomic.h>
#include <stdint.h>

/* Samples of SB_XFER_BATCH round trips each, after one untimed round trip that waits for the
 * partner to arrive (a woken thread); the result is their median per round trip, so a rare
 * preemption does not count. */
#define SB_XFER_SAMPLES 31
#define SB_XFER_BATCH 8
/* The ping stops taking samples once this long has passed since the partner arrived (at least one
 * sample is taken): a partner
 * whose CPU is shared with another process answers once per time slice, and the probe must not
 * take a second for it. Its slow samples are then the result, as they should be. */
#define SB_XFER_BUDGET_S 2e-3

/* One line per pair, alone on its cache line. turn: odd = the pong's turn, even = the ping's;
 * SB_XFER_STOP ends the pong. */
typedef struct sb_xfer_line {
    _Alignas(64) _Atomic uint64_t turn;
    char pad[64 - sizeof(uint64_t)];
} sb_xfer_line;

#define SB_XFER_STOP UINT64_MAX

/* The static lines of pairs 0..n-1 (n <= 64), reset for a new probe. Call before the partners
 * start (single-threaded). */
sb_xfer_line *sb_xfer_lines(int32_t n);

/* The ping side, on the first CPU: median seconds per round trip with the pong on `line`. */
double sb_xfer_ping(sb_xfer_line *line);

/* The pong side, on the other CPU: answers until the ping says stop. */
void sb_xfer_pong(sb_xfer_line *line);

#endif /* SB_XFER_H */
