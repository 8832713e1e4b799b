/* The machine-state probe taken by the OpenMP team (see sb_probe_team in sb_probe.h). Compiled with
 * -fopenmp and linked into the OpenMP binaries (C and Fortran), where it overrides the weak
 * default. */
#include "sb_internal.h"
#include "sb_pin.h"
#include "sb_probe.h"
#include "sb_xfer.h"

#include <omp.h>

int sb_probe_team(const sb_ctx *ctx, sb_probe_sample *out) {
    int32_t n = 0;
    const int32_t *list = sb_pin_list(&n);
    const int32_t threads = ctx->cli.p.threads;
    if (!list || threads < 2)
        return 0;
    /* One worker per CPU of the list probes; the others (threads beyond the list wrap onto the same
     * CPUs) only wait at the region's end. The team has the kernel's size, so libgomp reuses its
     * pool. */
    const int32_t first = ctx->rank * threads;
    const int32_t probers = threads < n ? threads : n;
    out->n = probers < SB_PROBE_MAX_CPUS ? probers : SB_PROBE_MAX_CPUS;
    /* Then worker 0 times the cache-line transfer with each other prober in turn (sb_xfer.h), where
     * both are on their CPUs. */
    int pinned_at[SB_PROBE_MAX_CPUS] = {0};
    sb_xfer_line *lines = sb_xfer_lines(out->n);
#pragma omp parallel num_threads(threads)
    {
        const int32_t w = (int32_t)omp_get_thread_num();
        char err[256];
        const int pinned = sb_pin_worker(first + w, err, sizeof err) == 0;
        if (w < out->n) {
            out->cpu[w] = list[(first + w) % n];
            pinned_at[w] = pinned;
            if (pinned)
                sb_probe_chains(out, w);
            else
                sb_probe_unmeasured(out, w);
        }
#pragma omp barrier
        /* Only threads the runtime gave the team (fewer than asked would leave a ping alone). */
        const int32_t pairs = omp_get_num_threads() < out->n ? omp_get_num_threads() : out->n;
        if (w == 0) {
            for (int32_t k = 1; k < pairs; k++)
                if (pinned_at[0] && pinned_at[k] && sb_probe_xfer_pair(out, k))
                    out->xfer_s[k] = sb_xfer_ping(&lines[k]);
        } else if (w < pairs && pinned_at[0] && pinned_at[w] && sb_probe_xfer_pair(out, w)) {
            sb_xfer_pong(&lines[w]);
        }
    }
    return 1;
}
