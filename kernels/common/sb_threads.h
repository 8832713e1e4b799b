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

/* pthread_mutex_lock that estimates the worker's wait on it without timing every acquisition (which
 * costs more than the kernels' per-sample critical sections): each of a worker's first
 * SB_LOCK_TIMED_FIRST acquisitions in a repetition and then one in SB_LOCK_SAMPLE_EVERY, drawn at
 * random, is timed (a trylock first: the clock is read only when it fails, so an uncontended lock
 * waits 0); a timed wait counts SB_LOCK_SAMPLE_EVERY times (1 among the first). Unbiased; its
 * relative standard error is sqrt((SB_LOCK_SAMPLE_EVERY - 1) / n) x sqrt(1 + cv^2) for n
 * acquisitions whose waits have coefficient of variation cv (docs/pop-metrics.md). */
#define SB_LOCK_TIMED_FIRST 64
#define SB_LOCK_SAMPLE_EVERY 64

/* sb_mutex_lock_timed's draw for the worker's next acquisition: the weight of its wait if it is
 * timed (1 among the first SB_LOCK_TIMED_FIRST, SB_LOCK_SAMPLE_EVERY afterwards), 0 if it is not.
 */
struct sb_worker_times;
int sb_lock_wait_weight(struct sb_worker_times *t, int32_t worker);

void sb_mutex_lock_timed(sb_ctx *ctx, int32_t worker, pthread_mutex_t *mutex);

/* How a worker takes a lock: sb_mutex_lock_timed, or a plain pthread_mutex_lock. */
typedef void (*sb_lock_fn)(sb_ctx *ctx, int32_t worker, pthread_mutex_t *mutex);

/* The lock function of this run's workers, chosen once before they run: sb_mutex_lock_timed when
 * there are two or more, a plain pthread_mutex_lock when there is one (nobody to wait for: its wait
 * is 0) or the measurements are compiled out. One worker's per-acquisition path is then the same
 * instructions in both builds. */
sb_lock_fn sb_worker_lock(const sb_ctx *ctx);

/* The queue's workers take its locks with sb_mutex_lock_timed (their waits for the cursor and the
 * slots are sampled like the kernels' own locks); on one worker, or with the measurements compiled
 * out, the queue keeps pthread_mutex_lock. Call after sb_queue_init, before the workers run. */
void sb_queue_time_waits(sb_queue *queue, sb_ctx *ctx);

/* Work on a range of units [begin, end) of the queue, in worker `worker`. */
typedef void (*sb_range_work)(void *arg, int32_t worker, int64_t begin, int64_t end);

/* One worker's timed share, called by every worker from its sb_run_workers body, as harness.h's
 * life cycle asks: all meet at `barrier` (sb_workers_barrier_init for `threads` workers), worker 0
 * starts the clock, all meet again so nobody starts before it; then sb_worker_begin, work(arg,
 * worker, ...) for each range the queue hands this worker, sb_worker_end; all meet once the last
 * range is done, and worker 0 stops the clock. */
void sb_timed_queue_share(sb_ctx *ctx, sb_barrier *barrier, sb_queue *queue, int32_t worker,
                          sb_range_work work, void *arg);

#endif /* SB_THREADS_H */
