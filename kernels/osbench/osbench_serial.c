/* OS-overhead microbenchmarks: what the OS charges for a thread, a process, a context switch, an
 * allocation and a timer read. Every timed sample covers --batch operations; the record's result is
 * the distribution of the per-operation time over the --ops / --batch samples. */
#define _GNU_SOURCE
#include "harness.h"
#include "sb_descriptors.h"
#include "sb_micro_util.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

enum op {
    OP_THREAD_CREATE,
    OP_FORK,
    OP_FORK_EXEC,
    OP_CTXSW_THREAD,
    OP_CTXSW_PROCESS,
    OP_MALLOC,
    OP_TIMER,
    OP_THREAD_LIMIT
};
static const char *const op_names[] = {"thread-create", "fork",          "fork-exec",
                                       "ctxsw-thread",  "ctxsw-process", "malloc",
                                       "timer",         "thread-limit",  NULL};
static const char *const cpus_names[] = {"same", "split", NULL};
static const char *const touch_names[] = {"no", "yes", NULL};
static const char *const policy_names[] = {"other", "fifo", "rr", NULL};
static const int policy_codes[] = {SCHED_OTHER, SCHED_FIFO, SCHED_RR};
static const char *const mode_names[] = {"pipe", "yield", NULL};

static const sb_micro_option options[] = {
    {"op", "timer",
     "thread-create|fork|fork-exec|ctxsw-thread|ctxsw-process|malloc|timer|thread-limit"},
    {"ops", "10000",
     "operations per repetition, 1..10^8 (thread-limit: the most threads to create)"},
    {"batch", "1", "operations per timed sample, 1..10^6; must divide --ops"},
    {"bytes", "1024", "malloc: bytes per allocation, 1..2^30"},
    {"touch", "no", "malloc: write one byte per page before free (no|yes)"},
    {"cpus", "same", "ctxsw: both parties on this CPU (same) or on two CPUs (split)"},
    {"policy", "other", "ctxsw: scheduling policy of both parties, other|fifo|rr (priority 50)"},
    {"mode", "pipe",
     "ctxsw: hand-off by a pipe token (pipe) or by sched_yield (yield: --cpus same, --policy "
     "fifo|rr)"},
};

static int check(const char *const *v, char *err, int32_t errlen) {
    int64_t ops, batch, bytes;
    if (sbm_parse_choice("op", v[0], op_names, err, errlen) < 0 ||
        sbm_parse_i64("ops", v[1], 1, 100000000, &ops, err, errlen) ||
        sbm_parse_i64("batch", v[2], 1, 1000000, &batch, err, errlen) ||
        sbm_parse_i64("bytes", v[3], 1, INT64_C(1) << 30, &bytes, err, errlen) ||
        sbm_parse_choice("touch", v[4], touch_names, err, errlen) < 0 ||
        sbm_parse_choice("cpus", v[5], cpus_names, err, errlen) < 0 ||
        sbm_parse_choice("policy", v[6], policy_names, err, errlen) < 0 ||
        sbm_parse_choice("mode", v[7], mode_names, err, errlen) < 0)
        return -1;
    if (strcmp(v[7], "yield") == 0 && (strcmp(v[5], "same") != 0 || strcmp(v[6], "other") == 0)) {
        snprintf(
            err, (size_t)errlen,
            "--mode yield: needs --cpus same and --policy fifo|rr (under SCHED_OTHER, or on two "
            "CPUs, sched_yield does not hand the CPU to the other party), got --cpus %s --policy "
            "%s",
            v[5], v[6]);
        return -1;
    }
    if (ops % batch != 0) {
        snprintf(err, (size_t)errlen, "--batch: '%s' does not divide --ops %s", v[2], v[1]);
        return -1;
    }
    return 0;
}

const sb_micro_desc sb_micro = {options, sizeof options / sizeof options[0], check};

static int64_t value_i64(sb_ctx *ctx, const char *name) {
    return strtoll(sb_micro_value(ctx, name), NULL, 10);
}

static int choice(sb_ctx *ctx, const char *name, const char *const *names) {
    char err[256];
    return sbm_parse_choice(name, sb_micro_value(ctx, name), names, err, sizeof err);
}

static void *empty_thread(void *arg) {
    return arg;
}

/* ---- ping-pong: the partner answers every token n with n + 1 --------------------------------- */

struct pingpong {
    int to_partner[2], to_main[2];
    int64_t rounds;
    int cpu; /* partner's CPU */
    int policy;
    int64_t errors;
};

