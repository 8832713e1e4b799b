/* Mandelbrot, OpenMP: `parallel for` over rows with schedule(runtime), set from --schedule. */
#include "harness.h"
#include "sb_mandelbrot.h"

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

static int run(sb_ctx *ctx) {
    const sb_params *p = sb_params_get(ctx);
    uint32_t *image = sb_image(ctx);
    /* chunk 0 = the runtime's default for the kind (static: one block per thread) */
    omp_set_schedule(omp_kind(p->schedule), p->chunk);
    omp_set_dynamic(0);
    int team = 0;
#pragma omp parallel num_threads(p->threads)
    {
        const int worker = omp_get_thread_num();
#pragma omp single
        team = omp_get_num_threads();
        /* the single's implied barrier: every thread exists before the clock starts */
#pragma omp master
        sb_compute_begin(ctx);
#pragma omp barrier
        sb_worker_begin(ctx, worker);
#pragma omp for schedule(runtime) nowait
        for (int32_t j = 0; j < p->height; j++)
            sb_mandel_row(p, j, image + (size_t)j * (size_t)p->width);
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
    return 0;
}

#define OMP_SCHEDULES (SB_BIT(SB_SCHED_STATIC) | SB_BIT(SB_SCHED_DYNAMIC) | SB_BIT(SB_SCHED_GUIDED))

const sb_kernel_desc sb_kernel = {
    .kernel = "mandelbrot",
    .lang = "c",
    .model = "omp",
    .kind = SB_KERNEL_MANDELBROT,
    .max_threads = 4096,
    .default_schedule = SB_SCHED_STATIC,
    .default_sync = SB_SYNC_NONE,
    .sync_by_schedule =
        {
            [SB_SCHED_STATIC] = SB_BIT(SB_SYNC_NONE),
            [SB_SCHED_DYNAMIC] = SB_BIT(SB_SYNC_NONE),
            [SB_SCHED_GUIDED] = SB_BIT(SB_SYNC_NONE),
        },
    .chunk_schedules = OMP_SCHEDULES,
    .help =
        "OpenMP model: '#pragma omp parallel for schedule(runtime)' over rows; --schedule sets\n"
        "omp_set_schedule (no chunk = the runtime default). Rows are written by exactly one\n"
        "thread each, so --sync is none only.",
    .run = run,
};
