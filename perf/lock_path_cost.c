/*
 * What one acquisition through the kernels' sampled lock path costs, measured on one thread, where
 * the lock is never contended and the figure does not depend on how the lock is handed over
 * between workers (perf/perf_worker_times.py bounds the two-worker cost with it). Five loops,
 * interleaved round by round, each ACQUISITIONS long:
 *   plain    pthread_mutex_lock + unlock: what the build without measurements takes
 *   sampled  sb_worker_lock of a two-worker context + unlock in the kernels' loop (sb_threads.h):
 *            the untimed acquisitions before the next timed one counted off at once and taken
 *            plainly, the timed one (a trylock, the draw) for the first 64 and one in
 *            SB_LOCK_SAMPLE_EVERY
 *   queue plain, queue sampled
 *            ranges of one unit of a coarse-locked work queue, each the queue's fetch under its
 * lock and the range's one kernel lock, as pi --schedule queue --batch 1 takes them: plainly (no
 * stream) and through the worker's stream shared by the queue and the kernel clock    sb_now(), the
 * clock a timed acquisition reads twice when its trylock fails A second thread exists throughout
 * but never touches the lock: with one thread in the process glibc takes a mutex without an atomic
 * instruction, with two (as at two workers) it uses one. Prints one JSON line: each loop's
 * nanoseconds per operation, the least over the rounds, and the sampling's constants
 * (sb_lock_sample.h) the bound is computed with.
 */
#define _GNU_SOURCE
#include "sb_descriptors.h"
#include "sb_internal.h"
#include "sb_options.h"
#include "sb_threads.h"
#include "sb_workqueue.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define ROUNDS 41
#define ACQUISITIONS 200000

static const sb_kernel_desc pthreads_kernel = {SB_DESC_PTHREADS("mcpi", SB_KERNEL_MCPI),
                                               .lang = "c"};

static pthread_barrier_t done;

static void *bystander(void *unused) {
    (void)unused;
    pthread_barrier_wait(&done);
    return NULL;
}

/* One acquisition + release through sb_worker_lock: plainly with locks NULL, else through the
 * stream. */
static inline void lock_unlock(sb_ctx *ctx, sb_lock_sampler *locks, pthread_mutex_t *mutex) {
    sb_worker_lock(ctx, 0, locks, mutex);
    pthread_mutex_unlock(mutex);
}

/* ns per acquisition + release: pthread_mutex_lock when sampled is 0, else the kernels' loop
 * (sb_threads.h): the untimed acquisitions before the next timed one counted off at once */
static double lock_ns(sb_ctx *ctx, int sampled, pthread_mutex_t *mutex) {
    sb_lock_sampler locks = sb_worker_locks_start(ctx);
    const double t0 = sb_now();
    if (sampled)
        for (int64_t i = 0; i < ACQUISITIONS;) {
            for (const int64_t plain_end = i + sb_lock_untimed_run(&locks, ACQUISITIONS - i);
                 i < plain_end; i++)
                lock_unlock(ctx, NULL, mutex);
            if (i < ACQUISITIONS) {
                lock_unlock(ctx, &locks, mutex);
                i++;
            }
        }
    else
        for (int i = 0; i < ACQUISITIONS; i++) {
            pthread_mutex_lock(mutex);
            pthread_mutex_unlock(mutex);
        }
    return (sb_now() - t0) / ACQUISITIONS * 1e9;
}

/* One range of π --schedule queue --sync coarse --batch 1 after its fetch: the range's one
 * acquisition of the kernel's lock, the stream copied in and out as the kernels do (sb_range_work).
 */
static __attribute__((noinline)) void one_locked_unit(sb_ctx *ctx, pthread_mutex_t *mutex,
                                                      sb_lock_sampler *stream) {
    sb_lock_sampler locks = *stream;
    lock_unlock(ctx, sb_lock_untimed_run(&locks, 1) ? NULL : &locks, mutex);
    *stream = locks;
}

