/*
 * scalebench kernel harness — the public interface between the harness and every kernel.
 *
 * FROZEN: the Fortran/MPI kernels and every other kernel are written against this file. Add
 * functions if needed; never change the meaning, order or types of what is here.
 *
 * How a kernel binary is built: the harness objects (make variable HARNESS_OBJS in kernels/c.mk,
 * which include main() from main.c) plus ONE kernel object that defines the descriptor `sb_kernel`
 * below and its run() function. A Fortran kernel is a small C file defining `sb_kernel` whose run()
 * calls a Fortran bind(C) routine; every function here is callable from Fortran through
 * iso_c_binding: plain functions, opaque `sb_ctx *` (type(c_ptr), value), scalars by value, no
 * varargs, no struct passed by value. Parameters are read through sb_params_get(), a
 * C-interoperable struct of fixed-size fields (bind(C) derived type with the same field order).
 *
 * Life cycle (main.c):
 *   parse options (deterministic; on error: one line on stderr, printed only if
 *   OMPI_COMM_WORLD_RANK / PMIX_RANK / SLURM_PROCID is unset or 0, and exit 2 on every rank;
 *   the --dump path is checked here, before any computing)
 *   -> sb_kernel.init(&argc, &argv) if set (e.g. MPI_Init); the rank is read only when records
 *      are printed, so run() may call sb_set_rank in every repetition
 *   -> LIKWID_MARKER_INIT, only under likwid-perfctr -m (LIKWID_EVENTS set)
 *   -> for warm-up then measured repetitions: clear image/hits, t0 = now, run(ctx); then on rank 0
 *      compute work + checksum and print one JSON record line on stdout
 *   -> write --dump (rank 0, temp file + rename) -> LIKWID_MARKER_CLOSE
 *   -> sb_kernel.finalize() if set (e.g. MPI_Finalize) -> exit 0.
 *
 * Inside run(ctx) a threaded kernel:
 *   1. starts its workers (the calling thread is worker 0; pthreads kernels keep a pool of
 *      threads-1 helpers, created in order on the first repetition, so worker i lands on
 *      likwid-pin's cpu list entry i in every repetition, as in OpenMP);
 *   2. all workers meet at a barrier; ONE thread calls sb_compute_begin(ctx) (ends setup_s,
 *      counts /proc/self/task -> os_threads, starts wall_s and the getrusage delta); barrier;
 *   3. each worker calls sb_worker_begin(ctx, w), does its share, sb_worker_end(ctx, w);
 *   4. barrier; ONE thread calls sb_compute_end(ctx); join/teardown.
 *   Results: Mandelbrot stores every pixel's count into sb_image(ctx) (row-major, width*height
 *   uint32); π calls sb_set_hits(ctx, hits) once (after sb_compute_end is fine). run() returns 0
 *   on success; on a runtime failure it calls sb_fail() (prints, exits 1).
 *
 * Make variables exported by kernels/c.mk for other fragments: HARNESS_OBJS, HARNESS_INC,
 * HARNESS_HDRS, CFLAGS_REF, OBJ_DIR (build/obj), LIKWID_CFLAGS, LIKWID_LIBS, BIN_DIR and
 * $(call sb_buildinfo_obj,<binary>,<flags>) for the record's build.flags.
 */
#ifndef SB_HARNESS_H
#define SB_HARNESS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Opaque per-process context; one per binary invocation, reused across repetitions. */
typedef struct sb_ctx sb_ctx;

/* Kernel family; selects the kernel-specific options (Mandelbrot or π). */
enum sb_kernel_kind { SB_KERNEL_MANDELBROT = 1, SB_KERNEL_MCPI = 2 };

