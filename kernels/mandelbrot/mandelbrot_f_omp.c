/* Mandelbrot, Fortran OpenMP: the descriptor; the loop is mandelbrot_f_omp.f90. */
#include "harness.h"
#include "sb_descriptors.h"

int mandelbrot_f_omp_run(sb_ctx *ctx); /* Fortran, bind(C) */

const sb_kernel_desc sb_kernel = {
    SB_DESC_MANDELBROT_OMP,
    .lang = "f",
    .help = "Fortran 2008 OpenMP model: '!$omp do schedule(runtime)' over rows; --schedule sets\n"
            "omp_set_schedule (no chunk = the runtime default). Rows are written by exactly one\n"
            "thread each, so --sync is none only.",
    .run = mandelbrot_f_omp_run,
    .inner_simd = 1, /* the Fortran loop calls the C vector kernel (sb_simd_f.f90) */
};
