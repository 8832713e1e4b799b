/* Monte-Carlo π, Fortran serial: the descriptor; the loop is mcpi_f_serial.f90. */
#include "harness.h"
#include "sb_descriptors.h"

int mcpi_f_serial_run(sb_ctx *ctx); /* Fortran, bind(C) */

const sb_kernel_desc sb_kernel = {
    SB_DESC_SERIAL("mcpi", SB_KERNEL_MCPI),
    .lang = "f",
    .help = "Fortran 2008 serial model: one thread (gfortran, -fwrapv for the uint64 generator);\n"
            "--schedule and --sync accept only none.",
    .run = mcpi_f_serial_run,
    .inner_simd = 1, /* the Fortran loop calls the C vector kernel (sb_simd_f.f90) */
};
