/* Monte-Carlo π, Fortran OpenMP: the descriptor; the loop is mcpi_f_omp.f90. */
#include "harness.h"
#include "sb_descriptors.h"

int mcpi_f_omp_run(sb_ctx *ctx); /* Fortran, bind(C) */

const sb_kernel_desc sb_kernel = {
    SB_DESC_MCPI_OMP,
    .lang = "f",
    .help =
        "Fortran 2008 OpenMP model: '!$omp do schedule(runtime)' over batches of --batch samples\n"
        "(the chunk counts batches). After each batch the thread adds its hits to the total:\n"
        "reduction = into its private reduction copy (combined once at the end); atomic =\n"
        "'!$omp atomic' on the shared total; critical = '!$omp critical' around it.",
    .run = mcpi_f_omp_run,
    .inner_simd = 1, /* the Fortran loop calls the C vector kernel (sb_simd_f.f90) */
};
