/*
 * Monte-Carlo π, OpenMP: `omp for schedule(runtime)` over batches of --batch samples; after each
 * batch the thread adds its batch's hits to the total as --sync says:
 *   reduction  reduction(+:total) — updates go to a private copy, combined once at the end
 *   atomic     #pragma omp atomic on the shared total
 *   critical   #pragma omp critical around the shared total
 */
#include "harness.h"
#include "sb_descriptors.h"
#include "sb_omp.h"
#include "sb_rng.h"
#include "sb_simd.h"

/* Batch b's hits; adds its samples to *work (this thread's). */
static inline int64_t batch_hits(const sb_params *p, int64_t b, int64_t *work) {
    int64_t s0 = b * p->batch;
    int64_t s1 = sb_pi_batch_end(s0, p->batch, p->samples);
    *work += s1 - s0;
    return sb_pi_hits_inner(p, s0, s1);
}

static int run(sb_ctx *ctx) {
    const sb_params *p = sb_params_get(ctx);
    const int64_t nbatches = sb_pi_batches(p);
    omp_set_schedule(sb_omp_kind(p->schedule), p->chunk);
    omp_set_dynamic(0);
    int64_t total = 0;
    int team = 0;
#pragma omp parallel num_threads(p->threads)
    {
        const int worker = sb_omp_region_begin(ctx, &team, sb_compute_begin);
        int64_t work = 0;
        switch (p->sync) {
        case SB_SYNC_REDUCTION:
#pragma omp for schedule(runtime) reduction(+ : total)
            for (int64_t b = 0; b < nbatches; b++)
                total += batch_hits(p, b, &work);
            break;
        case SB_SYNC_ATOMIC:
#pragma omp for schedule(runtime)
            for (int64_t b = 0; b < nbatches; b++) {
                int64_t h = batch_hits(p, b, &work);
#pragma omp atomic
                total += h;
            }
            break;
        default: /* critical */
#pragma omp for schedule(runtime)
            for (int64_t b = 0; b < nbatches; b++) {
                int64_t h = batch_hits(p, b, &work);
#pragma omp critical(sb_total)
                total += h;
            }
            break;
        }
        sb_worker_add_work(ctx, worker, work);
        sb_omp_region_end(ctx, worker);
    }
    sb_check_team(ctx, team);
    sb_set_hits(ctx, total);
    return 0;
}

const sb_kernel_desc sb_kernel = {
    SB_DESC_MCPI_OMP,
    .lang = "c",
    .help = "OpenMP model: 'omp for schedule(runtime)' over batches of --batch samples (the chunk\n"
            "counts batches). After each batch the thread adds its hits to the total: reduction =\n"
            "into its private reduction copy (combined once at the end); atomic = '#pragma omp\n"
            "atomic' on the shared total; critical = '#pragma omp critical' around it.",
    .run = run,
    .inner_simd = 1,
};
