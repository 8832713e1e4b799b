/* The context a kernel works with: measurement calls, results, MPI overrides. */
#define _GNU_SOURCE
#include "sb_clock.h"
#include "sb_internal.h"
#include "sb_likwid.h"
#include "sb_pin.h"
#include "sb_simd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int sb_ctx_init(sb_ctx *ctx, const sb_kernel_desc *desc, const sb_cli *cli) {
    memset(ctx, 0, sizeof *ctx);
    ctx->desc = desc;
    snprintf(ctx->prog, sizeof ctx->prog, "%s-%s-%s", desc->kernel, desc->lang, desc->model);
    ctx->cli = *cli;
    ctx->rank = 0;
    ctx->nranks = 1;
    ctx->cpus_online = (int32_t)sysconf(_SC_NPROCESSORS_ONLN);
    size_t threads = (size_t)cli->p.threads;
    ctx->local_placement = calloc(2 * threads, sizeof(int32_t));
    ctx->sched_applied = calloc(threads, sizeof *ctx->sched_applied);
    ctx->workers = calloc(threads, sizeof *ctx->workers);
    if (!ctx->local_placement || !ctx->sched_applied || !ctx->workers)
        return -1;
    if (desc->kind == SB_KERNEL_MANDELBROT) {
        ctx->npixels = (size_t)cli->p.width * (size_t)cli->p.height;
        ctx->image = malloc(ctx->npixels * sizeof(uint32_t));
        if (!ctx->image)
            return -1;
    }
    return 0;
}

void sb_ctx_reset_rep(sb_ctx *ctx) {
    if (ctx->image)
        memset(ctx->image, 0, ctx->npixels * sizeof(uint32_t));
    ctx->hits = 0;
    ctx->hits_set = 0;
    sb_micro_reset_rep(ctx);
    for (int32_t k = 0; k < 2 * ctx->cli.p.threads; k++)
        ctx->local_placement[k] = -1;
    free(ctx->placement);
    ctx->placement = NULL;
    ctx->nplacement = 0;
    free(ctx->rank_times);
    ctx->rank_times = NULL;
    ctx->nrank_times = 0;
    ctx->wall_overridden = 0;
    memset(ctx->workers, 0, (size_t)ctx->cli.p.threads * sizeof *ctx->workers);
    ctx->worker_totals_set = 0;
    ctx->os_threads = -1;
    ctx->t_setup_end = ctx->t_compute_begin = ctx->t_compute_end = 0.0;
    sb_utc_now(ctx->started, sizeof ctx->started);
    ctx->t_run_start = sb_now();
}

void sb_ctx_free(sb_ctx *ctx) {
    free(ctx->image);
    free(ctx->local_placement);
    free(ctx->sched_applied);
    free(ctx->workers);
    free(ctx->placement);
    free(ctx->rank_times);
    sb_micro_free(ctx);
}

const sb_params *sb_params_get(const sb_ctx *ctx) {
    return &ctx->cli.p;
}

void sb_compute_begin(sb_ctx *ctx) {
    /* Setup ends here; the thread count and getrusage fall between setup_s and wall_s, in neither.
     * All workers exist now (they met at a barrier), so /proc/self/task shows them. */
    ctx->t_setup_end = sb_now();
    ctx->os_threads = sb_count_os_threads();
    getrusage(RUSAGE_SELF, &ctx->ru_begin);
    ctx->t_compute_begin = sb_now();
}

void sb_compute_end(sb_ctx *ctx) {
    ctx->t_compute_end = sb_now();
    getrusage(RUSAGE_SELF, &ctx->ru_end);
}

void sb_worker_begin(sb_ctx *ctx, int32_t worker) {
    char err[256];
    if (sb_pin_worker(ctx->rank * ctx->cli.p.threads + worker, err, sizeof err) != 0)
        sb_fail(ctx, err);
    if (worker >= 0 && worker < ctx->cli.p.threads)
        ctx->local_placement[2 * worker] = sb_current_cpu();
    if (sb_sched_apply_worker(&ctx->cli.sched, worker, err, sizeof err) != 0) {
        sb_sched_claim_failure();
        sb_fail(ctx, err);
    }
    LIKWID_MARKER_START(SB_LIKWID_REGION);
    if (SB_WORKER_TIMES && worker >= 0 && worker < ctx->cli.p.threads) {
        ctx->workers[worker].begin_cpu_s = sb_thread_cpu();
        ctx->workers[worker].begin_s = sb_now();
    }
}

void sb_worker_end(sb_ctx *ctx, int32_t worker) {
    if (SB_WORKER_TIMES && worker >= 0 && worker < ctx->cli.p.threads) {
        sb_worker_times *t = &ctx->workers[worker];
        t->span_s = sb_now() - t->begin_s;
        t->cpu_s = sb_thread_cpu() - t->begin_cpu_s;
    }
    LIKWID_MARKER_STOP(SB_LIKWID_REGION);
    if (worker >= 0 && worker < ctx->cli.p.threads) {
        ctx->local_placement[2 * worker + 1] = sb_current_cpu();
        sb_sched_read_back(&ctx->sched_applied[worker]);
    }
}

