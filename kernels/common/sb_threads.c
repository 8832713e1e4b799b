/*
 * The persistent worker pool of the pthreads kernels. Helpers wait for the next job, and the caller
 * for the job's end, with sb_wait.h's spin-then-sleep waits under --wait-policy: the caller spins
 * as long as the policy says (its wait is inside the repetition); a parked helper spins at most
 * SB_SPIN_BETWEEN_JOBS pause iterations and then sleeps, so the probe and the record between
 * repetitions run beside sleeping helpers. With up to 4096 workers on a few cores, auto sleeps at
 * once. The wake-up latency falls into setup_s.
 */
#define _GNU_SOURCE
#include "sb_threads.h"
#include "sb_internal.h"
#include "sb_pin.h"

#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Small stacks: 4096 workers x the 8 MiB default would reserve 32 GiB of address space. */
#define WORKER_STACK_BYTES (256 * 1024)

typedef struct {
    sb_wait_word posted;     /* the generation: bumped once per job (and at shutdown) */
    sb_wait_word done;       /* set to the generation by the helper that finishes the job last */
    _Atomic int32_t pending; /* helpers still running the current job */
    void (*body)(void *, int32_t);
    void *arg;
    int64_t park_spin; /* pause iterations a parked helper spins before it sleeps */
    int64_t done_spin; /* pause iterations the caller spins for the job's end */
    atomic_int busy;   /* a job is in progress: helpers may be inside the kernel's barriers */
    atomic_int shutdown;
    int32_t threads; /* workers including the caller; 0 = no pool yet */
    int32_t created; /* helpers created (1..created are running) */
    pthread_t *tids; /* tids[w] for helper w */
} worker_pool;

static worker_pool pool;

/* CPUs the workers may use: the harness's pin list (its distinct CPUs) or the affinity mask. */
static int32_t worker_cpus(void) {
    int32_t n = 0;
    const int32_t *list = sb_pin_list(&n);
    if (!list)
        return sb_wait_allowed_cpus();
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int32_t k = 0; k < n; k++)
        if (list[k] >= 0 && list[k] < CPU_SETSIZE)
            CPU_SET(list[k], &set);
    return CPU_COUNT(&set) > 0 ? CPU_COUNT(&set) : 1;
}

int32_t sb_pool_threads(void) {
    return pool.threads;
}

int32_t sb_wait_applied(const sb_ctx *ctx) {
    static int32_t applied = -1; /* one policy per process: the pool lives as long */
    if (applied < 0)
        applied = sb_wait_resolve(ctx->cli.wait_policy, ctx->cli.p.threads, worker_cpus());
    return applied;
}

void sb_workers_barrier_init(const sb_ctx *ctx, sb_barrier *barrier, int32_t threads) {
    sb_barrier_init(barrier, (uint32_t)threads, sb_wait_spin_limit(sb_wait_applied(ctx)));
}

static void *helper_main(void *p) {
    const int32_t worker = (int32_t)(intptr_t)p;
    uint32_t seen = 0;
    for (;;) {
        sb_wait_while_equal(&pool.posted, seen, pool.park_spin);
        if (atomic_load(&pool.shutdown))
            break;
        seen = atomic_load_explicit(&pool.posted.value, memory_order_acquire);
        pool.body(pool.arg, worker);
        if (atomic_fetch_sub(&pool.pending, 1) == 1)
            sb_wait_store_wake(&pool.done, seen);
    }
    return NULL;
}

/* Wakes and joins every idle helper. Skipped while a job runs: exit() from inside a job (sb_fail)
 * must not wait for helpers that may be blocked in the kernel's barriers; the exit ends them. */
static void stop_pool(void) {
    if (atomic_load(&pool.busy))
        return;
    atomic_store(&pool.shutdown, 1);
    sb_wait_store_wake(&pool.posted, atomic_load(&pool.posted.value) + 1);
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
    const int32_t applied = sb_wait_applied(ctx);
    pool.done_spin = sb_wait_spin_limit(applied);
    pool.park_spin = applied == SB_WAIT_SPIN ? SB_SPIN_BETWEEN_JOBS : 0;
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
    const uint32_t generation = atomic_load(&pool.posted.value) + 1;
    pool.body = body;
    pool.arg = arg;
    atomic_store(&pool.pending, threads - 1);
    atomic_store(&pool.busy, 1);
    sb_wait_store_wake(&pool.posted, generation); /* publishes body and arg (release) */
    body(arg, 0);
    /* The kernel's state lives in run()'s frame: return only once no helper can touch it. */
    sb_wait_while_equal(&pool.done, generation - 1, pool.done_spin);
    atomic_store(&pool.busy, 0);
}

