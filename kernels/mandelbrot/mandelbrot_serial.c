/* Mandelbrot, serial: the reference every other model must match bit for bit. */
#include "harness.h"
#include "sb_descriptors.h"
#include "sb_mandelbrot.h"
#include "sb_simd.h"

static int run(sb_ctx *ctx) {
    const sb_params *p = sb_params_get(ctx);
    uint32_t *image = sb_image(ctx);
    sb_compute_begin(ctx);
    sb_worker_begin(ctx, 0);
    for (int32_t j = 0; j < p->height; j++)
        sb_mandel_row_inner(p, j, image + (size_t)j * (size_t)p->width);
    sb_worker_end(ctx, 0);
    sb_compute_end(ctx);
    return 0;
}

const sb_kernel_desc sb_kernel = {
    SB_DESC_SERIAL("mandelbrot", SB_KERNEL_MANDELBROT),
    .lang = "c",
    .help = "Serial model: one thread, rows top to bottom; --schedule and --sync accept only none.",
    .run = run,
    .inner_simd = 1,
};
