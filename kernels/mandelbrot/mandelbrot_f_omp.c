/* Mandelbrot, Fortran OpenMP: the descriptor; the loop is mandelbrot_f_omp.f90. */
#include "harness.h"

int mandelbrot_f_omp_run(sb_ctx *ctx); /* Fortran, bind(C) */

#define OMP_SCHEDULES (SB_BIT(SB_SCHED_STATIC) | SB_BIT(SB_SCHED_DYNAMIC) | SB_BIT(SB_SCHED_GUIDED))

const sb_kernel_desc sb_kernel = {
    .kernel = "mandelbrot",
    .lang = "f",
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
    .help = "Fortran 2008 OpenMP model: '!$omp do schedule(runtime)' over rows; --schedule sets\n"
            "omp_set_schedule (no chunk = the runtime default). Rows are written by exactly one\n"
            "thread each, so --sync is none only.",
    .run = mandelbrot_f_omp_run,
};
