/* Mandelbrot, OpenMP: `parallel for` over rows with schedule(runtime), set from --schedule. */
#include "harness.h"
#include "sb_descriptors.h"
#include "sb_mandelbrot.h"
#include "sb_omp.h"
#include "sb_simd.h"

static int run(sb_ctx *ctx) {
    const sb_params *p = sb_params_get(ctx);
    uint32_t *image = sb_image(ctx);
    /* chunk 0 = the runtime's default for the kind (static: one block per thread) */
    omp_set_schedule(sb_omp_kind(p->schedule), p->chunk);
    omp_set_dynamic(0);
    int team = 0;
#pragma omp parallel num_threads(p->threads)
    {
        const int worker = sb_omp_region_begin(ctx, &team, sb_compute_begin);
        int64_t work = 0;
#pragma omp for schedule(runtime) nowait
        for (int32_t j = 0; j < p->height; j++) {
            uint32_t *row = image + (size_t)j * (size_t)p->width;
            sb_mandel_row_inner(p, j, row);
            work += sb_mandel_row_work(row, p->width);
        }
        sb_worker_add_work(ctx, worker, work);
        sb_omp_region_end(ctx, worker);
    }
    sb_check_team(ctx, team);
    return 0;
}

const sb_kernel_desc sb_kernel = {
    SB_DESC_MANDELBROT_OMP,
    .lang = "c",
    .help =
        "OpenMP model: '#pragma omp parallel for schedule(runtime)' over rows; --schedule sets\n"
        "omp_set_schedule (no chunk = the runtime default). Rows are written by exactly one\n"
        "thread each, so --sync is none only.",
    .run = run,
    .inner_simd = 1,
};
