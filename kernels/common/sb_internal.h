/*
 * Harness-private state shared by the harness's own files (not for kernels: they see harness.h).
 */
#ifndef SB_INTERNAL_H
#define SB_INTERNAL_H

#include "harness.h"
#include "sb_probe.h"
#include "sb_sched.h"
#include "sb_turns.h"

#include <stddef.h>
#include <stdio.h>
#include <sys/resource.h>

/* Everything the command line says, including what does not fit the C-interoperable sb_params. */
typedef struct sb_cli {
    sb_params p;
    const char *dump;       /* --dump path or NULL */
    char schedule_text[48]; /* normalised "dynamic,4" / "static" / "none" as echoed in records */
    int help;               /* --help given */
    int check_args;         /* --check-args: validate the options, run nothing */
    const char *micro_values[SB_MICRO_MAX_OPTIONS]; /* SB_KERNEL_MICRO: option texts (sb_micro.c) */
    sb_sched_request sched;                         /* --nice, --worker-nice, --worker-policy */
    int32_t wait_policy; /* --wait-policy, enum sb_wait_policy (default auto) */
    sb_turns turns;      /* --turns R,W (sb_turns.h) */
} sb_cli;

/* 0 = the per-worker measurements compiled out (-DSB_WORKER_TIMES=0): only for
 * perf/perf_worker_times.py, which measures what they cost. */
#ifndef SB_WORKER_TIMES
#define SB_WORKER_TIMES 1
#endif

/* One worker's measurements of one repetition (sb_ctx.c), on its own cache line. */
typedef struct sb_worker_times {
    double begin_s, begin_cpu_s; /* at the end of sb_worker_begin */
    double span_s, cpu_s;        /* sb_worker_begin .. sb_worker_end: monotonic, thread CPU */
    double wait_s;               /* sb_worker_add_wait, and sb_lock_timed's estimate */
    int64_t work;                /* reported by sb_worker_add_work */
    uint64_t lock_draw;          /* sb_lock_timed: state of its sampling draws */
    double clock_ghz_before, clock_ghz_after; /* sb_worker_clock, around the region; 0 = none */
    char pad[56];
} sb_worker_times;

/* The record's worker_* fields before division: sums and maxima over the workers of one process, or
 * of every rank's workers once sb_mpi_report has reduced them onto rank 0. */
typedef struct sb_worker_totals {
    double useful_sum, useful_max, wait_sum, cpu_sum, work_sum, work_max, workers;
    double wait_at_useful_max; /* the waiting of the worker whose useful time is useful_max */
    double clock_sum, clock_min,
        clocks; /* the workers' clocks (sb_worker_clock): sum, least, count */
} sb_worker_totals;

struct sb_ctx {
    const sb_kernel_desc *desc;
    char prog[64]; /* "<kernel>-<lang>-<model>", the prefix of every error line */
    sb_cli cli;
    int32_t rank, nranks;

    uint32_t *image; /* Mandelbrot only */
    size_t npixels;
    int64_t hits;
    int hits_set;

    /* per repetition */
    double t_run_start, t_setup_end, t_compute_begin, t_compute_end;
    double wall_override;
    int wall_overridden;
    struct rusage ru_begin, ru_end;
    int32_t os_threads;
    /* core clock measured by sb_clock.c just before and after run(); 0 = not measured */
    double clock_ghz_before, clock_ghz_after;
    int32_t *local_placement; /* 2 * threads */
    int32_t *placement;       /* record placement: local copy or sb_set_placement's */
    int32_t nplacement;
    double *rank_times;
    int32_t nrank_times;
    char started[32]; /* UTC ISO-8601 of the repetition start */

    /* machine-state probe around each measured repetition (sb_probe.c) */
    sb_probe_sample probe_before, probe_after;
    double runq_wait_s; /* run-queue wait during the repetition, -1 unknown */
    int probe_valid;
    struct sb_micro_result
        *micro; /* SB_KERNEL_MICRO: this repetition's distribution (sb_micro.c) */
    sb_sched_applied *sched_applied; /* per worker, read back at the end of its work */
    sb_worker_times *workers;        /* per worker: useful time, waiting, CPU time, work */
    sb_worker_totals worker_totals;  /* MPI: every rank's, reduced by sb_mpi_report */
    int worker_totals_set;
    int32_t cpus_online; /* sb_worker_clock measures only with at most this many workers */
};

/* sb_time.c */
double sb_now(void);                  /* CLOCK_MONOTONIC seconds */
double sb_thread_cpu(void);           /* CLOCK_THREAD_CPUTIME_ID seconds of the calling thread */
double sb_timer_resolution(void);     /* clock_getres(CLOCK_MONOTONIC) */
void sb_utc_now(char *buf, size_t n); /* "2026-11-22T00:00:00Z" */

/* sb_placement.c */
int32_t sb_count_os_threads(void); /* entries of /proc/self/task, -1 if unreadable */
int32_t sb_current_cpu(void);      /* sched_getcpu(), -1 if unavailable */

/* sb_ctx.c */
int sb_ctx_init(sb_ctx *ctx, const sb_kernel_desc *desc, const sb_cli *cli);
void sb_ctx_reset_rep(sb_ctx *ctx);
void sb_ctx_free(sb_ctx *ctx);

/* sb_ctx.c: this process's workers' measurements of the repetition just run. */
sb_worker_totals sb_worker_totals_local(const sb_ctx *ctx);

/* sb_record.c: one JSON line for the repetition just run. */
void sb_record_print(const sb_ctx *ctx, int rep, int warmup);

/* sb_json.c: a JSON string literal, escaped */
void sb_put_json_string(FILE *f, const char *s);

/* sb_names.c: text <-> enum codes */
const char *sb_schedule_name(int32_t schedule);
const char *sb_sync_name(int32_t sync);
const char *sb_preset_name(int32_t preset);
int32_t sb_schedule_from_name(const char *name); /* -1 if unknown */
int32_t sb_sync_from_name(const char *name);     /* -1 if unknown */

/* sb_micro.c: microbenchmark kernels. sb_micro is weak: other kernels do not define it. */
extern const sb_micro_desc sb_micro __attribute__((weak));
int sb_micro_is(const sb_kernel_desc *desc);
void sb_micro_reset_rep(sb_ctx *ctx);
void sb_micro_free(sb_ctx *ctx);
void sb_micro_put_params(FILE *f, const sb_ctx *ctx);
void sb_micro_put_results(FILE *f, const sb_ctx *ctx);

/* Print an error line only on the first MPI rank (env var based: works before MPI_Init). */
int sb_is_first_rank_by_env(void);
int sb_rank_by_env(void); /* the launcher's rank variable (Open MPI, PMIx, Slurm), else 0 */

#endif /* SB_INTERNAL_H */