/* Sets the calling thread's policy (Linux: pid 0 = this thread only); 0 on success. */
static int set_policy(int policy) {
    struct sched_param sp = {.sched_priority = policy == SCHED_OTHER ? 0 : 50};
    return sched_setscheduler(0, policy, &sp);
}

static void partner_loop(struct pingpong *pp) {
    if (pp->cpu >= 0)
        sbm_pin_self(pp->cpu);
    if (set_policy(pp->policy) != 0) {
        pp->errors++;
        return;
    }
    for (int64_t i = 0; i < pp->rounds; i++) {
        int64_t token;
        if (read(pp->to_partner[0], &token, sizeof token) != (ssize_t)sizeof token) {
            pp->errors++;
            return;
        }
        token++;
        if (write(pp->to_main[1], &token, sizeof token) != (ssize_t)sizeof token) {
            pp->errors++;
            return;
        }
    }
}

/* The partner as a thread: non-NULL when it failed. */
static void *partner_thread(void *arg) {
    partner_loop(arg);
    return ((struct pingpong *)arg)->errors ? arg : NULL;
}

/* Starts a switch benchmark's partner: a child process (exit status 1 when it failed) or a thread.
 */
static void start_partner(sb_ctx *ctx, int process, void *(*partner)(void *), void *arg,
                          pid_t *child, pthread_t *th) {
    *child = -1;
    memset(th, 0, sizeof *th); /* (unused when the partner is a process) */
    if (process) {
        *child = fork();
        if (*child < 0)
            sb_fail(ctx, "fork failed");
        if (*child == 0)
            _exit(partner(arg) ? 1 : 0);
    } else if (pthread_create(th, NULL, partner, arg) != 0) {
        sb_fail(ctx, "pthread_create failed");
    }
}

/* After the timed loop of a switch benchmark: back to SCHED_OTHER, the partner finished and
 * checked. */
static void end_partner(sb_ctx *ctx, int process, pid_t child, pthread_t th, int64_t errors,
                        const char *what) {
    set_policy(SCHED_OTHER);
    char msg[96];
    if (process) {
        int status = 0;
        waitpid(child, &status, 0);
        snprintf(msg, sizeof msg, "%s partner process failed", what);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
            sb_fail(ctx, msg);
    } else {
        pthread_join(th, NULL);
        snprintf(msg, sizeof msg, "%s partner thread failed", what);
        if (errors)
            sb_fail(ctx, msg);
    }
}

/* The result of a switch benchmark: per-switch times and, on one CPU, how often the measuring party
 * left the CPU per round trip (it blocks, or is preempted by the woken partner). */
static void set_switch_results(sb_ctx *ctx, const double *t, int64_t ops, int64_t batch,
                               const struct rusage *r0, const struct rusage *r1, int partner_cpu) {
    sb_set_op_times(ctx, "switch", t, ops / batch, 2 * batch);
    sb_set_result_number(ctx, "round_trips", (double)ops);
    sb_set_result_number(ctx, "main_switches_per_round_trip",
                         (double)(r1->ru_nvcsw - r0->ru_nvcsw + r1->ru_nivcsw - r0->ru_nivcsw) /
                             (double)ops);
    sb_set_result_number(ctx, "partner_cpu", partner_cpu);
}

/* One sample = `batch` round trips; a round trip is two switches (main -> partner -> main) when
 * both share a CPU, which is what perf bench sched pipe counts as one operation too. */
static void run_pingpong(sb_ctx *ctx, int process, int64_t ops, int64_t batch, double *t) {
    struct pingpong pp = {.rounds = ops};
    if (pipe(pp.to_partner) || pipe(pp.to_main))
        sb_fail(ctx, "pipe failed");
    int here = sched_getcpu();
    int split = choice(ctx, "cpus", cpus_names) == 1;
    if (split) {
        int a = sbm_allowed_cpu(0), b = sbm_allowed_cpu(1);
        if (b < 0)
            sb_fail(ctx, "--cpus split needs two allowed CPUs");
        here = a;
        pp.cpu = b;
    } else {
        pp.cpu = here;
    }
    sbm_pin_self(here);
    pp.policy = policy_codes[choice(ctx, "policy", policy_names)];
    if (set_policy(pp.policy) != 0)
        sb_fail(ctx, "--policy: permission denied (SCHED_FIFO/RR need root or CAP_SYS_NICE)");
    pthread_t th;
    pid_t child;
    start_partner(ctx, process, partner_thread, &pp, &child, &th);
    struct rusage r0, r1;
    getrusage(RUSAGE_THREAD, &r0);
    sb_compute_begin(ctx);
    sb_worker_begin(ctx, 0);
    int64_t token = 0, out_of_order = 0;
    for (int64_t s = 0; s < ops / batch; s++) {
        double t0 = sbm_now();
        for (int64_t i = 0; i < batch; i++) {
            int64_t sent = token;
            if (write(pp.to_partner[1], &token, sizeof token) != (ssize_t)sizeof token ||
                read(pp.to_main[0], &token, sizeof token) != (ssize_t)sizeof token)
                sb_fail(ctx, "ping-pong pipe broke");
            out_of_order += token != sent + 1;
        }
        t[s] = (sbm_now() - t0) / (double)(2 * batch);
    }
    sb_worker_end(ctx, 0);
    sb_compute_end(ctx);
    getrusage(RUSAGE_THREAD, &r1);
    end_partner(ctx, process, child, th, pp.errors, "ping-pong");
    close(pp.to_partner[0]);
    close(pp.to_partner[1]);
    close(pp.to_main[0]);
    close(pp.to_main[1]);
    if (out_of_order)
        sb_fail(ctx, "ping-pong answers out of order: the parties did not alternate");
    set_switch_results(ctx, t, ops, batch, &r0, &r1, pp.cpu);
    sb_set_checksum_value(ctx, (uint64_t)token);
}

