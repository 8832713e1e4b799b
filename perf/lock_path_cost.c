/*
 * What one acquisition through sb_mutex_lock_timed's sampled path costs, measured on one thread,
 * where the lock is never contended and the figure does not depend on how the lock is handed over
 * between workers (perf/perf_worker_times.py bounds the two-worker cost with it). Three loops,
 * interleaved round by round, each ACQUISITIONS long:
 *   plain    the lock function of one worker (sb_worker_lock: pthread_mutex_lock, what the build
 *            without measurements takes at any worker count) + unlock
 *   sampled  the lock function of two workers (sb_mutex_lock_timed, worker 0: the countdown, one
 *            draw in 64 acquisitions, a trylock on the timed ones) + unlock
 *   clock    sb_now(), the clock a timed acquisition reads twice when its trylock fails
 * plain and sampled are called through the pointer sb_worker_lock returns, as the kernels call
 * them. A second thread exists throughout but never touches the lock: with one thread in the
 * process glibc takes a mutex without an atomic instruction, with two (as at two workers) it uses
 * one. Prints one JSON line: each loop's nanoseconds per operation, the least over the rounds, and
 * the sampling's constants (sb_threads.h) the bound is computed with.
 */
#define _GNU_SOURCE
#include "sb_descriptors.h"
#include "sb_internal.h"
#include "sb_options.h"
#include "sb_threads.h"

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

/* ns per acquisition + release through `lock` */
static double lock_ns(sb_lock_fn lock, sb_ctx *ctx, pthread_mutex_t *mutex) {
    const double t0 = sb_now();
    for (int i = 0; i < ACQUISITIONS; i++) {
        lock(ctx, 0, mutex);
        pthread_mutex_unlock(mutex);
    }
    return (sb_now() - t0) / ACQUISITIONS * 1e9;
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
    sb_ctx one, two;
    if (!workers_ctx(&one, "1") || !workers_ctx(&two, "2"))
        return 1;
    pthread_t other;
    if (pthread_barrier_init(&done, NULL, 2) != 0 ||
        pthread_create(&other, NULL, bystander, NULL) != 0) {
        fprintf(stderr, "lock-path-cost: cannot start the second thread\n");
        return 1;
    }
    pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
    double plain = 1e30, sampled = 1e30, clock = 1e30;
    for (int r = 0; r < ROUNDS; r++) {
        plain = least(plain, lock_ns(sb_worker_lock(&one), &one, &mutex));
        sampled = least(sampled, lock_ns(sb_worker_lock(&two), &two, &mutex));
        clock = least(clock, clock_ns());
    }
    pthread_barrier_wait(&done);
    pthread_join(other, NULL);
    printf("{\"plain_ns\":%.4f,\"sampled_ns\":%.4f,\"clock_ns\":%.4f,\"rounds\":%d,"
           "\"acquisitions\":%d,\"timed_first\":%d,\"sample_every\":%d,\"worker_times\":%d}\n",
           plain, sampled, clock, ROUNDS, ACQUISITIONS, SB_LOCK_TIMED_FIRST, SB_LOCK_SAMPLE_EVERY,
           SB_WORKER_TIMES);
    sb_ctx_free(&one);
    sb_ctx_free(&two);
    return 0;
}
