/* One JSON record per repetition (schema scalebench.run/1), written to stdout in a single write so
 * lines from different processes never interleave mid-record. */
#define _GNU_SOURCE
#include "sb_checksum.h"
#include "sb_clock.h"
#include "sb_internal.h"
#include "sb_simd.h"
#include "sb_threads.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef SB_CFLAGS
#define SB_CFLAGS "unknown"
#endif

/* The binary's real flags: sb_buildinfo.c (compiled per binary) overrides this weak default,
 * which holds the flags the harness itself was compiled with. */
__attribute__((weak)) const char sb_build_flags[] = SB_CFLAGS;

/* %.17g round-trips every double; JSON has no NaN/Inf, so those become null. */
static void put_double(FILE *f, double v) {
    if (isfinite(v))
        fprintf(f, "%.17g", v);
    else
        fputs("null", f);
}

static void put_key(FILE *f, const char *key) {
    fputs(",", f);
    sb_put_json_string(f, key);
    fputc(':', f);
}

static double tv_seconds(struct timeval a, struct timeval b) {
    return (double)(b.tv_sec - a.tv_sec) + 1e-6 * (double)(b.tv_usec - a.tv_usec);
}

/* The fp-contract mode as the compiler was told (the reference build says "off"). */
static const char *fp_contract_mode(void) {
    const char *flags = sb_build_flags;
    if (strstr(flags, "-ffp-contract=off"))
        return "off";
    if (strstr(flags, "-ffp-contract=fast"))
        return "fast";
    if (strstr(flags, "-ffp-contract=on"))
        return "on";
    return "default";
}

static void put_params(FILE *f, const sb_ctx *ctx, const sb_params *p) {
    if (p->kernel == SB_KERNEL_MICRO) {
        sb_micro_put_params(f, ctx);
    } else if (p->kernel == SB_KERNEL_MANDELBROT) {
        fprintf(f,
                "{\"preset\":\"%s\",\"width\":%" PRId32 ",\"height\":%" PRId32
                ",\"max_iter\":%" PRId32 ",\"region\":[",
                sb_preset_name(p->preset), p->width, p->height, p->max_iter);
        for (int k = 0; k < 4; k++) {
            if (k)
                fputc(',', f);
            put_double(f, p->region[k]);
        }
        fputs("]}", f);
    } else {
        uint64_t seed;
        memcpy(&seed, &p->seed, sizeof seed);
        fprintf(f, "{\"samples\":%" PRId64 ",\"seed\":%" PRIu64 ",\"batch\":%" PRId64 "}",
                p->samples, seed, p->batch);
    }
}

/* work, checksum and result: what the kernel computed. */
static void put_results(FILE *f, const sb_ctx *ctx) {
    const sb_params *p = &ctx->cli.p;
    if (p->kernel == SB_KERNEL_MICRO) {
        sb_micro_put_results(f, ctx);
    } else if (p->kernel == SB_KERNEL_MANDELBROT) {
        uint64_t work = 0, inside = 0;
        for (size_t k = 0; k < ctx->npixels; k++) {
            work += ctx->image[k];
            inside += ctx->image[k] == (uint32_t)p->max_iter;
        }
        fprintf(f, ",\"work\":%" PRIu64 ",\"checksum\":\"fnv1a64:%016" PRIx64 "\"", work,
                sb_fnv1a64_u32le(ctx->image, ctx->npixels));
        fprintf(f,
                ",\"result\":{\"pixels\":%zu,\"inside\":%" PRIu64 ",\"mean_iter\":", ctx->npixels,
                inside);
        put_double(f, (double)work / (double)ctx->npixels);
        fputs("}", f);
    } else {
        double n = (double)p->samples;
        double estimate = 4.0 * (double)ctx->hits / n;
        double q = (double)ctx->hits / n;
        fprintf(f, ",\"work\":%" PRId64 ",\"checksum\":\"fnv1a64:%016" PRIx64 "\"", p->samples,
                sb_fnv1a64_u64le((uint64_t)ctx->hits));
        fprintf(f, ",\"result\":{\"hits\":%" PRId64 ",\"samples\":%" PRId64 ",\"pi\":", ctx->hits,
                p->samples);
        put_double(f, estimate);
        fputs(",\"abs_error\":", f);
        put_double(f, fabs(estimate - 3.14159265358979323846));
        fputs(",\"std_error\":", f);
        put_double(f, 4.0 * sqrt(q * (1.0 - q) / n));
        fputs("}", f);
    }
}

