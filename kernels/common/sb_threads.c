/*
 * The persistent worker pool of the pthreads kernels. Helpers block on a condition variable between
 * jobs instead of spinning: with up to 4096 workers on a few cores, spinning helpers would steal
 * the CPU from the ones computing. The cost is the wake-up latency, which falls into setup_s.
 */
#define _POSIX_C_SOURCE 200809L
#include "sb_threads.h"
#include "sb_internal.h"

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Small stacks: 4096 workers x the 8 MiB default would reserve 32 GiB of address space. */
#define WORKER_STACK_BYTES (256 * 1024)

typedef struct {
    pthread_mutex_t lock;
    pthread_cond_t job_posted; /* helpers wait here for the next generation (or shutdown) */
    pthread_cond_t job_done;   /* the caller waits here until `pending` is 0 */
    void (*body)(void *, int32_t);
    void *arg;
    uint64_t generation; /* bumped once per job: a helper runs each generation exactly once */
    int32_t pending;     /* helpers still running the current job */
    int busy;            /* a job is in progress: helpers may be inside the kernel's barriers */
    int shutdown;
    int32_t threads; /* workers including the caller; 0 = no pool yet */
    int32_t created; /* helpers created (1..created are running) */
    pthread_t *tids; /* tids[w] for helper w */
} worker_pool;

static worker_pool pool = {
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .job_posted = PTHREAD_COND_INITIALIZER,
    .job_done = PTHREAD_COND_INITIALIZER,
};

static void *helper_main(void *p) {
    const int32_t worker = (int32_t)(intptr_t)p;
    uint64_t seen = 0;
    pthread_mutex_lock(&pool.lock);
    for (;;) {
        while (pool.generation == seen && !pool.shutdown)
            pthread_cond_wait(&pool.job_posted, &pool.lock);
        if (pool.shutdown)
            break;
        seen = pool.generation;
        void (*body)(void *, int32_t) = pool.body;
        void *arg = pool.arg;
        pthread_mutex_unlock(&pool.lock);
        body(arg, worker);
        pthread_mutex_lock(&pool.lock);
        if (--pool.pending == 0)
            pthread_cond_signal(&pool.job_done);
    }
    pthread_mutex_unlock(&pool.lock);
    return NULL;
}

/* Wakes and joins every idle helper. Skipped while a job runs: exit() from inside a job (sb_fail)
 * must not wait for helpers that may be blocked in the kernel's barriers; the exit ends them. */
static void stop_pool(void) {
    pthread_mutex_lock(&pool.lock);
    const int idle = !pool.busy;
    if (idle)
        pool.shutdown = 1;
    pthread_cond_broadcast(&pool.job_posted);
    pthread_mutex_unlock(&pool.lock);
    if (!idle)
        return;
    for (int32_t w = 1; w <= pool.created; w++)
        pthread_join(pool.tids[w], NULL);
    free(pool.tids);
    pool.tids = NULL;
    pool.created = 0;
}

static void start_pool(sb_ctx *ctx, int32_t threads) {
    pool.tids = calloc((size_t)threads, sizeof *pool.tids);
    if (!pool.tids)
        sb_fail(ctx, "out of memory for worker threads");
    pool.threads = threads;
    if (atexit(stop_pool) != 0)
        sb_fail(ctx, "cannot register the worker pool's shutdown (atexit)");
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, WORKER_STACK_BYTES);
    /* In worker order, so likwid-pin's n-th created thread is worker n. */
    for (int32_t w = 1; w < threads; w++) {
        int rc = pthread_create(&pool.tids[w], &attr, helper_main, (void *)(intptr_t)w);
        if (rc != 0) {
            pthread_attr_destroy(&attr);
            stop_pool(); /* the helpers created so far are idle: join them, then fail */
            char msg[160];
            snprintf(msg, sizeof msg, "cannot create worker thread %d of %d: %s", (int)w,
                     (int)threads, strerror(rc));
            sb_fail(ctx, msg);
        }
        pool.created = w;
    }
    pthread_attr_destroy(&attr);
}

void sb_run_workers(sb_ctx *ctx, int32_t threads, void (*body)(void *arg, int32_t worker),
                    void *arg) {
    if (threads == 1) {
        body(arg, 0);
        return;
    }
    if (pool.threads == 0)
        start_pool(ctx, threads);
    else if (pool.threads != threads) {
        char msg[160];
        snprintf(msg, sizeof msg, "internal error: worker pool has %d threads, %d requested",
                 (int)pool.threads, (int)threads);
        sb_fail(ctx, msg);
    }
    pthread_mutex_lock(&pool.lock);
    pool.body = body;
    pool.arg = arg;
    pool.pending = threads - 1;
    pool.busy = 1;
    pool.generation++;
    pthread_cond_broadcast(&pool.job_posted);
    pthread_mutex_unlock(&pool.lock);
    body(arg, 0);
    /* The kernel's state lives in run()'s frame: return only once no helper can touch it. */
    pthread_mutex_lock(&pool.lock);
    while (pool.pending > 0)
        pthread_cond_wait(&pool.job_done, &pool.lock);
    pool.busy = 0;
    pthread_mutex_unlock(&pool.lock);
}

