/* Monte-Carlo π, serial: the reference hit count. */
#include "harness.h"
#include "sb_descriptors.h"
#include "sb_rng.h"
#include "sb_simd.h"

static int run(sb_ctx *ctx) {
    const sb_params *p = sb_params_get(ctx);
    sb_compute_begin(ctx);
    sb_worker_begin(ctx, 0);
    /* batches as in the threaded models, so --batch means the same everywhere */
    const int64_t hits = sb_pi_hits_batches(p, 0, sb_pi_batches(p));
    sb_worker_end(ctx, 0);
    sb_compute_end(ctx);
    sb_set_hits(ctx, hits);
    return 0;
}

const sb_kernel_desc sb_kernel = {
    SB_DESC_SERIAL("mcpi", SB_KERNEL_MCPI),
    .lang = "c",
    .help = "Serial model: one thread; --schedule and --sync accept only none.",
    .run = run,
    .inner_simd = 1,
};