/* clock_ghz: mean of the clock measured just before and just after the compute region. */
static void put_clock(FILE *f, const sb_ctx *ctx) {
    const double b = ctx->clock_ghz_before, a = ctx->clock_ghz_after;
    put_key(f, "clock_ghz");
    if (b > 0.0 && a > 0.0)
        put_double(f, 0.5 * (b + a));
    else
        fputs("null", f);
    if (b > 0.0 && a > 0.0) {
        fputs(",\"clock\":{\"before_ghz\":", f);
        put_double(f, b);
        fputs(",\"after_ghz\":", f);
        put_double(f, a);
        const int wide = sb_inner_path(&ctx->cli.p) == SB_PATH_AVX512;
        fprintf(f, ",\"method\":\"%s, best of %d x %.0f adds\"}",
                wide ? SB_CLOCK_METHOD_WIDE : SB_CLOCK_METHOD_PLAIN, SB_CLOCK_TRIALS,
                SB_CLOCK_ADDS);
    }
}

/* worker_*: the per-worker measurements, mean and maximum over the workers (MPI: over every rank's
 * threads, reduced by sb_mpi_report), only for kernels that report their work. */
static void put_workers(FILE *f, const sb_ctx *ctx) {
    const sb_worker_totals t =
        ctx->worker_totals_set ? ctx->worker_totals : sb_worker_totals_local(ctx);
    if (!SB_WORKER_TIMES || t.work_sum <= 0 || (ctx->nranks > 1 && !ctx->worker_totals_set))
        return;
    put_key(f, "worker_useful_mean_s");
    put_double(f, t.useful_sum / t.workers);
    put_key(f, "worker_useful_max_s");
    put_double(f, t.useful_max);
    put_key(f, "worker_wait_mean_s");
    put_double(f, t.wait_sum / t.workers);
    put_key(f, "worker_wait_at_useful_max_s");
    put_double(f, t.wait_at_useful_max);
    put_key(f, "worker_cpu_mean_s");
    put_double(f, t.cpu_sum / t.workers);
    put_key(f, "worker_work_mean");
    put_double(f, t.work_sum / t.workers);
    put_key(f, "worker_work_max");
    put_double(f, t.work_max);
    if (t.clocks > 0) {
        put_key(f, "worker_clock_ghz_mean");
        put_double(f, t.clock_sum / t.clocks);
        put_key(f, "worker_clock_ghz_min");
        put_double(f, t.clock_min);
    }
}

