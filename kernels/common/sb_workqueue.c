/* Work distribution for the pthreads kernels (see sb_workqueue.h for the schemes). */
#define _POSIX_C_SOURCE 200809L
#include "sb_workqueue.h"

#include "harness.h"

#include <stdlib.h>

/* Start of worker w's share when n items are split evenly over nw workers (no overflow for any
 * n < 2^63, unlike n * w / nw). */
static int64_t share_start(int64_t n, int32_t w, int32_t nw) {
    int64_t base = n / nw, extra = n % nw;
    return base * w + (w < extra ? w : extra);
}

int sb_queue_init(sb_queue *q, int32_t schedule, int32_t sync, int64_t nunits, int64_t chunk,
                  int32_t nworkers) {
    q->schedule = schedule;
    q->sync = sync;
    q->nworkers = nworkers;
    q->nunits = nunits;
    q->chunk = chunk > 0 ? chunk : 1;
    q->ngroups = (nunits + q->chunk - 1) / q->chunk;
    q->next = 0;
    atomic_init(&q->next_atomic, 0);
    q->slots = NULL;
    q->lock_timed = NULL; /* pthread_mutex_lock until sb_queue_lock_with */
    q->lock_arg = NULL;
    if (pthread_mutex_init(&q->global, NULL) != 0)
        return -1;
    if (schedule == SB_SCHED_QUEUE && sync == SB_SYNC_FINE) {
        q->slots = calloc((size_t)nworkers, sizeof *q->slots);
        if (!q->slots)
            return -1;
        for (int32_t w = 0; w < nworkers; w++) {
            if (pthread_mutex_init(&q->slots[w].lock, NULL) != 0)
                return -1;
            q->slots[w].lo = share_start(q->ngroups, w, nworkers);
            q->slots[w].hi = share_start(q->ngroups, w + 1, nworkers);
        }
    }
    return 0;
}

void sb_queue_destroy(sb_queue *q) {
    if (q->slots) {
        for (int32_t w = 0; w < q->nworkers; w++)
            pthread_mutex_destroy(&q->slots[w].lock);
        free(q->slots);
        q->slots = NULL;
    }
    pthread_mutex_destroy(&q->global);
}

void sb_queue_cursor_init(sb_queue_cursor *c, const sb_queue *q, int32_t worker) {
    c->worker = worker;
    c->next_group = worker;
    c->done = 0;
    c->locks = (sb_lock_sampler){0, 0};
    (void)q;
}

void sb_queue_lock_with(sb_queue *q, sb_lock_timed_fn timed, void *arg) {
    q->lock_timed = timed;
    q->lock_arg = arg;
}

/* locks: a copy of the cursor's stream in a local variable of the caller, stored back after the
 * locks are released, so the countdown adds no memory access before the mutex's atomic instruction
 * (sb_lock_sample.h). */
static inline void lock(sb_queue *q, sb_lock_sampler *locks, int32_t worker,
                        pthread_mutex_t *mutex) {
    if (q->lock_timed)
        sb_lock_sampled(locks, q->lock_timed, q->lock_arg, worker, mutex);
    else
        pthread_mutex_lock(mutex);
}

static void group_range(const sb_queue *q, int64_t g, int64_t *begin, int64_t *end) {
    *begin = g * q->chunk;
    *end = *begin + q->chunk < q->nunits ? *begin + q->chunk : q->nunits;
}

/* Worker `worker` takes one group from slot s: the owner from the front, a thief from the back
 * (inlined: `locks` must stay a local variable of next_queued_group, not memory). */
static inline __attribute__((always_inline)) int64_t
take_from_slot(sb_queue *q, sb_queue_slot *s, sb_lock_sampler *locks, int32_t worker, int owner) {
    int64_t g = -1;
    lock(q, locks, worker, &s->lock);
    if (s->lo < s->hi)
        g = owner ? s->lo++ : --s->hi;
    pthread_mutex_unlock(&s->lock);
    return g;
}

static int64_t next_queued_group(sb_queue *q, sb_queue_cursor *c) {
    const int32_t worker = c->worker;
    sb_lock_sampler locks = c->locks;
    int64_t g = -1;
    switch (q->sync) {
    case SB_SYNC_COARSE:
        lock(q, &locks, worker, &q->global);
        if (q->next < q->ngroups)
            g = q->next++;
        pthread_mutex_unlock(&q->global);
        break;
    case SB_SYNC_ATOMIC:
        g = atomic_fetch_add_explicit(&q->next_atomic, 1, memory_order_relaxed);
        return g < q->ngroups ? g : -1;
    case SB_SYNC_FINE:
        g = take_from_slot(q, &q->slots[worker], &locks, worker, 1);
        for (int32_t k = 1; g < 0 && k < q->nworkers; k++)
            g = take_from_slot(q, &q->slots[(worker + k) % q->nworkers], &locks, worker, 0);
        break;
    default:
        break;
    }
    c->locks = locks;
    return g;
}

int sb_queue_next(sb_queue *q, sb_queue_cursor *c, int64_t *begin, int64_t *end) {
    if (c->done)
        return 0;
    int64_t g;
    switch (q->schedule) {
    case SB_SCHED_BLOCK:
        c->done = 1;
        *begin = share_start(q->nunits, c->worker, q->nworkers);
        *end = share_start(q->nunits, c->worker + 1, q->nworkers);
        return *begin < *end;
    case SB_SCHED_CYCLIC:
        g = c->next_group;
        c->next_group += q->nworkers;
        break;
    default:
        g = next_queued_group(q, c);
        break;
    }
    if (g < 0 || g >= q->ngroups) {
        c->done = 1;
        return 0;
    }
    group_range(q, g, begin, end);
    return 1;
}
