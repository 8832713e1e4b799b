/* SMT microkernels: N independent workers, each doing the same fixed work, so that one worker
 * alone, two on SMT siblings and two on separate cores can be compared (the thesis's int_mem,
 * dbl_mem, a mixed integer/double chain, Monte-Carlo pi, and a PAUSE-spinning idle sibling).
 * --variant is a comma list dealt to the workers in turn ("mcpi,pause": worker 0 computes,
 * worker 1 spins until every computing worker is done). The record's result is the distribution
 * of the computing workers' times; the checksum covers what they computed (timing-free). */
#define _GNU_SOURCE
#include "harness.h"
#include "sb_descriptors.h"
#include "sb_micro_util.h"
#include "sb_rng.h"

#include <immintrin.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/resource.h>
#include <unistd.h>

enum variant { V_INT_MEM, V_DBL_MEM, V_INT_DBL, V_MCPI, V_PAUSE, V_COUNT };
static const char *const variant_names[] = {"int_mem", "dbl_mem", "int_dbl", "mcpi", "pause", NULL};
#define MAX_LIST 64

static const sb_micro_option options[] = {
    {"variant", "int_mem", "comma list of int_mem|dbl_mem|int_dbl|mcpi|pause, dealt to workers"},
    {"repeat", "1000000", "outer iterations per computing worker, 1..10^10"},
    {"load", "32", "int_mem/dbl_mem: inner passes over one 32-byte row, 1..10^6"},
    {"buffer-kib", "32768", "int_mem/dbl_mem: buffer per worker in KiB, 1..4194304"},
    {"cpus", "", "pin worker i to the i-th CPU of this comma list (empty: leave placement)"},
    {"nices", "", "nice value of worker i from this comma list, 0..19 (empty: all 0)"},
};

/* Parses a comma list of names or integers into out[]; returns the count or -1. */
static int parse_list(const char *name, const char *text, int names_mode, int *out, char *err,
                      int32_t errlen) {
    if (!text[0])
        return 0;
    char buf[512];
    snprintf(buf, sizeof buf, "%s", text);
    int n = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        if (n >= MAX_LIST) {
            snprintf(err, (size_t)errlen, "--%s: '%s' has more than %d entries", name, text,
                     MAX_LIST);
            return -1;
        }
        int64_t v;
        if (names_mode) {
            char sub[256];
            if ((v = sbm_parse_choice(name, tok, variant_names, sub, sizeof sub)) < 0) {
                snprintf(err, (size_t)errlen, "--%s: '%s' has '%s', not one of %s", name, text, tok,
                         "int_mem|dbl_mem|int_dbl|mcpi|pause");
                return -1;
            }
        } else if (sbm_parse_i64(name, tok, 0, CPU_SETSIZE - 1, &v, err, errlen)) {
            snprintf(err, (size_t)errlen, "--%s: '%s' is not a comma list of CPU numbers", name,
                     text);
            return -1;
        }
        out[n++] = (int)v;
    }
    return n;
}

static int check(const char *const *v, char *err, int32_t errlen) {
    int list[MAX_LIST];
    int64_t x;
    int n = parse_list("variant", v[0], 1, list, err, errlen);
    if (n < 0)
        return -1;
    if (n == 0) {
        snprintf(err, (size_t)errlen, "--variant: '' names no variant");
        return -1;
    }
    int computing = 0;
    for (int i = 0; i < n; i++)
        computing += list[i] != V_PAUSE;
    if (!computing) {
        snprintf(err, (size_t)errlen, "--variant: '%s' has no computing worker (only pause)", v[0]);
        return -1;
    }
    if (sbm_parse_i64("repeat", v[1], 1, INT64_C(10000000000), &x, err, errlen) ||
        sbm_parse_i64("load", v[2], 1, 1000000, &x, err, errlen) ||
        sbm_parse_i64("buffer-kib", v[3], 1, 4194304, &x, err, errlen))
        return -1;
    if (parse_list("cpus", v[4], 0, list, err, errlen) < 0)
        return -1;
    int nn = parse_list("nices", v[5], 0, list, err, errlen);
    for (int i = 0; i < nn; i++)
        if (list[i] > 19) {
            snprintf(err, (size_t)errlen, "--nices: '%s' has %d, not in 0..19", v[5], list[i]);
            return -1;
        }
    return nn < 0 ? -1 : 0;
}

const sb_micro_desc sb_micro = {options, sizeof options / sizeof options[0], check};

struct shared {
    sb_ctx *ctx;
    int nworkers, computing;
    int variants[MAX_LIST], cpus[MAX_LIST], ncpus, nices[MAX_LIST], nnices;
    int64_t repeat, load, buffer_bytes;
    pthread_barrier_t start, done;
    atomic_int remaining;
    double *times;
    uint64_t *results;
};

struct worker {
    struct shared *sh;
    int id;
};

/* One row of 32 bytes, as in the thesis: 8 int32 or 4 double. */
typedef struct {
    int32_t v[8];
} int_row;
typedef struct {
    double v[4];
} dbl_row;