/* ---- yield hand-off: both parties real-time on one CPU, each sched_yield() hands over the CPU
 * ---- */

struct yielder {
    _Atomic int64_t turn; /* odd: the partner's turn; even: main's */
    int64_t rounds;
    int cpu, policy, go[2];
    _Atomic int64_t errors;
    _Atomic int ready; /* the partner is pinned and real-time */
};

/* The partner: once released (a blocking read, so that main can become real-time first), it takes
 * every odd turn, makes it even and yields; while it is not its turn it yields too. */
static void yield_partner(struct yielder *y) {
    sbm_pin_self(y->cpu);
    char go;
    if (set_policy(y->policy) != 0) {
        y->errors++;
        atomic_store(&y->ready, 1);
        return;
    }
    atomic_store(&y->ready, 1);
    if (read(y->go[0], &go, 1) != 1) {
        y->errors++;
        return;
    }
    for (int64_t i = 0; i < y->rounds; i++) {
        while ((atomic_load(&y->turn) & 1) == 0)
            sched_yield();
        atomic_fetch_add(&y->turn, 1);
        sched_yield();
    }
}

static void *yield_partner_thread(void *arg) {
    yield_partner(arg);
    return ((struct yielder *)arg)->errors ? arg : NULL;
}

/* One round = main's yield and the partner's: two switches. Main makes the turn odd and yields;
 * when sched_yield returns the partner must have run (the turn is even again), else they did not
 * alternate. */
