/*
 * Worker start-up for the pthreads kernels: the calling thread is worker 0 and creates threads-1
 * helpers in order, so under likwid-pin (round-robin over its cpu list in creation order) worker i
 * runs on list entry i, as OpenMP threads do.
 */
#ifndef SB_THREADS_H
#define SB_THREADS_H

#include "harness.h"

/* Runs body(arg, worker) on `threads` workers (worker 0 = the caller) and returns when all are
 * done. Fails the run (sb_fail) if a thread cannot be created. */
void sb_run_workers(sb_ctx *ctx, int32_t threads, void (*body)(void *arg, int32_t worker),
                    void *arg);

#endif /* SB_THREADS_H */