static size_t rows_of(const struct shared *sh) {
    size_t rows = (size_t)sh->buffer_bytes / 32;
    return rows ? rows : 1;
}

static void work_int_mem(const struct shared *sh, int id, int_row *buf) {
    size_t rows = rows_of(sh);
    const int32_t input = 3;
    for (int64_t r = 0; r < sh->repeat; r++) {
        int_row *volatile row = &buf[sb_splitmix64_at((uint64_t)id, (uint64_t)r) % rows];
        for (int64_t l = 0; l < sh->load; l++) {
            for (int k = 0; k < 8; k++)
                row->v[k] += input;
            __asm__ volatile("" ::: "memory"); /* keep every pass: no folding of the load loop */
        }
    }
}

static void work_dbl_mem(const struct shared *sh, int id, dbl_row *buf) {
    size_t rows = rows_of(sh);
    const double input = 0.5;
    for (int64_t r = 0; r < sh->repeat; r++) {
        dbl_row *volatile row = &buf[sb_splitmix64_at((uint64_t)id, (uint64_t)r) % rows];
        for (int64_t l = 0; l < sh->load; l++) {
            for (int k = 0; k < 4; k++)
                row->v[k] += input;
            __asm__ volatile("" ::: "memory");
        }
    }
}

/* What a memory worker computed: exact for both (int wraps mod 2^32; 0.5-steps stay < 2^53). */
static uint64_t buffer_sum(const struct shared *sh, int v, const void *buf) {
    uint64_t sum = 0;
    double dsum = 0.0;
    for (size_t i = 0; i < rows_of(sh); i++)
        for (int k = 0; k < 8; k++) {
            if (v == V_INT_MEM)
                sum += (uint32_t)((const int_row *)buf)[i].v[k];
            else if (k < 4)
                dsum += ((const dbl_row *)buf)[i].v[k];
        }
    return v == V_INT_MEM ? sum : (uint64_t)(2.0 * dsum);
}

/* Integer and FP dependency chains interleaved: both kinds of port busy in one thread. */
static uint64_t work_int_dbl(const struct shared *sh, int id) {
    uint64_t a = (uint64_t)id + 1;
    double x = 1.0;
    for (int64_t r = 0; r < sh->repeat; r++) {
        a = a * UINT64_C(6364136223846793005) + UINT64_C(1442695040888963407);
        x = x * 0.999999 + 1e-6 * (double)(a >> 60);
    }
    return a ^ (uint64_t)(x * 1e6);
}

static uint64_t work_mcpi(const struct shared *sh, int id) {
    uint64_t hits = 0;
    for (int64_t r = 0; r < sh->repeat; r++)
        hits += (uint64_t)sb_pi_is_hit((uint64_t)id, (uint64_t)r);
    return hits;
}

static void spin_pause(struct shared *sh) {
    /* unrolled, as in the thesis's idle thread, so the loop overhead stays small */
    while (atomic_load_explicit(&sh->remaining, memory_order_relaxed) > 0) {
        _mm_pause(), _mm_pause(), _mm_pause(), _mm_pause(), _mm_pause(), _mm_pause();
        _mm_pause(), _mm_pause(), _mm_pause(), _mm_pause(), _mm_pause();
    }
}

static void *worker_main(void *arg) {
    struct worker *w = arg;
    struct shared *sh = w->sh;
    if (sh->ncpus)
        sbm_pin_self(sh->cpus[w->id % sh->ncpus]);
    /* per-thread nice (Linux: setpriority on the thread id); lowering priority needs no privilege
     */
    if (sh->nnices && setpriority(PRIO_PROCESS, (id_t)gettid(), sh->nices[w->id % sh->nnices]) != 0)
        sb_fail(sh->ctx, "setpriority failed for --nices");
    int v = sh->variants[w->id];
    /* the private buffer is allocated and touched by its worker before the clock starts */
    void *buf = v == V_INT_MEM || v == V_DBL_MEM ? calloc(rows_of(sh), 32) : NULL;
    if (buf)
        memset(buf, 0, rows_of(sh) * 32);
    pthread_barrier_wait(&sh->start);
    if (w->id == 0)
        sb_compute_begin(sh->ctx);
    pthread_barrier_wait(&sh->start);
    sb_worker_begin(sh->ctx, w->id);
    double t0 = sbm_now();
    uint64_t res = 0;
    switch (v) {
    case V_INT_MEM:
        if (buf)
            work_int_mem(sh, w->id, buf);
        break;
    case V_DBL_MEM:
        if (buf)
            work_dbl_mem(sh, w->id, buf);
        break;
    case V_INT_DBL:
        res = work_int_dbl(sh, w->id);
        break;
    case V_MCPI:
        res = work_mcpi(sh, w->id);
        break;
    default:
        spin_pause(sh);
        break;
    }
    sh->times[w->id] = sbm_now() - t0;
    if (v != V_PAUSE)
        atomic_fetch_sub(&sh->remaining, 1);
    sh->results[w->id] = buf ? buffer_sum(sh, v, buf) : res;
    free(buf);
    sb_worker_end(sh->ctx, w->id);
    pthread_barrier_wait(&sh->done);
    return NULL;
}