/* Acquisitions until the next timed one after the first SB_LOCK_TIMED_FIRST: geometric with mean
 * SB_LOCK_SAMPLE_EVERY, so each acquisition is timed with chance 1 / SB_LOCK_SAMPLE_EVERY,
 * independently (a Bernoulli process), while the acquisitions in between cost one decrement.
 * xorshift64, seeded per worker and repetition. */
static int64_t next_gap(sb_worker_times *t, int32_t worker) {
    uint64_t x = t->lock_draw ? t->lock_draw : 0x9E3779B97F4A7C15u * (uint64_t)(worker + 1);
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    t->lock_draw = x;
    const double u = (double)((x >> 11) + 1) * 0x1.0p-53; /* (0, 1] */
    return 1 + (int64_t)(log(u) / log(1.0 - 1.0 / SB_LOCK_SAMPLE_EVERY));
}

/* The draw when the countdown runs out: each of the first SB_LOCK_TIMED_FIRST acquisitions (the
 * countdown is set to 1 after each), then a timed one SB_LOCK_SAMPLE_EVERY apart on average. Out of
 * line: the common path is the one decrement in lock_wait_weight. */
static __attribute__((noinline)) int lock_gap_ended(sb_worker_times *t, int32_t worker) {
    if (t->locks < SB_LOCK_TIMED_FIRST) {
        t->lock_gap = ++t->locks == SB_LOCK_TIMED_FIRST ? next_gap(t, worker) : 1;
        return 1;
    }
    t->lock_gap = next_gap(t, worker);
    return SB_LOCK_SAMPLE_EVERY;
}

/* One decrement and a branch per untimed acquisition (inlined into sb_mutex_lock_timed): a call
 * there cost ~1 ns per acquisition, +18 % on --batch 1 pi with the coarse lock on one thread. */
static inline int lock_wait_weight(sb_worker_times *t, int32_t worker) {
    if (__builtin_expect(--t->lock_gap > 0, 1))
        return 0;
    return lock_gap_ended(t, worker);
}

/* A timed acquisition, out of line so that the untimed path saves no registers for it: a trylock
 * first, the clock only when it fails. */
static __attribute__((noinline)) void lock_timed_wait(sb_worker_times *t, int weight,
                                                      pthread_mutex_t *mutex) {
    if (pthread_mutex_trylock(mutex) == 0)
        return;
    const double t0 = sb_now();
    pthread_mutex_lock(mutex);
    /* Horvitz-Thompson: a timed wait stands for 1 / (its chance of being timed) waits */
    t->wait_s += (sb_now() - t0) * weight;
}

int sb_lock_wait_weight(sb_worker_times *t, int32_t worker) {
    return lock_wait_weight(t, worker);
}

void sb_mutex_lock_timed(sb_ctx *ctx, int32_t worker, pthread_mutex_t *mutex) {
    if (!SB_WORKER_TIMES || worker < 0 || worker >= ctx->cli.p.threads) {
        pthread_mutex_lock(mutex);
        return;
    }
    sb_worker_times *t = &ctx->workers[worker];
    const int weight = lock_wait_weight(t, worker);
    if (weight == 0)
        pthread_mutex_lock(mutex);
    else
        lock_timed_wait(t, weight, mutex);
}

static void lock_timed(void *ctx, int32_t worker, pthread_mutex_t *mutex) {
    sb_mutex_lock_timed(ctx, worker, mutex);
}

void sb_queue_time_waits(sb_queue *queue, sb_ctx *ctx) {
    sb_queue_lock_with(queue, lock_timed, ctx);
}

void sb_timed_queue_share(sb_ctx *ctx, pthread_barrier_t *barrier, sb_queue *queue, int32_t worker,
                          sb_range_work work, void *arg) {
    /* this worker's core clock, before the clock starts */
    sb_worker_clock(ctx, worker, 0);
    pthread_barrier_wait(barrier); /* all workers exist */
    if (worker == 0)
        sb_compute_begin(ctx);
    pthread_barrier_wait(barrier); /* nobody starts before the clock */
    sb_worker_begin(ctx, worker);
    sb_queue_cursor cursor;
    sb_queue_cursor_init(&cursor, queue, worker);
    int64_t begin, end;
    while (sb_queue_next(queue, &cursor, &begin, &end))
        work(arg, worker, begin, end);
    sb_worker_end(ctx, worker);
    pthread_barrier_wait(barrier); /* every share is done */
    if (worker == 0)
        sb_compute_end(ctx);
    sb_worker_clock(ctx, worker, 1); /* after it stopped */
}
