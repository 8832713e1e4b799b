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
#include "sb_lock_sample.h"
#include "sb_wait.h"
#include "sb_workqueue.h"

#include <pthread.h>

/* Runs body(arg, worker) on `threads` workers (worker 0 = the caller) and returns when all are
 * done. The first call creates the pool (threads-1 helpers, shut down and joined at exit); later
 * calls wake the same helpers, so a repetition's setup is thread creation the first time and
 * wake-up latency afterwards. Fails the run (sb_fail) if a helper cannot be created, after
 * joining the helpers already created, or if a later call asks for a different thread count. */
void sb_run_workers(sb_ctx *ctx, int32_t threads, void (*body)(void *arg, int32_t worker),
                    void *arg);

/* Workers of the pool (the caller included): 0 before the first sb_run_workers created it. */
int32_t sb_pool_threads(void);

/* The --wait-policy that runs in this process: auto resolved once against the CPUs the workers may
 * use (the harness's pin list, else the affinity mask). enum sb_wait_policy, never SB_WAIT_AUTO. */
int32_t sb_wait_applied(const sb_ctx *ctx);

/* A barrier of `threads` workers that waits as sb_wait_applied says: the kernels' own barriers. */
void sb_workers_barrier_init(const sb_ctx *ctx, sb_barrier *barrier, int32_t threads);

/* A worker's stream of lock acquisitions at the start of its share in a repetition: timed from its
 * first acquisition on with two or more workers ({0, 0}), never (SB_LOCK_UNSAMPLED) on one worker,
 * which has nobody to wait for, or with the measurements compiled out. */
sb_lock_sampler sb_worker_locks_start(const sb_ctx *ctx);

/* The timed acquisition of a worker's stream (sb_lock_timed_fn, arg = the sb_ctx): a trylock first,
 * the clock only when it fails (an uncontended lock waits 0), the wait times its weight added to
 * the worker's waiting (sb_worker_add_wait). */
sb_lock_sampler sb_lock_timed(void *ctx, int32_t worker, sb_lock_sampler s, pthread_mutex_t *mutex);

/* How a pthreads kernel's worker takes one of its locks: through its stream `locks`, or, with locks
 * NULL, plainly, as one of the acquisitions sb_lock_untimed_run counted off. A kernel's loop of
 * acquisitions over units [i, end):
 *     while (i < end) {
 *         for (int64_t plain_end = i + sb_lock_untimed_run(&locks, end - i); i < plain_end; i++)
 *             ... sb_worker_lock(ctx, worker, NULL, mutex) ...
 *         if (i < end)
 *             ... sb_worker_lock(ctx, worker, &locks, mutex) ... i++
 *     } */
static inline void sb_worker_lock(sb_ctx *ctx, int32_t worker, sb_lock_sampler *locks,
                                  pthread_mutex_t *mutex) {
#if defined(SB_WORKER_TIMES) && !SB_WORKER_TIMES
    (void)ctx, (void)worker, (void)locks;
    pthread_mutex_lock(mutex);
#else
    if (locks)
        sb_lock_sampled(locks, sb_lock_timed, ctx, worker, mutex);
    else
        pthread_mutex_lock(mutex);
#endif
}

/* The queue's workers time their waits for its locks (the coarse cursor's, the fine slots') like
 * the kernels' own, in the stream of their cursor; on one worker, or with the measurements
 * compiled out, the queue keeps pthread_mutex_lock. Call after sb_queue_init, before the workers
 * run. */
void sb_queue_time_waits(sb_queue *queue, sb_ctx *ctx);

/* Work on a range of units [begin, end) of the queue, in worker `worker`. locks: the worker's
 * stream of lock acquisitions, shared with the queue's fetches; the work copies it into a local
 * variable for its loop of sb_worker_lock and stores it back at the end, so that the countdown
 * stays in a register (sb_lock_sample.h). */
typedef void (*sb_range_work)(void *arg, int32_t worker, int64_t begin, int64_t end,
                              sb_lock_sampler *locks);

/* One worker's timed share, called by every worker from its sb_run_workers body, as harness.h's
 * life cycle asks: all meet at `barrier` (sb_workers_barrier_init for `threads` workers), worker 0
 * starts the clock, all meet again so nobody starts before it; then sb_worker_begin, work(arg,
 * worker, ..., the cursor's stream of lock acquisitions) for each range the queue hands this
 * worker, sb_worker_end; all meet once the last range is done, and worker 0 stops the clock. */
void sb_timed_queue_share(sb_ctx *ctx, sb_barrier *barrier, sb_queue *queue, int32_t worker,
                          sb_range_work work, void *arg);

#endif /* SB_THREADS_H */
