/*
 * The timed-region skeleton every OpenMP kernel (omp and the MPI ranks' teams) runs inside its
 * `#pragma omp parallel`, as harness.h's life cycle asks: all threads exist, ONE starts the clock,
 * each brackets its share with sb_worker_begin/end, ONE stops the clock after the last share.
 * Include only from files compiled with -fopenmp: the constructs below are orphaned and bind to the
 * caller's parallel region.
 */
#ifndef SB_OMP_H
#define SB_OMP_H

#include "harness.h"

#include <omp.h>

/* --schedule -> omp_set_schedule kind (the parser admits only static|dynamic|guided here). */
static inline omp_sched_t sb_omp_kind(int32_t schedule) {
    switch (schedule) {
    case SB_SCHED_DYNAMIC:
        return omp_sched_dynamic;
    case SB_SCHED_GUIDED:
        return omp_sched_guided;
    default:
        return omp_sched_static;
    }
}

/* Every thread of the region, first thing: one thread stores the team size in *team (for
 * sb_check_team after the region); the master calls start(ctx) (sb_compute_begin, or
 * sb_mpi_compute_begin to meet the other ranks first) once all threads exist; then this thread's
 * sb_worker_begin. Each thread measures its core clock first (sb_worker_clock). Returns this
 * thread's worker number. */
static inline int sb_omp_region_begin(sb_ctx *ctx, int *team, void (*start)(sb_ctx *ctx)) {
    const int worker = omp_get_thread_num();
    sb_worker_clock(ctx, worker, 0); /* before the clock starts: every thread's core clock */
#pragma omp single
    *team = omp_get_num_threads();
    /* the single's implied barrier: every thread exists before the clock starts */
#pragma omp master
    start(ctx);
#pragma omp barrier
    sb_worker_begin(ctx, worker);
    return worker;
}

/* Every thread of the region, last thing: this thread's sb_worker_end, then the master stops the
 * clock once every share is done; every thread measures its core clock again, outside the clock. */
static inline void sb_omp_region_end(sb_ctx *ctx, int worker) {
    sb_worker_end(ctx, worker);
#pragma omp barrier
#pragma omp master
    sb_compute_end(ctx);
    sb_worker_clock(ctx, worker, 1); /* the master after stopping the clock, the others meanwhile */
}

#endif /* SB_OMP_H */