static void run_yield(sb_ctx *ctx, int process, int64_t ops, int64_t batch, double *t) {
    struct yielder *y =
        mmap(NULL, sizeof *y, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (y == MAP_FAILED || pipe(y->go))
        sb_fail(ctx, "mmap or pipe failed");
    atomic_store(&y->turn, 0);
    y->rounds = ops;
    y->cpu = sched_getcpu();
    y->policy = policy_codes[choice(ctx, "policy", policy_names)];
    sbm_pin_self(y->cpu);
    pthread_t th;
    pid_t child;
    start_partner(ctx, process, yield_partner_thread, y, &child, &th);
    while (!atomic_load(&y->ready)) /* main stays SCHED_OTHER until then, so the partner can run */
        usleep(50);
    if (y->errors || set_policy(y->policy) != 0)
        sb_fail(ctx, "--policy: permission denied (SCHED_FIFO/RR need root or CAP_SYS_NICE)");
    if (write(y->go[1], "g", 1) != 1)
        sb_fail(ctx, "yield: could not release the partner");
    struct rusage r0, r1;
    getrusage(RUSAGE_THREAD, &r0);
    sb_compute_begin(ctx);
    sb_worker_begin(ctx, 0);
    int64_t missed = 0;
    for (int64_t s = 0; s < ops / batch; s++) {
        double t0 = sbm_now();
        for (int64_t i = 0; i < batch; i++) {
            atomic_fetch_add(&y->turn, 1);
            sched_yield();
            while (atomic_load(&y->turn) & 1) { /* the partner has not run: yield until it has */
                missed++;
                sched_yield();
            }
        }
        t[s] = (sbm_now() - t0) / (double)(2 * batch);
    }
    sb_worker_end(ctx, 0);
    sb_compute_end(ctx);
    getrusage(RUSAGE_THREAD, &r1);
    end_partner(ctx, process, child, th, y->errors, "yield");
    close(y->go[0]);
    close(y->go[1]);
    set_switch_results(ctx, t, ops, batch, &r0, &r1, y->cpu);
    /* yields that found the partner had not run: 0 when every yield handed over the CPU */
    sb_set_result_number(ctx, "yields_without_switch", (double)missed);
    sb_set_checksum_value(ctx, (uint64_t)ops);
    munmap(y, sizeof *y);
}

/* ---- thread-limit: create threads that all stay alive until the cap or the first refusal ---- */

static void *blocked_thread(void *arg) {
    char c;
    while (read(*(int *)arg, &c, 1) > 0) { /* returns 0 when the write end is closed */
    }
    return NULL;
}

static double read_number(const char *path) {
    FILE *f = fopen(path, "r");
    double v = NAN;
    if (f) {
        if (fscanf(f, "%lf", &v) != 1)
            v = NAN;
        fclose(f);
    }
    return v;
}

/* Threads with the smallest stack, each blocked in read() on one pipe, until --ops threads live or
 * pthread_create refuses; then the pipe is closed and all are joined. The cap keeps a shared
 * machine usable (the limits of the whole system are shared with every other user). */
static void run_thread_limit(sb_ctx *ctx, int64_t cap, double *t) {
    int fds[2];
    pthread_t *threads = malloc((size_t)cap * sizeof *threads);
    if (!threads || pipe(fds))
        sb_fail(ctx, "out of memory or pipes");
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, PTHREAD_STACK_MIN);
    int64_t n = 0;
    int refused = 0;
    sb_compute_begin(ctx);
    sb_worker_begin(ctx, 0);
    double t0 = sbm_now();
    for (; n < cap; n++) {
        refused = pthread_create(&threads[n], &attr, blocked_thread, &fds[0]);
        if (refused)
            break;
    }
    t[0] = n ? (sbm_now() - t0) / (double)n : NAN;
    sb_worker_end(ctx, 0);
    sb_compute_end(ctx);
    close(fds[1]);
    for (int64_t i = 0; i < n; i++)
        pthread_join(threads[i], NULL);
    close(fds[0]);
    pthread_attr_destroy(&attr);
    free(threads);
    struct rlimit nproc;
    getrlimit(RLIMIT_NPROC, &nproc);
    sb_set_op_times(ctx, "thread-limit", t, 1, n ? n : 1);
    sb_set_result_number(ctx, "threads_created", (double)n);
    sb_set_result_number(ctx, "limit_reached", refused ? 1 : 0);
    sb_set_result_number(ctx, "refusal_errno", refused);
    sb_set_result_number(ctx, "threads_max", read_number("/proc/sys/kernel/threads-max"));
    sb_set_result_number(ctx, "max_map_count", read_number("/proc/sys/vm/max_map_count"));
    sb_set_result_number(ctx, "rlimit_nproc",
                         nproc.rlim_cur == RLIM_INFINITY ? -1 : (double)nproc.rlim_cur);
    sb_set_checksum_value(ctx, (uint64_t)n);
}

/* ---- the rest: timed loops in this thread -----------------------------------------------------
 */

static void run_create(sb_ctx *ctx, int what, int64_t ops, int64_t batch, double *t) {
    sb_compute_begin(ctx);
    sb_worker_begin(ctx, 0);
    int64_t done = 0;
    for (int64_t s = 0; s < ops / batch; s++) {
        double t0 = sbm_now();
        for (int64_t i = 0; i < batch; i++) {
            if (what == OP_THREAD_CREATE) {
                pthread_t th;
                void *back = NULL;
                if (pthread_create(&th, NULL, empty_thread, &done) != 0)
                    sb_fail(ctx, "pthread_create failed");
                pthread_join(th, &back);
                done += back == &done;
            } else {
                pid_t pid = fork();
                if (pid < 0)
                    sb_fail(ctx, "fork failed");
                if (pid == 0) {
                    if (what == OP_FORK_EXEC)
                        execl("/bin/true", "true", (char *)NULL);
                    _exit(what == OP_FORK_EXEC ? 127 : 0);
                }
                int status = 0;
                waitpid(pid, &status, 0);
                done += WIFEXITED(status) && WEXITSTATUS(status) == 0;
            }
        }
        t[s] = (sbm_now() - t0) / (double)batch;
    }
    sb_worker_end(ctx, 0);
    sb_compute_end(ctx);
    if (done != ops)
        sb_fail(ctx, "a created thread or process did not finish normally");
    sb_set_op_times(ctx, op_names[what], t, ops / batch, batch);
    sb_set_checksum_value(ctx, (uint64_t)done);
}

