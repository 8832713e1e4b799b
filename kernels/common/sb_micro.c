/* Microbenchmark kernels (SB_KERNEL_MICRO): their own options as text, and a record result that is
 * a per-operation distribution (min / median / mean / p99 / max) instead of an image or a hit
 * count. Everything here is reached only when the kernel's kind is SB_KERNEL_MICRO. */
#define _GNU_SOURCE
#include "sb_checksum.h"
#include "sb_internal.h"
#include "sb_options.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define OPT_MICRO_BASE 2000
#define MAX_NUMBERS 16

struct sb_micro_result {
    char op[48];
    int64_t n, ops;
    double min, median, mean, p99, max;
    int have_ops;
    char keys[MAX_NUMBERS][48];
    double values[MAX_NUMBERS];
    int nnumbers;
    uint64_t checksum;
    int have_checksum;
};

int sb_micro_is(const sb_kernel_desc *desc) {
    return desc->kind == SB_KERNEL_MICRO && &sb_micro != NULL;
}

size_t sb_micro_longopts(const sb_kernel_desc *desc, struct option *out, sb_cli *cli) {
    if (!sb_micro_is(desc))
        return 0;
    int32_t n = sb_micro.noptions < SB_MICRO_MAX_OPTIONS ? sb_micro.noptions : SB_MICRO_MAX_OPTIONS;
    for (int32_t i = 0; i < n; i++) {
        out[i] =
            (struct option){sb_micro.options[i].name, required_argument, NULL, OPT_MICRO_BASE + i};
        cli->micro_values[i] = sb_micro.options[i].default_value;
    }
    return (size_t)n;
}

int sb_micro_take_option(const sb_kernel_desc *desc, int code, const char *value, sb_cli *cli) {
    if (!sb_micro_is(desc) || code < OPT_MICRO_BASE || code >= OPT_MICRO_BASE + sb_micro.noptions ||
        code >= OPT_MICRO_BASE + SB_MICRO_MAX_OPTIONS)
        return 0;
    cli->micro_values[code - OPT_MICRO_BASE] = value;
    return 1;
}

int sb_micro_check(const sb_cli *cli, char *err, size_t errlen) {
    if (!sb_micro.check)
        return 0;
    return sb_micro.check(cli->micro_values, err, (int32_t)errlen);
}

void sb_micro_print_help(FILE *out) {
    fputs("\nMicrobenchmark options:\n", out);
    for (int32_t i = 0; i < sb_micro.noptions; i++)
        fprintf(out, "  --%-16s %s (default %s)\n", sb_micro.options[i].name,
                sb_micro.options[i].help, sb_micro.options[i].default_value);
}

const char *sb_micro_value(const sb_ctx *ctx, const char *name) {
    for (int32_t i = 0; i < sb_micro.noptions && i < SB_MICRO_MAX_OPTIONS; i++)
        if (strcmp(sb_micro.options[i].name, name) == 0)
            return ctx->cli.micro_values[i];
    return NULL;
}

static struct sb_micro_result *result_of(sb_ctx *ctx) {
    if (!ctx->micro) {
        ctx->micro = calloc(1, sizeof *ctx->micro);
        if (!ctx->micro)
            sb_fail(ctx, "out of memory for the result");
    }
    return ctx->micro;
}

void sb_micro_reset_rep(sb_ctx *ctx) {
    if (ctx->micro)
        memset(ctx->micro, 0, sizeof *ctx->micro);
}

void sb_micro_free(sb_ctx *ctx) {
    free(ctx->micro);
    ctx->micro = NULL;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Nearest-rank quantile of sorted v[0..n-1]. */
static double quantile(const double *v, int64_t n, double q) {
    int64_t k = (int64_t)ceil(q * (double)n) - 1;
    return v[k < 0 ? 0 : (k >= n ? n - 1 : k)];
}

void sb_set_op_times(sb_ctx *ctx, const char *op, const double *seconds, int64_t n,
                     int64_t ops_per_sample) {
    if (n < 1)
        sb_fail(ctx, "internal error: sb_set_op_times with no operations");
    struct sb_micro_result *r = result_of(ctx);
    double *v = malloc((size_t)n * sizeof *v);
    if (!v)
        sb_fail(ctx, "out of memory sorting operation times");
    memcpy(v, seconds, (size_t)n * sizeof *v);
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    double sum = 0.0;
    for (int64_t i = 0; i < n; i++)
        sum += v[i];
    snprintf(r->op, sizeof r->op, "%s", op);
    r->n = n;
    r->ops = n * ops_per_sample;
    r->min = v[0];
    r->max = v[n - 1];
    r->median = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
    r->p99 = quantile(v, n, 0.99);
    r->mean = sum / (double)n;
    r->have_ops = 1;
    free(v);
}

void sb_set_result_number(sb_ctx *ctx, const char *key, double value) {
    struct sb_micro_result *r = result_of(ctx);
    if (r->nnumbers >= MAX_NUMBERS)
        sb_fail(ctx, "internal error: more than 16 result numbers");
    snprintf(r->keys[r->nnumbers], sizeof r->keys[0], "%s", key);
    r->values[r->nnumbers++] = value;
}

void sb_set_checksum_value(sb_ctx *ctx, uint64_t value) {
    struct sb_micro_result *r = result_of(ctx);
    r->checksum = value;
    r->have_checksum = 1;
}

static void put_number(FILE *f, const char *key, double v) {
    fprintf(f, ",\"%s\":", key);
    if (isfinite(v))
        fprintf(f, "%.17g", v);
    else
        fputs("null", f);
}

void sb_micro_put_params(FILE *f, const sb_ctx *ctx) {
    fputc('{', f);
    for (int32_t i = 0; i < sb_micro.noptions && i < SB_MICRO_MAX_OPTIONS; i++) {
        if (i)
            fputc(',', f);
        sb_put_json_string(f, sb_micro.options[i].name);
        fputc(':', f);
        sb_put_json_string(f, ctx->cli.micro_values[i]);
    }
    fputc('}', f);
}

void sb_micro_put_results(FILE *f, const sb_ctx *ctx) {
    static const struct sb_micro_result none;
    const struct sb_micro_result *r = ctx->micro ? ctx->micro : &none;
    uint64_t sum = r->have_checksum ? r->checksum : (uint64_t)r->ops;
    fprintf(f, ",\"work\":%" PRId64 ",\"checksum\":\"fnv1a64:%016" PRIx64 "\"", r->ops,
            sb_fnv1a64_u64le(sum));
    fputs(",\"result\":{\"op\":", f);
    sb_put_json_string(f, r->have_ops ? r->op : "");
    fprintf(f, ",\"samples\":%" PRId64 ",\"ops\":%" PRId64, r->n, r->ops);
    if (r->have_ops) {
        put_number(f, "min_s", r->min);
        put_number(f, "median_s", r->median);
        put_number(f, "mean_s", r->mean);
        put_number(f, "p99_s", r->p99);
        put_number(f, "max_s", r->max);
    }
    for (int k = 0; k < r->nnumbers; k++)
        put_number(f, r->keys[k], r->values[k]);
    fputc('}', f);
}