/* --schedule kinds. NONE = the model has no schedule (serial, pure MPI). */
enum sb_schedule {
    SB_SCHED_NONE = 0,
    SB_SCHED_STATIC = 1,  /* OpenMP schedule(static[,chunk]) */
    SB_SCHED_DYNAMIC = 2, /* OpenMP schedule(dynamic[,chunk]) */
    SB_SCHED_GUIDED = 3,  /* OpenMP schedule(guided[,chunk]) */
    SB_SCHED_BLOCK = 4,   /* pthreads: one contiguous block of work per worker */
    SB_SCHED_CYCLIC = 5,  /* pthreads: chunks dealt round-robin */
    SB_SCHED_QUEUE = 6,   /* pthreads: chunks handed out from shared state at run time */
    SB_SCHED_MASTER = 7,  /* MPI: rank 0 hands out chunks to the other ranks at run time */
    SB_SCHED_COUNT = 8
};

/* --sync modes (see each kernel's --help for what they guard). */
enum sb_sync {
    SB_SYNC_NONE = 0,
    SB_SYNC_COARSE = 1,
    SB_SYNC_FINE = 2,
    SB_SYNC_ATOMIC = 3,
    SB_SYNC_REDUCTION = 4,
    SB_SYNC_CRITICAL = 5,
    SB_SYNC_COUNT = 6
};

/* --inner: scalar = the bit-exact reference loop; simd = sb_simd.h, bit-identical to it. */
enum sb_inner { SB_INNER_SCALAR = 0, SB_INNER_SIMD = 1 };

/* --preset: which named Mandelbrot region was chosen; CUSTOM when --region was given. */
enum sb_preset { SB_PRESET_CUSTOM = 0, SB_PRESET_SYMMETRIC = 1, SB_PRESET_ASYMMETRIC = 2 };

/* Bit for a schedule or sync value in the descriptor masks below. */
#define SB_BIT(value) (1u << (value))

/*
 * All parsed parameters, C-interoperable (Fortran: bind(C) type with the same fields in this order:
 * 3 x integer(c_int64_t), real(c_double) region(4), 11 x integer(c_int32_t)).
 * Fields that do not apply to a kernel keep their defaults.
 */
typedef struct sb_params {
    int64_t samples;  /* π: --samples N (default 10000000) */
    int64_t seed;     /* π: --seed S, the uint64 bit pattern (default 0) */
    int64_t batch;    /* π: --batch B samples per synchronised update (default 4096) */
    double region[4]; /* Mandelbrot: x0, x1, y0, y1 (default preset symmetric) */
    int32_t kernel;   /* enum sb_kernel_kind */
    int32_t threads;  /* --threads N (default 1), threads per process/rank */
    int32_t reps;     /* --reps K measured repetitions (default 1) */
    int32_t warmup;   /* --warmup W warm-up repetitions (default 0) */
    int32_t schedule; /* enum sb_schedule */
    int32_t chunk;    /* schedule chunk; 0 = not given (model default) */
    int32_t sync;     /* enum sb_sync */
    int32_t inner;    /* enum sb_inner */
    int32_t width;    /* Mandelbrot: --width (default 1024) */
    int32_t height;   /* Mandelbrot: --height (default 1024) */
    int32_t max_iter; /* Mandelbrot: --max-iter (default 1000) */
    int32_t preset;   /* Mandelbrot: enum sb_preset */
} sb_params;

/*
 * What one kernel binary is; each kernel object defines `const sb_kernel_desc sb_kernel`.
 * sync_by_schedule[s] is the mask (SB_BIT(sync)) of syncs allowed with schedule s; 0 = schedule s
 * not supported. The parser rejects anything outside it with exit 2.
 */
typedef struct sb_kernel_desc {
    const char *kernel;       /* "mandelbrot" | "mcpi" */
    const char *lang;         /* "c" | "f" */
    const char *model;        /* "serial" | "omp" | "pthreads" | "mpi" ... */
    int32_t kind;             /* enum sb_kernel_kind */
    int32_t max_threads;      /* 1 for serial, else 4096 */
    int32_t default_schedule; /* enum sb_schedule */
    int32_t default_sync;     /* enum sb_sync */
    uint32_t sync_by_schedule[SB_SCHED_COUNT];
    uint32_t chunk_schedules;             /* mask of schedules that accept ",chunk" */
    const char *help;                     /* model-specific --help paragraph (schedules, syncs) */
    int (*init)(int *argc, char ***argv); /* optional: after successful option parsing */
    void (*finalize)(void);               /* optional: before a normal exit */
    int (*run)(sb_ctx *ctx);              /* one repetition; 0 = success */
    int32_t inner_simd;  /* 1 = accepts --inner simd (its loops call sb_simd.h); 0 = scalar only */
    int32_t wait_policy; /* 1 = accepts --wait-policy (its workers wait through sb_wait.h) */
} sb_kernel_desc;

