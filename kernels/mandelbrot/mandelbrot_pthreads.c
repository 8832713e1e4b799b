/*
 * Mandelbrot, pthreads. Rows are the unit of work; --schedule distributes them (sb_workqueue.h) and
 * --sync says what guards the shared state:
 *   none    static partition (block|cyclic), each row written by its owner without locks
 *   coarse  one global mutex, held for the queue cursor AND while each finished pixel is stored:
 *           the "synchronized method" of the Java study, i.e. the worst case of lock contention
 *   fine    a lock per row, held while each pixel of that row is stored; the queue takes chunks
 *           from per-worker slots each with its own lock (stealing from others when empty)
 *   atomic  lock-free: pixels stored with atomic_store (relaxed), queue cursor via fetch-add
 */
#define _POSIX_C_SOURCE 200809L
#include "harness.h"
#include "sb_descriptors.h"
#include "sb_mandelbrot.h"
#include "sb_simd.h"
#include "sb_threads.h"
#include "sb_workqueue.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

typedef struct {
    sb_ctx *ctx;
    const sb_params *p;
    uint32_t *image;
    sb_queue queue;
    sb_barrier barrier;
    pthread_mutex_t *row_locks; /* fine: one per row */
} shared_state;

/* Pixel (i, j): from the row the vector kernel computed, or by the scalar reference. */
static inline uint32_t pixel(const sb_params *p, const uint32_t *simd_row, int32_t i, int32_t j) {
    return simd_row ? simd_row[i] : sb_mandel_pixel(p, i, j);
}

/* A pixel stored under `lock`, taken through the worker's stream `locks` or plainly (NULL). */
static inline void store_pixel(shared_state *s, int32_t worker, sb_lock_sampler *locks,
                               pthread_mutex_t *lock, uint32_t *dst, uint32_t n) {
    sb_worker_lock(s->ctx, worker, locks, lock);
    *dst = n;
    pthread_mutex_unlock(lock);
}

/* sb_range_work: rows [begin, end), stored as --sync says. */
static void compute_rows(void *arg, int32_t worker, int64_t begin, int64_t end,
                         sb_lock_sampler *stream) {
    shared_state *s = arg; /* rows go to the shared image whoever computes them */
    const sb_params *p = s->p;
    const size_t w = (size_t)p->width;
    /* --inner simd computes a whole row at once: into this buffer, then stored pixel by pixel as
     * --sync says, so the locking is the same as with the scalar loop */
    uint32_t *simd_row = NULL;
    if (p->inner == SB_INNER_SIMD && p->sync != SB_SYNC_NONE && !(simd_row = malloc(w * 4)))
        sb_fail(s->ctx, "out of memory for a row");
    sb_lock_sampler locks = *stream; /* coarse, fine */
    for (int32_t j = (int32_t)begin; j < (int32_t)end; j++) {
        uint32_t *row = s->image + (size_t)j * w;
        if (simd_row)
            sb_mandel_row_inner(p, j, simd_row);
        switch (p->sync) {
        case SB_SYNC_NONE:
            sb_mandel_row_inner(p, j, row);
            break;
        case SB_SYNC_COARSE:
        case SB_SYNC_FINE: {
            pthread_mutex_t *lock = p->sync == SB_SYNC_COARSE ? &s->queue.global : &s->row_locks[j];
            for (int32_t i = 0; i < p->width;) {
                /* the pixels before the next timed acquisition take the lock plainly */
                for (const int64_t plain_end = i + sb_lock_untimed_run(&locks, p->width - i);
                     i < plain_end; i++)
                    store_pixel(s, worker, NULL, lock, &row[i], pixel(p, simd_row, i, j));
                if (i < p->width) {
                    store_pixel(s, worker, &locks, lock, &row[i], pixel(p, simd_row, i, j));
                    i++;
                }
            }
            break;
        }
        default: /* atomic */
            for (int32_t i = 0; i < p->width; i++)
                atomic_store_explicit((_Atomic uint32_t *)&row[i], pixel(p, simd_row, i, j),
                                      memory_order_relaxed);
            break;
        }
        sb_worker_add_work(s->ctx, worker, sb_mandel_row_work(simd_row ? simd_row : row, p->width));
    }
    *stream = locks;
    free(simd_row);
}

static void worker_body(void *arg, int32_t worker) {
    shared_state *s = arg;
    sb_timed_queue_share(s->ctx, &s->barrier, &s->queue, worker, compute_rows, s);
}

static int run(sb_ctx *ctx) {
    const sb_params *p = sb_params_get(ctx);
    shared_state s = {.ctx = ctx, .p = p, .image = sb_image(ctx), .row_locks = NULL};
    if (sb_queue_init(&s.queue, p->schedule, p->sync, p->height, p->chunk, p->threads) != 0)
        sb_fail(ctx, "cannot initialise the work queue");
    sb_workers_barrier_init(ctx, &s.barrier, p->threads);
    if (p->sync == SB_SYNC_FINE) {
        s.row_locks = malloc((size_t)p->height * sizeof *s.row_locks);
        if (!s.row_locks)
            sb_fail(ctx, "out of memory for row locks");
        for (int32_t j = 0; j < p->height; j++)
            pthread_mutex_init(&s.row_locks[j], NULL);
    }
    sb_queue_time_waits(&s.queue, ctx);
    sb_run_workers(ctx, p->threads, worker_body, &s);
    if (s.row_locks) {
        for (int32_t j = 0; j < p->height; j++)
            pthread_mutex_destroy(&s.row_locks[j]);
        free(s.row_locks);
    }
    sb_queue_destroy(&s.queue);
    return 0;
}

const sb_kernel_desc sb_kernel = {
    SB_DESC_PTHREADS("mandelbrot", SB_KERNEL_MANDELBROT),
    .lang = "c",
    .chunk_schedules = SB_BIT(SB_SCHED_CYCLIC) | SB_BIT(SB_SCHED_QUEUE),
    .help =
        "pthreads model: the calling thread is worker 0; threads-1 helpers are created once, on\n"
        "the first repetition, and reused by every later one (a pool, as OpenMP keeps its team),\n"
        "so under likwid-pin worker i runs on list entry i in every repetition. setup_s = start\n"
        "of the repetition until all workers reached the start barrier: thread creation on the\n"
        "first repetition, wake-up latency afterwards (use --warmup). Rows are the unit of work.\n"
        "--schedule: block = one contiguous band of rows per worker; cyclic[,C] = chunks of C\n"
        "rows (default 1) dealt round-robin; queue[,C] = chunks of C rows taken at run time from\n"
        "shared state. --sync: none = nothing shared (block|cyclic only); coarse = one global\n"
        "mutex held for the queue cursor and while EACH finished pixel is stored (the\n"
        "'synchronized method'); fine = a lock per row held while each pixel of it is stored, and\n"
        "per-worker queue slots with their own lock (idle workers steal); atomic = lock-free:\n"
        "relaxed atomic pixel stores and a fetch-add queue cursor.",
    .run = run,
    .inner_simd = 1,
};