/* Acquisitions until the next timed one after the first SB_LOCK_TIMED_FIRST: geometric with mean
 * SB_LOCK_SAMPLE_EVERY, so each acquisition is timed with chance 1 / SB_LOCK_SAMPLE_EVERY,
 * independently (a Bernoulli process). xorshift64, one state per worker and repetition, shared by
 * the worker's streams. */
static int64_t next_gap(sb_worker_times *t, int32_t worker) {
    uint64_t x = t->lock_draw ? t->lock_draw : 0x9E3779B97F4A7C15u * (uint64_t)(worker + 1);
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    t->lock_draw = x;
    const double u = (double)((x >> 11) + 1) * 0x1.0p-53; /* (0, 1] */
    return 1 + (int64_t)(log(u) / log(1.0 - 1.0 / SB_LOCK_SAMPLE_EVERY));
}

sb_lock_sampler sb_lock_timed(void *arg, int32_t worker, sb_lock_sampler s,
                              pthread_mutex_t *mutex) {
    sb_ctx *ctx = arg;
    sb_worker_times *t = &ctx->workers[worker];
    /* each of the first SB_LOCK_TIMED_FIRST (the countdown is set to 1 after each), then one
     * SB_LOCK_SAMPLE_EVERY apart on average */
    int weight = SB_LOCK_SAMPLE_EVERY;
    if (s.first < SB_LOCK_TIMED_FIRST) {
        weight = 1;
        s.gap = ++s.first == SB_LOCK_TIMED_FIRST ? next_gap(t, worker) : 1;
    } else
        s.gap = next_gap(t, worker);
    if (pthread_mutex_trylock(mutex) == 0)
        return s;
    const double t0 = sb_now();
    pthread_mutex_lock(mutex);
    /* Horvitz-Thompson: a timed wait stands for 1 / (its chance of being timed) waits */
    t->wait_s += (sb_now() - t0) * weight;
    return s;
}

/* Two or more workers, measurements compiled in: the waits are sampled. */
static int waits_sampled(const sb_ctx *ctx) {
    return SB_WORKER_TIMES && ctx->cli.p.threads > 1;
}

sb_lock_sampler sb_worker_locks_start(const sb_ctx *ctx) {
    return waits_sampled(ctx) ? (sb_lock_sampler){0, 0} : SB_LOCK_UNSAMPLED;
}

/* One worker waits for nobody and the build without measurements times nothing: the queue then
 * keeps its plain pthread_mutex_lock. */
void sb_queue_time_waits(sb_queue *queue, sb_ctx *ctx) {
    if (waits_sampled(ctx))
        sb_queue_lock_with(queue, sb_lock_timed, ctx);
}

void sb_timed_queue_share(sb_ctx *ctx, sb_barrier *barrier, sb_queue *queue, int32_t worker,
                          sb_range_work work, void *arg) {
    /* this worker's core clock, before the clock starts */
    sb_worker_clock(ctx, worker, 0);
    sb_barrier_wait(barrier); /* all workers exist */
    if (worker == 0)
        sb_compute_begin(ctx);
    sb_barrier_wait(barrier); /* nobody starts before the clock */
    sb_worker_begin(ctx, worker);
    sb_queue_cursor cursor;
    sb_queue_cursor_init(&cursor, queue, worker);
    cursor.locks = sb_worker_locks_start(ctx);
    int64_t begin, end;
    while (sb_queue_next(queue, &cursor, &begin, &end))
        work(arg, worker, begin, end, &cursor.locks);
    sb_worker_end(ctx, worker);
    sb_barrier_wait(barrier); /* every share is done */
    if (worker == 0)
        sb_compute_end(ctx);
    sb_worker_clock(ctx, worker, 1); /* after it stopped */
}