extern const sb_kernel_desc sb_kernel;

/* Parameters of this invocation (valid for the whole run; never modify). */
const sb_params *sb_params_get(const sb_ctx *ctx);

/* Ends the setup phase (setup_s), records os_threads from /proc/self/task, starts wall_s and the
 * getrusage delta. Call from exactly one thread once all workers exist and have met at a barrier.
 */
void sb_compute_begin(sb_ctx *ctx);

/* Stops wall_s and the getrusage delta. Call from one thread after all workers finished (barrier).
 */
void sb_compute_end(sb_ctx *ctx);

/* In worker `worker` (0..threads-1) at the start of its work: placement start CPU (sched_getcpu),
 * likwid marker start "compute" in this thread. */
void sb_worker_begin(sb_ctx *ctx, int32_t worker);

/* In worker `worker` at the end of its work: placement end CPU, likwid marker stop "compute". */
void sb_worker_end(sb_ctx *ctx, int32_t worker);

/* ---- Per-worker measurements (added) -------------------------------------------------------
 * Always on and aggregated per worker: sb_worker_begin/end read the monotonic clock and the
 * thread's CPU time once each; a worker's useful time = (end - begin) - its waiting, where
 * waiting is what the kernel reports with sb_worker_add_wait (only where a wait happened: a lock
 * taken at the first try costs no clock read). The record carries, over the workers, the mean and
 * the maximum of useful time and of work, the mean waiting and the mean thread CPU time
 * (worker_* fields, docs/pop-metrics.md); MPI kernels: over every rank's workers, reduced onto
 * rank 0 by sb_mpi_report (kernels/common/sb_mpi.h). */

/* Adds `units` of work (Mandelbrot: iterations, i.e. the sum of the pixel counts computed; π:
 * samples) to worker `worker` in this repetition. Call once per worker or per unit of work. */
void sb_worker_add_work(sb_ctx *ctx, int32_t worker, int64_t units);

/* Adds `seconds` of waiting (a contended lock, a work-queue fetch that blocked) to worker
 * `worker`; subtracted from its useful time. */
void sb_worker_add_wait(sb_ctx *ctx, int32_t worker, double seconds);

/* In worker `worker`, outside the timed region: before the clock starts (after = 0) and after it
 * stopped (after = 1), measures the core clock of the CPU this worker runs on (sb_clock.h, about
 * 0.5 ms), so that the record carries every worker's clock (worker_clock_ghz_mean/_min), not only
 * the first thread's. The timed-region skeletons call it (sb_omp.h, sb_omp_f.f90,
 * sb_timed_queue_share); skipped when the process has more workers than online CPUs (they would
 * measure one another's time slices, at 1 ms per worker and repetition). */
void sb_worker_clock(sb_ctx *ctx, int32_t worker, int32_t after);

/* Mandelbrot result image: width*height uint32 counts, row-major from pixel (0,0), zeroed before
 * each repetition. NULL for π. Fortran: integer(c_int32_t) (counts never exceed 2^31-1). */
uint32_t *sb_image(sb_ctx *ctx);

/* π result: the total hit count of this repetition (on MPI: the global count, on rank 0). */
void sb_set_hits(sb_ctx *ctx, int64_t hits);

/* Runtime failure (e.g. pthread_create failed): prints "<binary>: <message>" on stderr, exit 1. */
void sb_fail(sb_ctx *ctx, const char *message);