static int run(sb_ctx *ctx) {
    const sb_params *p = sb_params_get(ctx);
    static struct shared sh;
    char err[256];
    int list[MAX_LIST];
    memset(&sh, 0, sizeof sh);
    sh.ctx = ctx;
    sh.nworkers = p->threads;
    int nv = parse_list("variant", sb_micro_value(ctx, "variant"), 1, list, err, sizeof err);
    for (int i = 0; i < sh.nworkers && i < MAX_LIST; i++)
        sh.variants[i] = list[i % nv];
    if (sh.nworkers > MAX_LIST)
        sb_fail(ctx, "at most 64 workers");
    sh.ncpus = parse_list("cpus", sb_micro_value(ctx, "cpus"), 0, sh.cpus, err, sizeof err);
    sh.nnices = parse_list("nices", sb_micro_value(ctx, "nices"), 0, sh.nices, err, sizeof err);
    sh.repeat = strtoll(sb_micro_value(ctx, "repeat"), NULL, 10);
    sh.load = strtoll(sb_micro_value(ctx, "load"), NULL, 10);
    sh.buffer_bytes = 1024 * strtoll(sb_micro_value(ctx, "buffer-kib"), NULL, 10);
    for (int i = 0; i < sh.nworkers; i++)
        sh.computing += sh.variants[i] != V_PAUSE;
    if (!sh.computing)
        sb_fail(ctx, "every worker would spin: no computing worker among --threads");
    atomic_store(&sh.remaining, sh.computing);
    double times[MAX_LIST];
    uint64_t results[MAX_LIST];
    sh.times = times;
    sh.results = results;
    pthread_barrier_init(&sh.start, NULL, (unsigned)sh.nworkers);
    pthread_barrier_init(&sh.done, NULL, (unsigned)sh.nworkers);
    pthread_t th[MAX_LIST];
    struct worker ws[MAX_LIST];
    for (int i = 1; i < sh.nworkers; i++) {
        ws[i] = (struct worker){&sh, i};
        if (pthread_create(&th[i], NULL, worker_main, &ws[i]) != 0)
            sb_fail(ctx, "pthread_create failed");
    }
    ws[0] = (struct worker){&sh, 0};
    cpu_set_t started_on = sbm_get_affinity();
    worker_main(&ws[0]);
    sbm_set_affinity(&started_on);
    setpriority(PRIO_PROCESS, (id_t)gettid(), 0); /* worker 0 is this thread: undo its --nices */
    sb_compute_end(ctx);
    for (int i = 1; i < sh.nworkers; i++)
        pthread_join(th[i], NULL);
    pthread_barrier_destroy(&sh.start);
    pthread_barrier_destroy(&sh.done);
    double busy[MAX_LIST];
    int nb = 0;
    uint64_t sum = 0;
    for (int i = 0; i < sh.nworkers; i++)
        if (sh.variants[i] != V_PAUSE) {
            busy[nb++] = times[i];
            sum += results[i] * (uint64_t)(2 * i + 1);
            if ((sh.variants[i] == V_INT_MEM || sh.variants[i] == V_DBL_MEM) && results[i] == 0)
                sb_fail(ctx, "out of memory for a worker's buffer");
        }
    sb_set_op_times(ctx, "worker", busy, nb, 1);
    sb_set_result_number(ctx, "computing_workers", nb);
    sb_set_result_number(ctx, "worker0_s",
                         times[0]); /* the priority experiment's favoured worker */
    sb_set_result_number(ctx, "pause_workers", sh.nworkers - nb);
    sb_set_result_number(ctx, "throughput_per_s", (double)nb * (double)sh.repeat / sb_wall(ctx));
    if (sh.variants[0] == V_MCPI)
        sb_set_result_number(ctx, "pi_worker0", 4.0 * (double)results[0] / (double)sh.repeat);
    sb_set_checksum_value(ctx, sum);
    return 0;
}

const sb_kernel_desc sb_kernel = {
    .kernel = "smt",
    .lang = "c",
    .model = "pthreads",
    .kind = SB_KERNEL_MICRO,
    .max_threads = MAX_LIST,
    .default_schedule = SB_SCHED_NONE,
    .default_sync = SB_SYNC_NONE,
    .sync_by_schedule = {[SB_SCHED_NONE] = SB_BIT(SB_SYNC_NONE)},
    .help = "Independent workers with the same fixed work each (no sharing): int_mem / dbl_mem\n"
            "add to one random 32-byte row of a private buffer --load times per --repeat\n"
            "iteration; int_dbl interleaves an integer and a double dependency chain; mcpi is\n"
            "Monte-Carlo pi; pause spins on PAUSE until the computing workers are done.\n"
            "result: min/median/mean/p99/max of the computing workers' times; SMT gain =\n"
            "2*t(alone)/t(pair on siblings) - 1 across runs.",
    .run = run,
};