static void run_malloc(sb_ctx *ctx, int64_t ops, int64_t batch, double *t) {
    size_t bytes = (size_t)value_i64(ctx, "bytes");
    int touch = choice(ctx, "touch", touch_names) == 1;
    long page = sysconf(_SC_PAGESIZE);
    void **ptrs = malloc((size_t)batch * sizeof *ptrs);
    if (!ptrs)
        sb_fail(ctx, "out of memory");
    uint64_t got = 0;
    sb_compute_begin(ctx);
    sb_worker_begin(ctx, 0);
    for (int64_t s = 0; s < ops / batch; s++) {
        double t0 = sbm_now();
        /* malloc and free alternate per operation, as in the seed: the allocator reuses the block
         */
        for (int64_t i = 0; i < batch; i++) {
            char *p = malloc(bytes);
            if (!p)
                sb_fail(ctx, "malloc returned NULL");
            if (touch)
                for (size_t k = 0; k < bytes; k += (size_t)page)
                    ((volatile char *)p)[k] = 1;
            ptrs[i] = p;
            got += p != NULL;
            free(p);
        }
        t[s] = (sbm_now() - t0) / (double)batch;
    }
    sb_worker_end(ctx, 0);
    sb_compute_end(ctx);
    free(ptrs);
    sb_set_op_times(ctx, "malloc+free", t, ops / batch, batch);
    sb_set_checksum_value(ctx, got);
}

static void run_timer(sb_ctx *ctx, int64_t ops, int64_t batch, double *t) {
    int64_t smallest = INT64_MAX;
    sb_compute_begin(ctx);
    sb_worker_begin(ctx, 0);
    for (int64_t s = 0; s < ops / batch; s++) {
        int64_t first = sbm_now_ns(), prev = first;
        for (int64_t i = 0; i < batch; i++) {
            int64_t now = sbm_now_ns();
            if (now > prev && now - prev < smallest)
                smallest = now - prev;
            prev = now;
        }
        t[s] = 1e-9 * (double)(prev - first) / (double)batch;
    }
    sb_worker_end(ctx, 0);
    sb_compute_end(ctx);
    struct timespec res;
    clock_getres(CLOCK_MONOTONIC, &res);
    sb_set_op_times(ctx, "clock_gettime", t, ops / batch, batch);
    sb_set_result_number(ctx, "smallest_step_s", smallest == INT64_MAX ? NAN : 1e-9 * smallest);
    sb_set_result_number(ctx, "clock_getres_s", (double)res.tv_sec + 1e-9 * (double)res.tv_nsec);
}

static int run(sb_ctx *ctx) {
    int op = choice(ctx, "op", op_names);
    int64_t ops = value_i64(ctx, "ops"), batch = value_i64(ctx, "batch");
    double *t = malloc((size_t)(ops / batch) * sizeof *t);
    if (!t)
        sb_fail(ctx, "out of memory for the samples");
    cpu_set_t started_on = sbm_get_affinity();
    switch (op) {
    case OP_CTXSW_THREAD:
    case OP_CTXSW_PROCESS:
        if (choice(ctx, "mode", mode_names) == 1)
            run_yield(ctx, op == OP_CTXSW_PROCESS, ops, batch, t);
        else
            run_pingpong(ctx, op == OP_CTXSW_PROCESS, ops, batch, t);
        break;
    case OP_MALLOC:
        run_malloc(ctx, ops, batch, t);
        break;
    case OP_TIMER:
        run_timer(ctx, ops, batch, t);
        break;
    case OP_THREAD_LIMIT:
        run_thread_limit(ctx, ops, t);
        break;
    default:
        run_create(ctx, op, ops, batch, t);
        break;
    }
    free(t);
    sbm_set_affinity(&started_on);
    return 0;
}

const sb_kernel_desc sb_kernel = {
    SB_DESC_SERIAL("osbench", SB_KERNEL_MICRO),
    .lang = "c",
    .help =
        "OS overhead per operation: thread create+join, fork+waitpid, fork+exec+waitpid,\n"
        "a context switch between two threads or two processes (pipe ping-pong; a round trip\n"
        "is two switches, each sample is divided by 2*batch; tokens are checked so the parties\n"
        "provably alternate; or --mode yield: sched_yield hand-offs between two real-time\n"
        "parties on one CPU, checked the same way), malloc+free of --bytes, and the cost and\n"
        "smallest step of clock_gettime(CLOCK_MONOTONIC); thread-limit: how many threads\n"
        "can live at once, up to --ops (threads_created, limit_reached, the OS limits).\n"
        "result: min/median/mean/p99/max seconds per op.",
    .run = run,
};
