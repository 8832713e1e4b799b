/*
 * Machine-state probe: a fixed amount of dependent work, timed on each CPU a repetition uses, right
 * before and after it. The work does not depend on the kernel, so a slower probe means the machine
 * was slower (another process on the CPU, the host taking the core away, a lower clock), not the
 * code.
 */
#ifndef SB_PROBE_H
#define SB_PROBE_H

#include <stdint.h>
#include <stdio.h>

#define SB_PROBE_MAX_CPUS 64

/* One probe: per probed CPU, the seconds of an integer-multiply chain, of an FP-latency chain, of
 * an FP-throughput block and of an integer-ALU throughput block (-1 when the thread could not be
 * moved there). The latency chains use one pipe at a time and do not notice a sibling hardware
 * thread that takes a share of the pipes; the throughput blocks keep every FP pipe, or every
 * integer ALU, busy, so they slow down when something else uses them.
 * xfer_s[k]: seconds per round trip of a cache line between the first CPU and CPU k (sb_xfer.h),
 * timed by two of the case's own workers; -1 for the first CPU itself and wherever no pair of
 * workers was there to time it (one CPU, before the pthreads pool exists, workers not pinned by the
 * harness, MPI ranks). */
typedef struct sb_probe_sample {
    int32_t n;
    int32_t cpu[SB_PROBE_MAX_CPUS];
    double int_mul_s[SB_PROBE_MAX_CPUS];
    double fp_lat_s[SB_PROBE_MAX_CPUS];
    double fp_tput_s[SB_PROBE_MAX_CPUS];
    double int_alu_s[SB_PROBE_MAX_CPUS];
    double xfer_s[SB_PROBE_MAX_CPUS];
} sb_probe_sample;

struct sb_ctx;

/* Times the chains on every CPU of the case (the pin list likwid's environment names, else the
 * CPUs the last repetition's workers ran on, else the current CPU) by moving the calling thread
 * there and back: no thread is created, so pthread_create wrappers (liblikwidpin) see nothing. The
 * cache-line transfers are timed by the workers that exist: the OpenMP team (sb_probe_team) or the
 * pthreads pool (a job of the pool once the first repetition created it). */
void sb_probe_measure(struct sb_ctx *ctx, sb_probe_sample *out);

/* Times the chains on every CPU listed in s (s->cpu[0..n-1]) by moving the calling thread to each
 * and back; an entry whose CPU the thread cannot move to is marked unmeasured. */
void sb_probe_on_cpus(sb_probe_sample *s);

/* Times the chains on the calling thread's CPU into entry k of s. */
void sb_probe_chains(sb_probe_sample *s, int32_t k);

/* Marks entry k of s as not measured (the thread could not be moved to its CPU). */
void sb_probe_unmeasured(sb_probe_sample *s, int32_t k);

/* The probe taken by the pinned OpenMP team itself, each worker on its own CPU at once, then the
 * transfers between worker 0 and each other prober in turn; 0 = not taken (no team in this binary,
 * not pinned by the harness, one thread), the caller probes instead.
 * Moving the main thread onto a CPU where an OpenMP worker spin-waits after its region (libgomp
 * spins for milliseconds) would make it wait for that CPU and time the spinning as disturbance. */
int sb_probe_team(const struct sb_ctx *ctx, sb_probe_sample *out);

/* Seconds the process's threads have spent runnable but waiting for a CPU, summed over
 * /proc/self/task/<tid>/schedstat (field 2); -1 if the kernel does not provide it. The difference
 * across a repetition says how long another process (or an extra worker) held its CPUs. */
double sb_probe_runq_wait(void);

/* Entries k = 1..pairs-1 of `out` whose transfers with entry 0 can be timed: out->cpu[k] differs
 * from out->cpu[0] (a ping-pong on one CPU waits a time slice per trip). */
int sb_probe_xfer_pair(const sb_probe_sample *out, int32_t k);

/* Writes ,"probe":{...}: the samples before and after the repetition, its run-queue wait and each
 * chain's fastest and slowest time over both samples (min_s, max_s; for xfer over the pairs). */
void sb_probe_put(FILE *f, const sb_probe_sample *before, const sb_probe_sample *after,
                  double runq_wait_s);

#endif /* SB_PROBE_H */