/* After an OpenMP parallel region, with the team size one thread read from omp_get_num_threads():
 * sb_fail ("OpenMP gave <team> threads instead of <threads> (OMP_THREAD_LIMIT?)") unless the
 * runtime gave exactly --threads threads, so a capped team never passes for the requested one. */
void sb_check_team(sb_ctx *ctx, int32_t team);

/* ---- MPI support (defaults: rank 0 of 1) ---------------------------------------------------- */

/* Tells the harness this process's rank; only rank 0 prints records and writes --dump. The record
 * field `ranks` = nranks. */
void sb_set_rank(sb_ctx *ctx, int32_t rank, int32_t nranks);

/* This rank's compute time of the last repetition (after sb_compute_end), to gather on rank 0. */
double sb_wall(const sb_ctx *ctx);

/* Copies this process's placement of the last repetition as `threads` pairs
 * [cpu_at_start, cpu_at_end] into pairs[0 .. 2*threads-1]; returns the number of workers written
 * (at most max_workers). */
int32_t sb_get_placement(const sb_ctx *ctx, int32_t *pairs, int32_t max_workers);

/* Replaces the record's placement with nworkers pairs (rank-major: rank 0's threads first). */
void sb_set_placement(sb_ctx *ctx, const int32_t *pairs, int32_t nworkers);

/* Per-rank compute times, emitted as "rank_wall_s" (only present when set). */
void sb_set_rank_times(sb_ctx *ctx, const double *t, int32_t n);

/* Overrides the record's wall_s (MPI: the slowest rank's compute time). */
void sb_set_wall(sb_ctx *ctx, double wall_s);

/* Note: placement, rank times and the wall_s override are per repetition: the harness resets them
 * before each run(); the rank set by sb_set_rank persists. */

/* ---- Microbenchmark kernels (added; kernels/common/sb_micro.c) ------------------------------ */

/* Kind of the microbenchmark kernels (OS overhead, timing precision, SMT): their options are their
 * own (sb_micro below), and their record's result is a per-operation distribution. */
enum sb_kernel_kind_micro { SB_KERNEL_MICRO = 3 };

#define SB_MICRO_MAX_OPTIONS 16

/* One kernel-specific option "--name VALUE"; the value is kept as text for the kernel to read. */
typedef struct sb_micro_option {
    const char *name;          /* without "--" */
    const char *default_value; /* text used when the option is not given */
    const char *help;          /* one line for --help */
} sb_micro_option;

/* What a SB_KERNEL_MICRO kernel adds to its sb_kernel_desc: defined by the kernel object as
 * `const sb_micro_desc sb_micro`. check() sees every value (in `options` order) after parsing and
 * returns 0, or -1 with one line "--name: 'value' ..." in err (the harness then exits 2). */
typedef struct sb_micro_desc {
    const sb_micro_option *options;
    int32_t noptions;
    int (*check)(const char *const *values, char *err, int32_t errlen);
} sb_micro_desc;

/* The value of option `name` (given or default); NULL for a name the kernel does not declare. */
const char *sb_micro_value(const sb_ctx *ctx, const char *name);

/* The repetition's per-operation times in seconds, one per timed sample of ops_per_sample
 * operations (nsamples >= 1; the harness copies and sorts them): the record's result gets op,
 * samples, ops (= nsamples * ops_per_sample, also the record's `work`) and min_s, median_s,
 * mean_s, p99_s, max_s over the samples. */
void sb_set_op_times(sb_ctx *ctx, const char *op, const double *seconds, int64_t nsamples,
                     int64_t ops_per_sample);

/* An extra number in the record's result (e.g. "switches_per_op"); up to 16 per repetition. */
void sb_set_result_number(sb_ctx *ctx, const char *key, double value);

/* What the repetition computed, hashed into the record's checksum (default: the op count). */
void sb_set_checksum_value(sb_ctx *ctx, uint64_t value);

#ifdef __cplusplus
}
#endif

#endif /* SB_HARNESS_H */