/* ns per range of that pattern: the queue's fetch under its coarse lock, then the range's unit.
 * Sampled: the queue times its lock and the stream starts as a worker's share does (two workers);
 * plain: neither (the stream is never timed, the queue takes pthread_mutex_lock). */
static double queue_ns(sb_ctx *ctx, int sampled) {
    sb_queue q;
    if (sb_queue_init(&q, SB_SCHED_QUEUE, SB_SYNC_COARSE, ACQUISITIONS, 1, 2) != 0) {
        fprintf(stderr, "lock-path-cost: cannot set up a work queue\n");
        exit(1);
    }
    if (sampled)
        sb_queue_time_waits(&q, ctx);
    sb_queue_cursor c;
    sb_queue_cursor_init(&c, &q, 0);
    c.locks = sampled ? sb_worker_locks_start(ctx) : SB_LOCK_UNSAMPLED;
    int64_t begin, end;
    const double t0 = sb_now();
    while (sb_queue_next(&q, &c, &begin, &end))
        one_locked_unit(ctx, &q.global, &c.locks);
    const double ns = (sb_now() - t0) / ACQUISITIONS * 1e9;
    sb_queue_destroy(&q);
    return ns;
}

static double clock_ns(void) {
    volatile double sink = 0;
    const double t0 = sb_now();
    for (int i = 0; i < ACQUISITIONS; i++)
        sink = sb_now();
    (void)sink;
    return (sb_now() - t0) / ACQUISITIONS * 1e9;
}

static double least(double a, double b) {
    return b < a ? b : a;
}

/* A context of `threads` workers; 0 when it cannot be set up. */
static int workers_ctx(sb_ctx *ctx, const char *threads) {
    char prog[] = "lock-path-cost", option[] = "--threads", value[8];
    snprintf(value, sizeof value, "%s", threads);
    char *argv[] = {prog, option, value, NULL};
    sb_cli cli;
    char err[256] = "";
    if (sb_parse_options(&pthreads_kernel, 3, argv, &cli, err, sizeof err) != SB_PARSE_OK ||
        sb_ctx_init(ctx, &pthreads_kernel, &cli) != 0) {
        fprintf(stderr, "lock-path-cost: cannot set up a context of %s workers: %s\n", threads,
                err);
        return 0;
    }
    return 1;
}

int main(void) {
    sb_ctx two;
    if (!workers_ctx(&two, "2"))
        return 1;
    pthread_t other;
    if (pthread_barrier_init(&done, NULL, 2) != 0 ||
        pthread_create(&other, NULL, bystander, NULL) != 0) {
        fprintf(stderr, "lock-path-cost: cannot start the second thread\n");
        return 1;
    }
    pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
    double plain = 1e30, sampled = 1e30, queue_plain = 1e30, queue_sampled = 1e30, clock = 1e30;
    for (int r = 0; r < ROUNDS; r++) {
        plain = least(plain, lock_ns(&two, 0, &mutex));
        sampled = least(sampled, lock_ns(&two, 1, &mutex));
        queue_plain = least(queue_plain, queue_ns(&two, 0));
        queue_sampled = least(queue_sampled, queue_ns(&two, 1));
        clock = least(clock, clock_ns());
    }
    pthread_barrier_wait(&done);
    pthread_join(other, NULL);
    printf("{\"plain_ns\":%.4f,\"sampled_ns\":%.4f,\"queue_plain_ns\":%.4f,"
           "\"queue_sampled_ns\":%.4f,\"clock_ns\":%.4f,\"rounds\":%d,\"acquisitions\":%d,"
           "\"timed_first\":%d,\"sample_every\":%d,\"worker_times\":%d}\n",
           plain, sampled, queue_plain, queue_sampled, clock, ROUNDS, ACQUISITIONS,
           SB_LOCK_TIMED_FIRST, SB_LOCK_SAMPLE_EVERY, SB_WORKER_TIMES);
    sb_ctx_free(&two);
    return 0;
}
