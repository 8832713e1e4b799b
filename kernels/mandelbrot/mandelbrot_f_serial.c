/* Mandelbrot, Fortran serial: the descriptor; the loop is mandelbrot_f_serial.f90. */
#include "harness.h"
#include "sb_descriptors.h"

int mandelbrot_f_serial_run(sb_ctx *ctx); /* Fortran, bind(C) */

const sb_kernel_desc sb_kernel = {
    SB_DESC_SERIAL("mandelbrot", SB_KERNEL_MANDELBROT),
    .lang = "f",
    .help =
        "Fortran 2008 serial model: one thread, rows top to bottom (gfortran, -ffp-contract=off);\n"
        "--schedule and --sync accept only none.",
    .run = mandelbrot_f_serial_run,
    .inner_simd = 1, /* the Fortran loop calls the C vector kernel (sb_simd_f.f90) */
};