void sb_worker_clock(sb_ctx *ctx, int32_t worker, int32_t after) {
    if (!SB_WORKER_TIMES || worker < 0 || worker >= ctx->cli.p.threads ||
        ctx->cli.p.threads > ctx->cpus_online)
        return;
    const double ghz = sb_clock_measure_ghz(sb_inner_path(&ctx->cli.p) == SB_PATH_AVX512);
    if (after)
        ctx->workers[worker].clock_ghz_after = ghz;
    else
        ctx->workers[worker].clock_ghz_before = ghz;
}

void sb_worker_add_work(sb_ctx *ctx, int32_t worker, int64_t units) {
    if (worker >= 0 && worker < ctx->cli.p.threads)
        ctx->workers[worker].work += units;
}

void sb_worker_add_wait(sb_ctx *ctx, int32_t worker, double seconds) {
    if (worker >= 0 && worker < ctx->cli.p.threads)
        ctx->workers[worker].wait_s += seconds;
}

sb_worker_totals sb_worker_totals_local(const sb_ctx *ctx) {
    sb_worker_totals t = {.workers = ctx->cli.p.threads};
    for (int32_t w = 0; w < ctx->cli.p.threads; w++) {
        const sb_worker_times *m = &ctx->workers[w];
        /* a sampled lock wait (sb_lock_timed) may overshoot: at most the span */
        const double wait = m->wait_s < m->span_s ? m->wait_s : m->span_s;
        const double useful = m->span_s - wait;
        t.useful_sum += useful;
        if (useful > t.useful_max || w == 0) {
            t.useful_max = useful;
            t.wait_at_useful_max = wait;
        }
        t.wait_sum += wait;
        t.cpu_sum += m->cpu_s;
        t.work_sum += (double)m->work;
        t.work_max = (double)m->work > t.work_max ? (double)m->work : t.work_max;
        if (m->clock_ghz_before > 0 && m->clock_ghz_after > 0) {
            const double ghz = (m->clock_ghz_before + m->clock_ghz_after) / 2;
            t.clock_min = t.clocks == 0 || ghz < t.clock_min ? ghz : t.clock_min;
            t.clock_sum += ghz;
            t.clocks++;
        }
    }
    return t;
}

uint32_t *sb_image(sb_ctx *ctx) {
    return ctx->image;
}

void sb_set_hits(sb_ctx *ctx, int64_t hits) {
    ctx->hits = hits;
    ctx->hits_set = 1;
}

void sb_check_team(sb_ctx *ctx, int32_t team) {
    if (team != ctx->cli.p.threads) {
        char msg[128];
        snprintf(msg, sizeof msg, "OpenMP gave %d threads instead of %d (OMP_THREAD_LIMIT?)",
                 (int)team, (int)ctx->cli.p.threads);
        sb_fail(ctx, msg);
    }
}

void sb_set_rank(sb_ctx *ctx, int32_t rank, int32_t nranks) {
    ctx->rank = rank;
    ctx->nranks = nranks;
}

double sb_wall(const sb_ctx *ctx) {
    return ctx->t_compute_end - ctx->t_compute_begin;
}

int32_t sb_get_placement(const sb_ctx *ctx, int32_t *pairs, int32_t max_workers) {
    int32_t n = ctx->cli.p.threads < max_workers ? ctx->cli.p.threads : max_workers;
    if (n > 0)
        memcpy(pairs, ctx->local_placement, 2 * (size_t)n * sizeof(int32_t));
    return n;
}

void sb_set_placement(sb_ctx *ctx, const int32_t *pairs, int32_t nworkers) {
    int32_t *copy = malloc(2 * (size_t)(nworkers > 0 ? nworkers : 1) * sizeof(int32_t));
    if (!copy)
        sb_fail(ctx, "out of memory in sb_set_placement");
    if (nworkers > 0)
        memcpy(copy, pairs, 2 * (size_t)nworkers * sizeof(int32_t));
    free(ctx->placement);
    ctx->placement = copy;
    ctx->nplacement = nworkers;
}

void sb_set_rank_times(sb_ctx *ctx, const double *t, int32_t n) {
    double *copy = malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
    if (!copy)
        sb_fail(ctx, "out of memory in sb_set_rank_times");
    if (n > 0)
        memcpy(copy, t, (size_t)n * sizeof(double));
    free(ctx->rank_times);
    ctx->rank_times = copy;
    ctx->nrank_times = n;
}

void sb_set_wall(sb_ctx *ctx, double wall_s) {
    ctx->wall_override = wall_s;
    ctx->wall_overridden = 1;
}
