/* The harness's main(): parse, run warm-up and measured repetitions, print records, dump. */
#define _GNU_SOURCE
#include "sb_clock.h"
#include "sb_internal.h"
#include "sb_likwid.h"
#include "sb_options.h"
#include "sb_pgm.h"
#include "sb_pin.h"
#include "sb_simd.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <unistd.h>

int sb_is_first_rank_by_env(void) {
    return sb_rank_by_env() == 0;
}

/* A kernel that skips its measurement calls would print a record of nothing: refuse it. */
static void check_kernel_reported(sb_ctx *ctx) {
    if (ctx->t_compute_begin == 0.0 || ctx->t_compute_end == 0.0)
        sb_fail(ctx, "internal error: kernel did not call sb_compute_begin/sb_compute_end");
    if (ctx->rank == 0 && ctx->desc->kind == SB_KERNEL_MCPI && !ctx->hits_set)
        sb_fail(ctx, "internal error: kernel did not call sb_set_hits");
}

int main(int argc, char **argv) {
    const sb_kernel_desc *d = &sb_kernel;
    char prog[64];
    snprintf(prog, sizeof prog, "%s-%s-%s", d->kernel, d->lang, d->model);
    static sb_cli cli;
    char err[512];
    int rc = sb_parse_options(d, argc, argv, &cli, err, sizeof err);
    if (rc == SB_PARSE_HELP) {
        sb_print_help(d, prog, stdout);
        return 0;
    }
    if (rc == SB_PARSE_OK && cli.dump && sb_pgm_check_writable(cli.dump, err, sizeof err) != 0)
        rc = SB_PARSE_ERROR;
    if (rc != SB_PARSE_OK) {
        if (sb_is_first_rank_by_env())
            fprintf(stderr, "%s: %s\n", prog, err);
        return 2;
    }
    if (cli.check_args)
        return 0;
    /* Die with the parent (the runner, mpirun, likwid-pin's exec chain): never measure as an
     * orphan. An orphan already (the parent died before this line) stops here. */
    pid_t parent = getppid();
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent || parent == 1) {
        fprintf(stderr, "%s: the process that started it is gone\n", prog);
        return 1;
    }
    if (d->init && d->init(&argc, &argv) != 0) {
        fprintf(stderr, "%s: initialisation failed\n", prog);
        return 1;
    }
    if (sb_pin_init(cli.p.threads, err, sizeof err) < 0) {
        fprintf(stderr, "%s: %s\n", prog, err);
        if (d->finalize) /* MPI: finalise, or Open MPI prints a page about an unfinalised exit */
            d->finalize();
        return 1;
    }
    static sb_ctx ctx;
    if (sb_ctx_init(&ctx, d, &cli) != 0) {
        fprintf(stderr, "%s: out of memory for %d threads / the image\n", prog, (int)cli.p.threads);
        return 1;
    }
    if (sb_sched_apply_process(&cli.sched, err, sizeof err) != 0)
        sb_fail(&ctx, err);
    /* Only under likwid-perfctr -m (it sets LIKWID_EVENTS): otherwise the marker library would
     * print "Running without Marker API" on every run; START/STOP stay harmless no-ops. */
    const int markers = getenv("LIKWID_EVENTS") != NULL;
    if (markers)
        LIKWID_MARKER_INIT(prog);
    const sb_params *p = &cli.p;
    const int clock_wide = sb_inner_path(p) == SB_PATH_AVX512; /* the clock of 512-bit code */
    const sb_turns *turns = &cli.turns;
    if (turns->in >= 0) /* a conductor gone is a write error, not a silent death */
        signal(SIGPIPE, SIG_IGN);
    for (int32_t r = 0; r < p->warmup + p->reps; r++) {
        int warmup = r < p->warmup;
        if (sb_turns_wait(turns) != 0) {
            fprintf(stderr, "%s: --turns: the conductor closed descriptor %d\n", prog, turns->in);
            return 1;
        }
        /* The probe right after a repetition is also the one right before the next, unless another
         * process took a turn in between. */
        if (r == p->warmup || (!warmup && turns->in >= 0)) {
            if (r == 0)
                sb_ctx_reset_rep(&ctx); /* no placement yet: probe the current CPU */
            sb_probe_measure(&ctx, &ctx.probe_after);
        }
        if (!warmup)
            ctx.probe_before = ctx.probe_after;
        sb_ctx_reset_rep(&ctx);
        double runq_begin = sb_probe_runq_wait();
        ctx.clock_ghz_before = sb_clock_measure_ghz(clock_wide);
        if (d->run(&ctx) != 0)
            sb_fail(&ctx, "kernel run failed");
        ctx.clock_ghz_after = sb_clock_measure_ghz(clock_wide);
        double runq_end = sb_probe_runq_wait();
        ctx.runq_wait_s = runq_begin >= 0 && runq_end >= 0 ? runq_end - runq_begin : -1.0;
        check_kernel_reported(&ctx);
        if (!warmup)
            sb_probe_measure(&ctx, &ctx.probe_after);
        ctx.probe_valid = !warmup;
        if (ctx.rank == 0)
            sb_record_print(&ctx, warmup ? r : r - p->warmup, warmup);
        if (turns->in >= 0) {
            fflush(stdout);
            if (sb_turns_done(turns) != 0) {
                fprintf(stderr, "%s: --turns: cannot write to descriptor %d\n", prog, turns->out);
                return 1;
            }
        }
    }
    if (ctx.rank == 0 && cli.dump &&
        sb_pgm_write(cli.dump, ctx.image, p->width, p->height, err, sizeof err) != 0) {
        fprintf(stderr, "%s: %s\n", prog, err);
        return 1;
    }
    if (markers)
        LIKWID_MARKER_CLOSE;
    if (d->finalize)
        d->finalize();
    sb_ctx_free(&ctx);
    return 0;
}
