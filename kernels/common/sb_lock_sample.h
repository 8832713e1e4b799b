/*
 * Sampled lock waits: which acquisitions of a mutex are timed. A worker's waits on its locks are
 * estimated without timing every acquisition (a clock read costs more than the kernels' per-sample
 * critical sections): each of a stream's first SB_LOCK_TIMED_FIRST acquisitions, and then each with
 * chance 1 / SB_LOCK_SAMPLE_EVERY, independently (gaps drawn from a geometric distribution), is
 * timed; a timed wait counts SB_LOCK_SAMPLE_EVERY times (1 among the first): the Horvitz-Thompson
 * estimator of the stream's total wait, unbiased; its relative standard error is
 * sqrt((SB_LOCK_SAMPLE_EVERY - 1) / n) x sqrt(1 + cv^2) for n acquisitions whose waits have
 * coefficient of variation cv (docs/pop-metrics.md).
 *
 * The countdown to the next timed acquisition is a value (sb_lock_sampler) that the caller keeps in
 * a local variable across its loop of acquisitions: a loop counts off the untimed acquisitions
 * before the next timed one at once (sb_lock_untimed_run) and takes them with a plain
 * pthread_mutex_lock; a single acquisition decrements it (sb_lock_sampled). Either way no memory
 * access comes before the mutex's atomic instruction (which waits for every earlier load and store:
 * a countdown kept in the worker's memory cost ~0.5 ns there, and one decremented in a register on
 * every acquisition ~0.25 ns, +3.5 % and +2 % on --batch 1 pi with a per-sample lock,
 * docs/pop-metrics.md). Only a timed acquisition calls out, through an sb_lock_timed_fn, which
 * times the wait and returns the countdown's next state.
 */
#ifndef SB_LOCK_SAMPLE_H
#define SB_LOCK_SAMPLE_H

#include <pthread.h>
#include <stdint.h>

#define SB_LOCK_TIMED_FIRST 64
#define SB_LOCK_SAMPLE_EVERY 512

/* One stream of acquisitions: {0, 0} at its start (the next acquisition is timed). */
typedef struct sb_lock_sampler {
    int64_t gap;   /* acquisitions until the next timed one, this one counted */
    int64_t first; /* how many of the first SB_LOCK_TIMED_FIRST were taken */
} sb_lock_sampler;

/* A stream that is never timed (one worker, or the measurements compiled out). */
#define SB_LOCK_UNSAMPLED ((sb_lock_sampler){.gap = INT64_MAX, .first = SB_LOCK_TIMED_FIRST})

/* Takes `mutex` for a timed acquisition of stream `s` of worker `worker` (arg: the caller's
 * context) and returns the stream's next state. */
typedef sb_lock_sampler (*sb_lock_timed_fn)(void *arg, int32_t worker, sb_lock_sampler s,
                                            pthread_mutex_t *mutex);

/* How many of stream s's next n acquisitions come before its next timed one (n when none of them
 * is), counted off the countdown at once: the caller takes those with pthread_mutex_lock and the
 * one after them, if any, with sb_lock_sampled, so a loop of acquisitions pays nothing per
 * acquisition for the sampling. Picks the same acquisitions as n calls of sb_lock_sampled. */
static inline int64_t sb_lock_untimed_run(sb_lock_sampler *s, int64_t n) {
    const int64_t before_timed = s->gap > 1 ? s->gap - 1 : 0;
    const int64_t run = before_timed < n ? before_timed : n;
    s->gap -= run;
    return run;
}

/* pthread_mutex_lock, timed through `timed` when the countdown says so. */
static inline void sb_lock_sampled(sb_lock_sampler *s, sb_lock_timed_fn timed, void *arg,
                                   int32_t worker, pthread_mutex_t *mutex) {
    if (__builtin_expect(--s->gap > 0, 1))
        pthread_mutex_lock(mutex);
    else
        *s = timed(arg, worker, *s, mutex);
}

#endif /* SB_LOCK_SAMPLE_H */
