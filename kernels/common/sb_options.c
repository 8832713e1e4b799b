/* Command-line parsing: GNU long options, every value range-checked, one error line naming option
 * and value. */
#define _GNU_SOURCE
#include "sb_options.h"
#include "sb_wait.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    OPT_THREADS = 1000,
    OPT_REPS,
    OPT_WARMUP,
    OPT_SCHEDULE,
    OPT_SYNC,
    OPT_INNER,
    OPT_WIDTH,
    OPT_HEIGHT,
    OPT_MAX_ITER,
    OPT_REGION,
    OPT_PRESET,
    OPT_DUMP,
    OPT_SAMPLES,
    OPT_SEED,
    OPT_BATCH,
    OPT_HELP,
    OPT_CHECK_ARGS,
    OPT_NICE,
    OPT_WORKER_NICE,
    OPT_WORKER_POLICY,
    OPT_WAIT_POLICY,
    OPT_TURNS
};

#define MAX_CHUNK (1 << 30)
#define MAX_SAMPLES (INT64_C(1) << 62)
#define MAX_REPS 1000000

static const double preset_regions[3][4] = {
    {0, 0, 0, 0}, {-2.0, 0.5, -1.25, 1.25}, {-0.75, 0.25, 0.0, 1.0}};

static const struct option common_options[] = {
    {"threads", required_argument, NULL, OPT_THREADS},
    {"reps", required_argument, NULL, OPT_REPS},
    {"warmup", required_argument, NULL, OPT_WARMUP},
    {"schedule", required_argument, NULL, OPT_SCHEDULE},
    {"sync", required_argument, NULL, OPT_SYNC},
    {"inner", required_argument, NULL, OPT_INNER},
    {"help", no_argument, NULL, OPT_HELP},
    {"check-args", no_argument, NULL, OPT_CHECK_ARGS},
    {"nice", required_argument, NULL, OPT_NICE},
    {"worker-nice", required_argument, NULL, OPT_WORKER_NICE},
    {"worker-policy", required_argument, NULL, OPT_WORKER_POLICY},
    {"wait-policy", required_argument, NULL, OPT_WAIT_POLICY},
    {"turns", required_argument, NULL, OPT_TURNS},
};
static const struct option mandelbrot_options[] = {
    {"width", required_argument, NULL, OPT_WIDTH},
    {"height", required_argument, NULL, OPT_HEIGHT},
    {"max-iter", required_argument, NULL, OPT_MAX_ITER},
    {"region", required_argument, NULL, OPT_REGION},
    {"preset", required_argument, NULL, OPT_PRESET},
    {"dump", required_argument, NULL, OPT_DUMP},
};
static const struct option mcpi_options[] = {
    {"samples", required_argument, NULL, OPT_SAMPLES},
    {"seed", required_argument, NULL, OPT_SEED},
    {"batch", required_argument, NULL, OPT_BATCH},
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static void set_error(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void set_error(char *err, size_t errlen, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

/* Signed decimal integer in [lo, hi]; rejects empty, blanks, trailing junk and overflow. */
static int parse_int64(const char *opt, const char *text, int64_t lo, int64_t hi, int64_t *out,
                       char *err, size_t errlen) {
    char *end = NULL;
    if (text[0] == '\0' ||
        !(text[0] == '-' || text[0] == '+' || (text[0] >= '0' && text[0] <= '9'))) {
        set_error(err, errlen, "--%s: '%s' is not an integer", opt, text);
        return -1;
    }
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (*end != '\0') {
        set_error(err, errlen, "--%s: '%s' is not an integer", opt, text);
        return -1;
    }
    if (errno == ERANGE || v < lo || v > hi) {
        set_error(err, errlen, "--%s: '%s' is out of range (%" PRId64 "..%" PRId64 ")", opt, text,
                  lo, hi);
        return -1;
    }
    *out = v;
    return 0;
}

static int parse_int32(const char *opt, const char *text, int32_t lo, int32_t hi, int32_t *out,
                       char *err, size_t errlen) {
    int64_t v;
    if (parse_int64(opt, text, lo, hi, &v, err, errlen) != 0)
        return -1;
    *out = (int32_t)v;
    return 0;
}

/* The seed is any uint64: decimal or 0x-hex, no sign. */
static int parse_seed(const char *text, int64_t *out, char *err, size_t errlen) {
    char *end = NULL;
    if (text[0] < '0' || text[0] > '9') {
        set_error(err, errlen, "--seed: '%s' is not an unsigned integer", text);
        return -1;
    }
    errno = 0;
    unsigned long long v = strtoull(text, &end, 0);
    if (*end != '\0') {
        set_error(err, errlen, "--seed: '%s' is not an unsigned integer", text);
        return -1;
    }
    if (errno == ERANGE) {
        set_error(err, errlen, "--seed: '%s' is out of range (0..18446744073709551615)", text);
        return -1;
    }
    uint64_t u = v;
    memcpy(out, &u, sizeof u);
    return 0;
}

/* "x0,x1,y0,y1": four finite numbers with x0 < x1 and y0 < y1. */
static int parse_region(const char *text, double region[4], char *err, size_t errlen) {
    const char *s = text;
    for (int k = 0; k < 4; k++) {
        char *end = NULL;
        errno = 0;
        double v = strtod(s, &end);
        /* overflow gives inf (rejected); underflow to a subnormal is still a usable bound */
        if (end == s || !isfinite(v) || (k < 3 && *end != ',') || (k == 3 && *end != '\0') ||
            *s == ' ' || *s == '\t') {
            set_error(err, errlen, "--region: '%s' is not four finite numbers x0,x1,y0,y1", text);
            return -1;
        }
        region[k] = v;
        s = end + 1;
    }
    if (!(region[0] < region[1]) || !(region[2] < region[3])) {
        set_error(err, errlen, "--region: '%s' is empty or inverted (need x0 < x1 and y0 < y1)",
                  text);
        return -1;
    }
    return 0;
}

/* Appends the names of the schedules/syncs in `mask` as "a|b|c" to buf. */
static void mask_names(uint32_t mask, int count, const char *(*name)(int32_t), char *buf,
                       size_t n) {
    buf[0] = '\0';
    for (int i = 0; i < count; i++) {
        if (!(mask & SB_BIT(i)))
            continue;
        if (buf[0] != '\0')
            strncat(buf, "|", n - strlen(buf) - 1);
        strncat(buf, name(i), n - strlen(buf) - 1);
    }
}

static uint32_t supported_schedules(const sb_kernel_desc *d) {
    uint32_t mask = 0;
    for (int s = 0; s < SB_SCHED_COUNT; s++)
        if (d->sync_by_schedule[s])
            mask |= SB_BIT(s);
    return mask;
}

static uint32_t supported_syncs(const sb_kernel_desc *d) {
    uint32_t mask = 0;
    for (int s = 0; s < SB_SCHED_COUNT; s++)
        mask |= d->sync_by_schedule[s];
    return mask;
}

/* "kind[,chunk]" against what this model supports. */
static int parse_schedule(const sb_kernel_desc *d, const char *text, sb_cli *cli, char *err,
                          size_t errlen) {
    char kind[32];
    const char *comma = strchr(text, ',');
    size_t len = comma ? (size_t)(comma - text) : strlen(text);
    char names[128];
    mask_names(supported_schedules(d), SB_SCHED_COUNT, sb_schedule_name, names, sizeof names);
    int32_t code = len < sizeof kind ? 0 : -1;
    if (code == 0) {
        memcpy(kind, text, len);
        kind[len] = '\0';
        code = sb_schedule_from_name(kind);
    }
    if (code < 0 || !d->sync_by_schedule[code]) {
        set_error(err, errlen, "--schedule: '%s' is not supported (%s-%s-%s supports %s)", text,
                  d->kernel, d->lang, d->model, names);
        return -1;
    }
    int32_t chunk = 0;
    if (comma) {
        if (!(d->chunk_schedules & SB_BIT(code))) {
            char chunked[128];
            mask_names(d->chunk_schedules, SB_SCHED_COUNT, sb_schedule_name, chunked,
                       sizeof chunked);
            set_error(err, errlen, "--schedule: '%s' takes no chunk (chunked schedules: %s)", text,
                      chunked[0] ? chunked : "none");
            return -1;
        }
        char *end = NULL;
        errno = 0;
        long long v = strtoll(comma + 1, &end, 10);
        if (comma[1] < '0' || comma[1] > '9' || *end != '\0' || errno == ERANGE || v < 1 ||
            v > MAX_CHUNK) {
            set_error(err, errlen, "--schedule: '%s' has a bad chunk (need an integer 1..%d)", text,
                      MAX_CHUNK);
            return -1;
        }
        chunk = (int32_t)v;
    }
    cli->p.schedule = code;
    cli->p.chunk = chunk;
    return 0;
}

static void set_defaults(const sb_kernel_desc *d, sb_cli *cli) {
    memset(cli, 0, sizeof *cli);
    sb_params *p = &cli->p;
    p->kernel = d->kind;
    p->threads = 1;
    p->reps = 1;
    p->warmup = 0;
    p->schedule = d->default_schedule;
    p->chunk = 0;
    p->sync = d->default_sync;
    p->inner = SB_INNER_SCALAR;
    p->width = 1024;
    p->height = 1024;
    p->max_iter = 1000;
    p->preset = SB_PRESET_SYMMETRIC;
    memcpy(p->region, preset_regions[SB_PRESET_SYMMETRIC], sizeof p->region);
    p->samples = 10000000;
    p->seed = 0;
    p->batch = 4096;
    cli->turns = SB_TURNS_NONE;
}

/* Checks that depend on several options, after all were read. */
static int check_combinations(const sb_kernel_desc *d, sb_cli *cli, const char *sync_text,
                              char *err, size_t errlen) {
    sb_params *p = &cli->p;
    if (!(d->sync_by_schedule[p->schedule] & SB_BIT(p->sync))) {
        char names[128];
        const char *shown = sync_text ? sync_text : sb_sync_name(p->sync);
        if (supported_syncs(d) & SB_BIT(p->sync)) {
            mask_names(d->sync_by_schedule[p->schedule], SB_SYNC_COUNT, sb_sync_name, names,
                       sizeof names);
            set_error(err, errlen,
                      "--sync: '%s' cannot be combined with --schedule %s (allowed: %s)", shown,
                      sb_schedule_name(p->schedule), names);
        } else {
            mask_names(supported_syncs(d), SB_SYNC_COUNT, sb_sync_name, names, sizeof names);
            set_error(err, errlen, "--sync: '%s' is not supported (%s-%s-%s supports %s)", shown,
                      d->kernel, d->lang, d->model, names);
        }
        return -1;
    }
    if (d->kind == SB_KERNEL_MANDELBROT && (int64_t)p->width * (int64_t)p->height > SB_MAX_PIXELS) {
        set_error(err, errlen,
                  "--width: '%" PRId32 "' x --height '%" PRId32 "' = %" PRId64
                  " pixels exceeds the limit %lld",
                  p->width, p->height, (int64_t)p->width * p->height, (long long)SB_MAX_PIXELS);
        return -1;
    }
    if (p->chunk)
        snprintf(cli->schedule_text, sizeof cli->schedule_text, "%s,%" PRId32,
                 sb_schedule_name(p->schedule), p->chunk);
    else
        snprintf(cli->schedule_text, sizeof cli->schedule_text, "%s",
                 sb_schedule_name(p->schedule));
    return 0;
}

int sb_parse_options(const sb_kernel_desc *d, int argc, char **argv, sb_cli *cli, char *err,
                     size_t errlen) {
    set_defaults(d, cli);
    struct option
        longopts[COUNT(common_options) + COUNT(mandelbrot_options) + SB_MICRO_MAX_OPTIONS + 1];
    size_t n = 0;
    for (size_t i = 0; i < COUNT(common_options); i++)
        longopts[n++] = common_options[i];
    const struct option *extra =
        d->kind == SB_KERNEL_MANDELBROT ? mandelbrot_options : mcpi_options;
    size_t nextra =
        d->kind == SB_KERNEL_MANDELBROT ? COUNT(mandelbrot_options) : COUNT(mcpi_options);
    if (sb_micro_is(d))
        nextra = 0;
    for (size_t i = 0; i < nextra; i++)
        longopts[n++] = extra[i];
    n += sb_micro_longopts(d, &longopts[n], cli);
    memset(&longopts[n], 0, sizeof longopts[n]);

    sb_params *p = &cli->p;
    const char *sync_text = NULL;
    int region_given = 0;
    int rc = 0;
    /* optind = 0 makes glibc re-initialise, so the parser can run more than once (unit tests). */
    optind = 0;
    opterr = 0;
    int c;
    /* "+" stops at the first non-option (reported below); ":" reports missing values as ':'. */
    while (rc == 0 && (c = getopt_long(argc, argv, "+:h", longopts, NULL)) != -1) {
        const char *opt = "";
        for (size_t i = 0; i < n; i++)
            if (longopts[i].val == c)
                opt = longopts[i].name;
        switch (c) {
        case OPT_THREADS:
            rc = parse_int32(opt, optarg, 1, d->max_threads, &p->threads, err, errlen);
            break;
        case OPT_REPS:
            rc = parse_int32(opt, optarg, 1, MAX_REPS, &p->reps, err, errlen);
            break;
        case OPT_WARMUP:
            rc = parse_int32(opt, optarg, 0, MAX_REPS, &p->warmup, err, errlen);
            break;
        case OPT_SCHEDULE:
            rc = parse_schedule(d, optarg, cli, err, errlen);
            break;
        case OPT_SYNC: {
            int32_t code = sb_sync_from_name(optarg);
            if (code < 0 || !(supported_syncs(d) & SB_BIT(code))) {
                char names[128];
                mask_names(supported_syncs(d), SB_SYNC_COUNT, sb_sync_name, names, sizeof names);
                set_error(err, errlen, "--sync: '%s' is not supported (%s-%s-%s supports %s)",
                          optarg, d->kernel, d->lang, d->model, names);
                rc = -1;
            } else {
                p->sync = code;
                sync_text = optarg;
            }
            break;
        }
        case OPT_INNER:
            if (strcmp(optarg, "scalar") == 0) {
                p->inner = SB_INNER_SCALAR;
            } else if (strcmp(optarg, "simd") == 0 && d->inner_simd) {
                p->inner = SB_INNER_SIMD;
            } else {
                set_error(err, errlen, "--inner: '%s' is not supported (%s-%s-%s supports %s)",
                          optarg, d->kernel, d->lang, d->model,
                          d->inner_simd ? "scalar, simd" : "scalar");
                rc = -1;
            }
            break;
        case OPT_WIDTH:
            rc = parse_int32(opt, optarg, 1, 1 << 20, &p->width, err, errlen);
            break;
        case OPT_HEIGHT:
            rc = parse_int32(opt, optarg, 1, 1 << 20, &p->height, err, errlen);
            break;
        case OPT_MAX_ITER:
            rc = parse_int32(opt, optarg, 1, INT32_MAX, &p->max_iter, err, errlen);
            break;
        case OPT_REGION:
            rc = parse_region(optarg, p->region, err, errlen);
            region_given = 1;
            break;
        case OPT_PRESET:
            if (strcmp(optarg, "symmetric") == 0) {
                p->preset = SB_PRESET_SYMMETRIC;
            } else if (strcmp(optarg, "asymmetric") == 0) {
                p->preset = SB_PRESET_ASYMMETRIC;
            } else {
                set_error(err, errlen, "--preset: '%s' is not a preset (symmetric|asymmetric)",
                          optarg);
                rc = -1;
            }
            break;
        case OPT_DUMP:
            if (optarg[0] == '\0') {
                set_error(err, errlen, "--dump: '' is not a file name");
                rc = -1;
            }
            cli->dump = optarg;
            break;
        case OPT_SAMPLES:
            rc = parse_int64(opt, optarg, 1, MAX_SAMPLES, &p->samples, err, errlen);
            break;
        case OPT_SEED:
            rc = parse_seed(optarg, &p->seed, err, errlen);
            break;
        case OPT_BATCH:
            rc = parse_int64(opt, optarg, 1, MAX_SAMPLES, &p->batch, err, errlen);
            break;
        case OPT_NICE:
            rc = sb_sched_parse_nice(optarg, &cli->sched, err, errlen);
            break;
        case OPT_WORKER_NICE:
            rc = sb_sched_parse_worker_nice(optarg, &cli->sched, err, errlen);
            break;
        case OPT_WORKER_POLICY:
            rc = sb_sched_parse_worker_policy(optarg, &cli->sched, err, errlen);
            break;
        case OPT_WAIT_POLICY:
            if (!d->wait_policy) {
                set_error(err, errlen,
                          "--wait-policy: '%s' is not supported (%s-%s-%s: only pthreads kernels "
                          "take it; OpenMP reads OMP_WAIT_POLICY)",
                          optarg, d->kernel, d->lang, d->model);
                rc = -1;
            } else {
                rc = sb_wait_parse(optarg, &cli->wait_policy, err, errlen);
            }
            break;
        case OPT_TURNS:
            rc = sb_turns_parse(optarg, &cli->turns, err, errlen);
            break;
        case OPT_HELP:
        case 'h':
            cli->help = 1;
            break;
        case OPT_CHECK_ARGS:
            cli->check_args = 1;
            break;
        case ':':
            set_error(err, errlen, "%s: missing value", argv[optind - 1]);
            rc = -1;
            break;
        default:
            if (sb_micro_take_option(d, c, optarg, cli))
                break;
            set_error(err, errlen, "unknown option '%s' (see --help)", argv[optind - 1]);
            rc = -1;
            break;
        }
    }
    if (rc != 0)
        return SB_PARSE_ERROR;
    if (cli->help)
        return SB_PARSE_HELP;
    if (optind < argc) {
        set_error(err, errlen, "unexpected argument '%s' (see --help)", argv[optind]);
        return SB_PARSE_ERROR;
    }
    if (region_given)
        p->preset = SB_PRESET_CUSTOM;
    else
        memcpy(p->region, preset_regions[p->preset], sizeof p->region);
    if (check_combinations(d, cli, sync_text, err, errlen) != 0)
        return SB_PARSE_ERROR;
    if (cli->turns.in >= 0 && strcmp(d->model, "mpi") == 0) {
        set_error(err, errlen,
                  "--turns: not supported by %s-%s-%s (its ranks are processes of "
                  "their own)",
                  d->kernel, d->lang, d->model);
        return SB_PARSE_ERROR;
    }
    if (sb_micro_is(d) && sb_micro_check(cli, err, errlen) != 0)
        return SB_PARSE_ERROR;
    return SB_PARSE_OK;
}

void sb_print_help(const sb_kernel_desc *d, const char *prog, FILE *out) {
    char schedules[128], syncs[128], chunked[128], chunk_note[256] = "";
    mask_names(supported_schedules(d), SB_SCHED_COUNT, sb_schedule_name, schedules,
               sizeof schedules);
    mask_names(supported_syncs(d), SB_SYNC_COUNT, sb_sync_name, syncs, sizeof syncs);
    mask_names(d->chunk_schedules, SB_SCHED_COUNT, sb_schedule_name, chunked, sizeof chunked);
    if (chunked[0])
        snprintf(chunk_note, sizeof chunk_note, ";\n                     chunk C (1..2^30) for %s",
                 chunked);
    fprintf(out,
            "Usage: %s [OPTION]...\n"
            "scalebench kernel: %s, language %s, model %s. Prints one JSON record per repetition\n"
            "on stdout (schema scalebench.run/1, see kernels/README.md); logs go to stderr.\n"
            "\n"
            "Common options:\n"
            "  --threads N        workers per process, 1..%d (default 1)\n"
            "  --reps K           measured repetitions, 1..%d (default 1)\n"
            "  --warmup W         warm-up repetitions before them, 0..%d (default 0)\n"
            "  --schedule S[,C]   work distribution: %s (default %s)%s\n"
            "  --sync M           synchronisation: %s (default %s)\n"
            "  --inner I          scalar = the bit-exact reference loop (default); simd = the\n"
            "                     AVX-512/AVX2 kernel of this CPU (else scalar), bit-identical\n"
            "  --check-args       validate the options and exit: 0, or 2 with the reason (runs "
            "nothing)\n"
            "  --turns R,W        take turns with other processes: wait for a byte on inherited\n"
            "                     descriptor R before each repetition (warm-ups too), write one\n"
            "                     to W after it (perf/perf_alternating.py conducts them)\n"
            "  -h, --help         this text\n",
            prog, d->kernel, d->lang, d->model, d->max_threads, MAX_REPS, MAX_REPS, schedules,
            sb_schedule_name(d->default_schedule), chunk_note, syncs,
            sb_sync_name(d->default_sync));
    if (sb_micro_is(d))
        sb_micro_print_help(out);
    else if (d->kind == SB_KERNEL_MANDELBROT)
        fprintf(
            out,
            "\nMandelbrot options:\n"
            "  --width W, --height H   image size in pixels, each 1..2^20, W*H <= 2^28 "
            "(default 1024x1024)\n"
            "  --max-iter N       iteration limit per pixel, 1..2^31-1 (default 1000)\n"
            "  --preset P         symmetric = -2.0,0.5,-1.25,1.25 (default),\n"
            "                     asymmetric = -0.75,0.25,0.0,1.0 (unbalanced rows)\n"
            "  --region x0,x1,y0,y1  explicit region, overrides --preset\n"
            "  --dump FILE.pgm    write the counts as 16-bit big-endian P5 PGM, maxval 65535,\n"
            "                     clamped (after the last repetition; checked before computing)\n");
    else
        fprintf(out, "\nMonte-Carlo pi options:\n"
                     "  --samples N        samples, 1..2^62 (default 10000000)\n"
                     "  --seed S           uint64 seed, decimal or 0x-hex (default 0)\n"
                     "  --batch B          samples a worker accumulates locally before one\n"
                     "                     synchronised update; 1 = every sample (default 4096)\n");
    if (d->wait_policy)
        fprintf(
            out,
            "\nWaiting (the pool between jobs, the barriers inside a repetition):\n"
            "  --wait-policy W    spin = wait on a pause loop without limit inside a repetition\n"
            "                     (OMP_WAIT_POLICY=active); sleep = sleep in the kernel at once\n"
            "                     (passive); auto = spin while the workers fit the CPUs the\n"
            "                     process may use (pin list or affinity mask), else sleep\n"
            "                     (default auto). Parked helpers between repetitions spin at\n"
            "                     most %d pause iterations, then sleep. On a shared VM a\n"
            "                     sleeping vCPU can slow the busy one: comparing a sleeping\n"
            "                     and a spinning variant then measures the host.\n",
            SB_SPIN_BETWEEN_JOBS);
    sb_sched_print_help(out);
    if (d->help && d->help[0])
        fprintf(out, "\n%s\n", d->help);
    fprintf(out, "\nExit status: 0 ok, 1 runtime failure, 2 bad arguments (one line on stderr).\n");
}
