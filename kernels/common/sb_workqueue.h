/*
 * Work distribution for the pthreads kernels: units 0..nunits-1 (Mandelbrot rows, π batches) in
 * groups of `chunk` units, handed to workers as the schedule says and guarded as the sync says:
 *   block   one contiguous range per worker (nothing shared)
 *   cyclic  group g to worker g % nworkers (nothing shared)
 *   queue   groups taken at run time from shared state:
 *             coarse  one global mutex (`global`) around a shared cursor
 *             fine    one lock per worker slot: each worker owns a contiguous range of groups and
 *                     takes from its front; when empty it steals from the back of other slots
 *             atomic  a shared cursor advanced with C11 atomic_fetch_add (lock-free)
 * Groups are handed out in no fixed order; the results do not depend on it (each unit is computed
 * by the same formula whoever computes it).
 */
#ifndef SB_WORKQUEUE_H
#define SB_WORKQUEUE_H

#include "sb_lock_sample.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

/* One per worker, on its own cache line so owner and thieves do not false-share. */
typedef struct sb_queue_slot {
    pthread_mutex_t lock;
    int64_t lo, hi; /* groups [lo, hi) not yet taken */
    char pad[64];
} sb_queue_slot;

typedef struct sb_queue {
    int32_t schedule, sync, nworkers;
    int64_t nunits, chunk, ngroups;
    pthread_mutex_t global;      /* coarse: guards `next` (kernels also use it for their results) */
    int64_t next;                /* coarse: next group */
    _Atomic int64_t next_atomic; /* atomic: next group */
    sb_queue_slot *slots;        /* fine: nworkers slots */
    /* how a worker times the queue's locks (sb_queue_lock_with); NULL: plain pthread_mutex_lock */
    sb_lock_timed_fn lock_timed;
    void *lock_arg;
} sb_queue;

/* Per-worker iteration state. */
typedef struct sb_queue_cursor {
    int32_t worker;
    int64_t next_group; /* block/cyclic: the next group this worker owns */
    int done;
    sb_lock_sampler locks; /* this worker's stream of the queue's locks */
} sb_queue_cursor;

/* chunk = units per group (block ignores it). Returns 0, or -1 if memory or a mutex fails. */
int sb_queue_init(sb_queue *q, int32_t schedule, int32_t sync, int64_t nunits, int64_t chunk,
                  int32_t nworkers);
void sb_queue_destroy(sb_queue *q);

void sb_queue_cursor_init(sb_queue_cursor *c, const sb_queue *q, int32_t worker);

/* Every worker samples its waits for the queue's locks (the coarse cursor's, the fine slots') in a
 * stream of its cursor (sb_lock_sample.h), timing them through timed(arg, ...): the pthreads
 * kernels do (sb_queue_time_waits, sb_threads.h). Call before any worker uses the queue. */
void sb_queue_lock_with(sb_queue *q, sb_lock_timed_fn timed, void *arg);

/* Next range of units [*begin, *end) for this worker; returns 0 when there is no more work. */
int sb_queue_next(sb_queue *q, sb_queue_cursor *c, int64_t *begin, int64_t *end);

#endif /* SB_WORKQUEUE_H */
