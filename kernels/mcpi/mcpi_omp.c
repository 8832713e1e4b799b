/*
 * Monte-Carlo π, OpenMP: `omp for schedule(runtime)` over batches of --batch samples; after each
 * batch the thread adds its batch's hits to the total as --sync says:
 *   reduction  reduction(+:total) — updates go to a private copy, combined once at the end
 *   atomic     #pragma omp atomic on the shared total
 *   critical   #pragma omp critical around the shared total
 */
#include "harness.h"
#include "sb_rng.h"

#include <omp.h>
#include <stdio.h>

static omp_sched_t omp_kind(int32_t schedule) {
    switch (schedule) {
    case SB_SCHED_DYNAMIC:
        return omp_sched_dynamic;
    case SB_SCHED_GUIDED:
        return omp_sched_guided;
    default:
        return omp_sched_static;
    }
}

static inline int64_t batch_hits(const sb_params *p, int64_t b) {
    int64_t s0 = b * p->batch;
    int64_t s1 = p->samples - s0 > p->batch ? s0 + p->batch : p->samples;
    return sb_pi_count_hits((uint64_t)p->seed, s0, s1);
}

static int run(sb_ctx *ctx) {
    const sb_params *p = sb_params_get(ctx);
    const int64_t nbatches = (p->samples - 1) / p->batch + 1; /* no overflow near 2^62 */
    omp_set_schedule(omp_kind(p->schedule), p->chunk);
    omp_set_dynamic(0);
    int64_t total = 0;
    int team = 0;
#pragma omp parallel num_threads(p->threads)
    {
        const int worker = omp_get_thread_num();
#pragma omp single
        team = omp_get_num_threads();
#pragma omp master
        sb_compute_begin(ctx);
#pragma omp barrier
        sb_worker_begin(ctx, worker);
        switch (p->sync) {
        case SB_SYNC_REDUCTION:
#pragma omp for schedule(runtime) reduction(+ : total)
            for (int64_t b = 0; b < nbatches; b++)
                total += batch_hits(p, b);
            break;
        case SB_SYNC_ATOMIC:
#pragma omp for schedule(runtime)
            for (int64_t b = 0; b < nbatches; b++) {
                int64_t h = batch_hits(p, b);
#pragma omp atomic
                total += h;
            }
            break;
        default: /* critical */
#pragma omp for schedule(runtime)
            for (int64_t b = 0; b < nbatches; b++) {
                int64_t h = batch_hits(p, b);
#pragma omp critical(sb_total)
                total += h;
            }
            break;
        }
        sb_worker_end(ctx, worker);
#pragma omp barrier
#pragma omp master
        sb_compute_end(ctx);
    }
    if (team != p->threads) {
        char msg[128];
        snprintf(msg, sizeof msg, "OpenMP gave %d threads instead of %d (OMP_THREAD_LIMIT?)", team,
                 (int)p->threads);
        sb_fail(ctx, msg);
    }
    sb_set_hits(ctx, total);
    return 0;
}

#define OMP_SYNCS (SB_BIT(SB_SYNC_REDUCTION) | SB_BIT(SB_SYNC_ATOMIC) | SB_BIT(SB_SYNC_CRITICAL))

const sb_kernel_desc sb_kernel = {
    .kernel = "mcpi",
    .lang = "c",
    .model = "omp",
    .kind = SB_KERNEL_MCPI,
    .max_threads = 4096,
    .default_schedule = SB_SCHED_STATIC,
    .default_sync = SB_SYNC_REDUCTION,
    .sync_by_schedule =
        {
            [SB_SCHED_STATIC] = OMP_SYNCS,
            [SB_SCHED_DYNAMIC] = OMP_SYNCS,
            [SB_SCHED_GUIDED] = OMP_SYNCS,
        },
    .chunk_schedules = SB_BIT(SB_SCHED_STATIC) | SB_BIT(SB_SCHED_DYNAMIC) | SB_BIT(SB_SCHED_GUIDED),
    .help = "OpenMP model: 'omp for schedule(runtime)' over batches of --batch samples (the chunk\n"
            "counts batches). After each batch the thread adds its hits to the total: reduction =\n"
            "into its private reduction copy (combined once at the end); atomic = '#pragma omp\n"
            "atomic' on the shared total; critical = '#pragma omp critical' around it.",
    .run = run,
};
