/* Monte-Carlo π, Fortran serial: the descriptor; the loop is mcpi_f_serial.f90. */
#include "harness.h"

int mcpi_f_serial_run(sb_ctx *ctx); /* Fortran, bind(C) */

const sb_kernel_desc sb_kernel = {
    .kernel = "mcpi",
    .lang = "f",
    .model = "serial",
    .kind = SB_KERNEL_MCPI,
    .max_threads = 1,
    .default_schedule = SB_SCHED_NONE,
    .default_sync = SB_SYNC_NONE,
    .sync_by_schedule = {[SB_SCHED_NONE] = SB_BIT(SB_SYNC_NONE)},
    .chunk_schedules = 0,
    .help = "Fortran 2008 serial model: one thread (gfortran, -fwrapv for the uint64 generator);\n"
            "--schedule and --sync accept only none.",
    .run = mcpi_f_serial_run,
};
