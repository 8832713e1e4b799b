/* Monte-Carlo π, Fortran OpenMP: the descriptor; the loop is mcpi_f_omp.f90. */
#include "harness.h"

int mcpi_f_omp_run(sb_ctx *ctx); /* Fortran, bind(C) */

#define OMP_SCHEDULES (SB_BIT(SB_SCHED_STATIC) | SB_BIT(SB_SCHED_DYNAMIC) | SB_BIT(SB_SCHED_GUIDED))
#define OMP_SYNCS (SB_BIT(SB_SYNC_REDUCTION) | SB_BIT(SB_SYNC_ATOMIC) | SB_BIT(SB_SYNC_CRITICAL))

const sb_kernel_desc sb_kernel = {
    .kernel = "mcpi",
    .lang = "f",
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
    .chunk_schedules = OMP_SCHEDULES,
    .help =
        "Fortran 2008 OpenMP model: '!$omp do schedule(runtime)' over batches of --batch samples\n"
        "(the chunk counts batches). After each batch the thread adds its hits to the total:\n"
        "reduction = into its private reduction copy (combined once at the end); atomic =\n"
        "'!$omp atomic' on the shared total; critical = '!$omp critical' around it.",
    .run = mcpi_f_omp_run,
};