void sb_record_print(const sb_ctx *ctx, int rep, int warmup) {
    const sb_params *p = &ctx->cli.p;
    const sb_kernel_desc *d = ctx->desc;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) {
        fprintf(stderr, "%s: out of memory writing the record\n", ctx->prog);
        exit(1);
    }
    fputs("{\"schema\":\"scalebench.run/1\"", f);
    put_key(f, "kernel");
    sb_put_json_string(f, d->kernel);
    put_key(f, "lang");
    sb_put_json_string(f, d->lang);
    put_key(f, "model");
    sb_put_json_string(f, d->model);
    put_key(f, "schedule");
    sb_put_json_string(f, ctx->cli.schedule_text);
    put_key(f, "sync");
    sb_put_json_string(f, sb_sync_name(p->sync));
    put_key(f, "inner");
    sb_put_json_string(f, p->inner == SB_INNER_SIMD ? "simd" : "scalar");
    put_key(f, "inner_path");
    sb_put_json_string(f, sb_inner_path_name(sb_inner_path(p)));
    put_key(f, "uarch");
    sb_put_json_string(f, sb_cpu_uarch());
    fprintf(f, ",\"threads\":%" PRId32 ",\"ranks\":%" PRId32, p->threads, ctx->nranks);
    put_key(f, "params");
    put_params(f, ctx, p);
    fprintf(f, ",\"rep\":%d,\"warmup\":%s", rep, warmup ? "true" : "false");
    put_key(f, "wall_s");
    put_double(f, ctx->wall_overridden ? ctx->wall_override
                                       : ctx->t_compute_end - ctx->t_compute_begin);
    put_key(f, "setup_s");
    put_double(f, ctx->t_setup_end - ctx->t_run_start);
    put_key(f, "cpu_user_s");
    put_double(f, tv_seconds(ctx->ru_begin.ru_utime, ctx->ru_end.ru_utime));
    put_key(f, "cpu_sys_s");
    put_double(f, tv_seconds(ctx->ru_begin.ru_stime, ctx->ru_end.ru_stime));
    fprintf(f, ",\"ctx_voluntary\":%ld,\"ctx_involuntary\":%ld,\"os_threads\":%" PRId32,
            ctx->ru_end.ru_nvcsw - ctx->ru_begin.ru_nvcsw,
            ctx->ru_end.ru_nivcsw - ctx->ru_begin.ru_nivcsw, ctx->os_threads);
    const int32_t *pl = ctx->placement ? ctx->placement : ctx->local_placement;
    int32_t npl = ctx->placement ? ctx->nplacement : p->threads;
    fputs(",\"placement\":[", f);
    for (int32_t w = 0; w < npl; w++)
        fprintf(f, "%s[%" PRId32 ",%" PRId32 "]", w ? "," : "", pl[2 * w], pl[2 * w + 1]);
    fputs("]", f);
    put_results(f, ctx);
    put_clock(f, ctx);
    put_workers(f, ctx);
    put_key(f, "sched");
    const int waits = ctx->desc->wait_policy;
    sb_sched_put_json(f, &ctx->cli.sched, ctx->sched_applied, p->threads,
                      waits ? sb_wait_policy_name(ctx->cli.wait_policy) : NULL,
                      waits ? sb_wait_policy_name(sb_wait_applied(ctx)) : NULL);
    put_key(f, "timer_res_s");
    put_double(f, sb_timer_resolution());
    fputs(",\"build\":{\"compiler\":", f);
#if defined(__clang__)
    sb_put_json_string(f, "clang " __clang_version__);
#elif defined(__GNUC__)
    sb_put_json_string(f, "gcc " __VERSION__);
#else
    sb_put_json_string(f, "unknown");
#endif
    put_key(f, "flags");
    sb_put_json_string(f, sb_build_flags);
    put_key(f, "fp_contract");
    sb_put_json_string(f, fp_contract_mode());
    fputs("}", f);
    char host[256] = "unknown";
    gethostname(host, sizeof host - 1);
    host[sizeof host - 1] = '\0';
    put_key(f, "host");
    sb_put_json_string(f, host);
    put_key(f, "started");
    sb_put_json_string(f, ctx->started);
    if (ctx->rank_times) {
        fputs(",\"rank_wall_s\":[", f);
        for (int32_t r = 0; r < ctx->nrank_times; r++) {
            if (r)
                fputc(',', f);
            put_double(f, ctx->rank_times[r]);
        }
        fputs("]", f);
    }
    if (ctx->probe_valid)
        sb_probe_put(f, &ctx->probe_before, &ctx->probe_after, ctx->runq_wait_s);
    fputs("}\n", f);
    fclose(f);
    fwrite(buf, 1, len, stdout);
    fflush(stdout);
    free(buf);
}
