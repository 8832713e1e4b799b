/*
 * Workers of the pthreads kernels: one pool of threads-1 helper threads for the life of the
 * process, created in creation order 1..threads-1 on the first repetition and reused by every later
 * one (the calling thread is worker 0), as libgomp keeps its team. likwid-pin pins each
 * pthread_create round-robin over its cpu list, so worker i runs on list entry i (mod the list
 * length) in every repetition, warm-ups included, exactly like OpenMP thread i.
 */
#ifndef SB_THREADS_H
#define SB_THREADS_H

#include "harness.h"

/* Runs body(arg, worker) on `threads` workers (worker 0 = the caller) and returns when all are
 * done. The first call creates the pool (threads-1 helpers, shut down and joined at exit); later
 * calls wake the same helpers, so a repetition's setup is thread creation the first time and
 * wake-up latency afterwards. Fails the run (sb_fail) if a helper cannot be created, after
 * joining the helpers already created, or if a later call asks for a different thread count. */
void sb_run_workers(sb_ctx *ctx, int32_t threads, void (*body)(void *arg, int32_t worker),
                    void *arg);

#endif /* SB_THREADS_H */
