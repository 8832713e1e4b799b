/*
 * Monte-Carlo π, pthreads. The unit of work is a batch of --batch samples; --schedule distributes
 * batches (sb_workqueue.h) and after each batch the worker adds the batch's hits to the shared
 * result as --sync says:
 *   none    each worker sums locally and writes its own slot once; nothing shared (block|cyclic)
 *   coarse  one global mutex around the shared total AND the shared batch cursor (queue)
 *   fine    per-worker slots, each with its own lock: a worker adds to its own slot under that lock
 *           (uncontended unless someone reads it); the queue likewise has one locked slot of
 *           batches per worker, idle workers steal from the others; worker 0 sums the slots
 *   atomic  lock-free: atomic_fetch_add on the shared total and on the batch cursor
 */
#define _POSIX_C_SOURCE 200809L
#include "harness.h"
#include "sb_descriptors.h"
#include "sb_rng.h"
#include "sb_simd.h"
#include "sb_threads.h"
#include "sb_workqueue.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

/* Per-worker result slot on its own cache line. */
typedef struct {
    pthread_mutex_t lock;
    int64_t hits;
    char pad[64];
} hit_slot;

typedef struct {
    sb_ctx *ctx;
    const sb_params *p;
    sb_queue queue;
    sb_barrier barrier;
    int64_t total;                /* coarse (under queue.global) */
    _Atomic int64_t total_atomic; /* atomic */
    hit_slot *slots;              /* none, fine */
} shared_state;

/* locks: the worker's stream of acquisitions for a timed one, NULL for an untimed one
 * (sb_worker_lock); coarse and fine only. */
static inline void add_hits(shared_state *s, int32_t worker, sb_lock_sampler *locks, int64_t h) {
    switch (s->p->sync) {
    case SB_SYNC_NONE:
        s->slots[worker].hits += h; /* only this worker touches its slot until the barrier */
        break;
    case SB_SYNC_COARSE:
        sb_worker_lock(s->ctx, worker, locks, &s->queue.global);
        s->total += h;
        pthread_mutex_unlock(&s->queue.global);
        break;
    case SB_SYNC_FINE:
        sb_worker_lock(s->ctx, worker, locks, &s->slots[worker].lock);
        s->slots[worker].hits += h;
        pthread_mutex_unlock(&s->slots[worker].lock);
        break;
    default:
        atomic_fetch_add_explicit(&s->total_atomic, h, memory_order_relaxed);
        break;
    }
}

static inline int64_t batch_hits(const sb_params *p, int64_t b) {
    const int64_t s0 = b * p->batch;
    return sb_pi_hits_inner(p, s0, sb_pi_batch_end(s0, p->batch, p->samples));
}

/* sb_range_work: batches [begin, end), each batch's hits published as --sync says. */
static void count_batches(void *arg, int32_t worker, int64_t begin, int64_t end,
                          sb_lock_sampler *stream) {
    shared_state *s = arg;
    const sb_params *p = s->p;
    if (p->sync == SB_SYNC_NONE) /* nothing published per batch: the serial kernel's loop */
        add_hits(s, worker, NULL, sb_pi_hits_batches(p, begin, end));
    else {
        sb_lock_sampler locks = *stream;
        for (int64_t b = begin; b < end;) {
            /* the batches before the next timed acquisition take the lock plainly */
            for (const int64_t plain_end = b + sb_lock_untimed_run(&locks, end - b); b < plain_end;
                 b++)
                add_hits(s, worker, NULL, batch_hits(p, b));
            if (b < end)
                add_hits(s, worker, &locks, batch_hits(p, b++));
        }
        *stream = locks;
    }
    if (end > begin) /* samples of batches [begin, end): the last batch may be short */
        sb_worker_add_work(s->ctx, worker,
                           (end * p->batch < p->samples ? end * p->batch : p->samples) -
                               begin * p->batch);
}

static void worker_body(void *arg, int32_t worker) {
    shared_state *s = arg;
    sb_timed_queue_share(s->ctx, &s->barrier, &s->queue, worker, count_batches, s);
}

static int64_t collect_total(shared_state *s) {
    switch (s->p->sync) {
    case SB_SYNC_COARSE:
        return s->total;
    case SB_SYNC_ATOMIC:
        return atomic_load(&s->total_atomic);
    default: {
        int64_t t = 0;
        for (int32_t w = 0; w < s->p->threads; w++)
            t += s->slots[w].hits;
        return t;
    }
    }
}

static int run(sb_ctx *ctx) {
    const sb_params *p = sb_params_get(ctx);
    shared_state s = {.ctx = ctx, .p = p, .total = 0};
    atomic_init(&s.total_atomic, 0);
    const int64_t nbatches = sb_pi_batches(p);
    s.slots = calloc((size_t)p->threads, sizeof *s.slots);
    if (!s.slots || sb_queue_init(&s.queue, p->schedule, p->sync, nbatches, 1, p->threads) != 0)
        sb_fail(ctx, "cannot initialise the work queue or slots");
    sb_workers_barrier_init(ctx, &s.barrier, p->threads);
    for (int32_t w = 0; w < p->threads; w++)
        pthread_mutex_init(&s.slots[w].lock, NULL);
    sb_queue_time_waits(&s.queue, ctx);
    sb_run_workers(ctx, p->threads, worker_body, &s);
    sb_set_hits(ctx, collect_total(&s));
    for (int32_t w = 0; w < p->threads; w++)
        pthread_mutex_destroy(&s.slots[w].lock);
    free(s.slots);
    sb_queue_destroy(&s.queue);
    return 0;
}

const sb_kernel_desc sb_kernel = {
    SB_DESC_PTHREADS("mcpi", SB_KERNEL_MCPI),
    .lang = "c",
    .chunk_schedules = 0,
    .help =
        "pthreads model: the calling thread is worker 0; threads-1 helpers are created once, on\n"
        "the first repetition, and reused by every later one (a pool, as OpenMP keeps its team),\n"
        "so under likwid-pin worker i runs on list entry i in every repetition. setup_s = start\n"
        "of the repetition until all workers reached the start barrier: thread creation on the\n"
        "first repetition, wake-up latency afterwards (use --warmup). The unit of work is one\n"
        "batch of --batch samples; --schedule: block = one contiguous range of batches per\n"
        "worker; cyclic = batches dealt round-robin; queue = batches taken one at a time from\n"
        "shared state (no ',chunk': --batch sets the grain). After each batch the worker\n"
        "publishes its hits as --sync says: none = a private per-worker slot, summed once all\n"
        "workers are done (block|cyclic only); coarse = one global mutex around the shared total\n"
        "and the shared batch cursor; fine = per-worker slots each with its own lock (the queue\n"
        "likewise: one locked slot of batches per worker, idle workers steal); atomic = lock-free\n"
        "atomic_fetch_add on the shared total and the batch cursor.",
    .run = run,
    .inner_simd = 1,
};
