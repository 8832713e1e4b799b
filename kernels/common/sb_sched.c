/* Scenario knobs: process nice, per-worker nice and scheduling policy (see sb_sched.h). */
#define _GNU_SOURCE
#include "sb_sched.h"
#include "sb_internal.h"

#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

static const char *const policy_names[SB_POLICY_COUNT] = {"other", "batch", "idle", "fifo", "rr"};
static const int policy_os[SB_POLICY_COUNT] = {SCHED_OTHER, SCHED_BATCH, SCHED_IDLE, SCHED_FIFO,
                                               SCHED_RR};
static const char *const policy_os_names[SB_POLICY_COUNT] = {
    "SCHED_OTHER", "SCHED_BATCH", "SCHED_IDLE", "SCHED_FIFO", "SCHED_RR"};

const char *sb_policy_name(int32_t policy) {
    return policy >= 0 && policy < SB_POLICY_COUNT ? policy_names[policy] : "unknown";
}

static void set_err(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void set_err(char *err, size_t errlen, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

/* One integer in [lo, hi] spanning exactly [s, e). */
static int int_in(const char *s, const char *e, long lo, long hi, int32_t *out) {
    if (s == e || e - s > 11)
        return -1;
    char buf[16];
    memcpy(buf, s, (size_t)(e - s));
    buf[e - s] = '\0';
    char *end = NULL;
    errno = 0;
    long v = strtol(buf, &end, 10);
    if (*end != '\0' || errno == ERANGE || v < lo || v > hi || buf[0] == ' ')
        return -1;
    *out = (int32_t)v;
    return 0;
}

int sb_sched_parse_nice(const char *text, sb_sched_request *req, char *err, size_t errlen) {
    if (int_in(text, text + strlen(text), -20, 19, &req->nice) != 0) {
        set_err(err, errlen, "--nice: '%s' is not a nice value (-20..19)", text);
        return -1;
    }
    req->has_nice = 1;
    return 0;
}

/* Splits a comma list into at most SB_SCHED_MAX_LIST items and hands each to `item`. */
static int each_item(const char *text,
                     int (*item)(const char *s, const char *e, int32_t k, sb_sched_request *req),
                     sb_sched_request *req, int32_t *count) {
    int32_t k = 0;
    const char *s = text;
    for (;;) {
        const char *e = strchr(s, ',');
        if (!e)
            e = s + strlen(s);
        if (k >= SB_SCHED_MAX_LIST || item(s, e, k, req) != 0)
            return -1;
        k++;
        if (*e == '\0')
            break;
        s = e + 1;
    }
    *count = k;
    return 0;
}

static int nice_item(const char *s, const char *e, int32_t k, sb_sched_request *req) {
    return int_in(s, e, -20, 19, &req->worker_nice[k]);
}

static int policy_item(const char *s, const char *e, int32_t k, sb_sched_request *req) {
    const char *colon = memchr(s, ':', (size_t)(e - s));
    const char *name_end = colon ? colon : e;
    for (int32_t p = 0; p < SB_POLICY_COUNT; p++) {
        size_t len = strlen(policy_names[p]);
        if ((size_t)(name_end - s) != len || strncmp(s, policy_names[p], len) != 0)
            continue;
        req->worker_policy[k] = p;
        req->worker_rtprio[k] = 0;
        int realtime = p == SB_POLICY_FIFO || p == SB_POLICY_RR;
        if (realtime != (colon != NULL))
            return -1; /* fifo/rr need ":priority", the others take none */
        return realtime ? int_in(colon + 1, e, 1, 99, &req->worker_rtprio[k]) : 0;
    }
    return -1;
}

int sb_sched_parse_worker_nice(const char *text, sb_sched_request *req, char *err, size_t errlen) {
    if (strlen(text) >= sizeof req->worker_nice_text ||
        each_item(text, nice_item, req, &req->n_worker_nice) != 0) {
        set_err(err, errlen,
                "--worker-nice: '%s' is not a comma list of up to %d nice values (-20..19)", text,
                SB_SCHED_MAX_LIST);
        return -1;
    }
    snprintf(req->worker_nice_text, sizeof req->worker_nice_text, "%s", text);
    return 0;
}

int sb_sched_parse_worker_policy(const char *text, sb_sched_request *req, char *err,
                                 size_t errlen) {
    if (strlen(text) >= sizeof req->worker_policy_text ||
        each_item(text, policy_item, req, &req->n_worker_policy) != 0) {
        set_err(err, errlen,
                "--worker-policy: '%s' is not a comma list of up to %d of "
                "other|batch|idle|fifo:P|rr:P (P 1..99)",
                text, SB_SCHED_MAX_LIST);
        return -1;
    }
    snprintf(req->worker_policy_text, sizeof req->worker_policy_text, "%s", text);
    return 0;
}

static const char *why(int e) {
    return e == EPERM || e == EACCES ? " (needs CAP_SYS_NICE or a matching RLIMIT_NICE/RTPRIO)"
                                     : "";
}

int sb_sched_apply_process(const sb_sched_request *req, char *err, size_t errlen) {
    if (!req->has_nice)
        return 0;
    /* On Linux nice is per thread: set on the main thread before any worker thread exists, it is
     * what every worker inherits. */
    if (setpriority(PRIO_PROCESS, 0, req->nice) != 0) {
        int e = errno;
        set_err(err, errlen, "--nice %d refused by the OS: %s%s", (int)req->nice, strerror(e),
                why(e));
        return -1;
    }
    return 0;
}

int sb_sched_apply_worker(const sb_sched_request *req, int32_t worker, char *err, size_t errlen) {
    pid_t tid = (pid_t)syscall(SYS_gettid);
    if (req->n_worker_policy > 0) {
        int32_t k = worker % req->n_worker_policy;
        int32_t p = req->worker_policy[k];
        struct sched_param sp = {.sched_priority = req->worker_rtprio[k]};
        /* pid 0 = the calling thread: the policy is a per-thread attribute. */
        if (sched_setscheduler(0, policy_os[p], &sp) != 0) {
            int e = errno;
            set_err(err, errlen, "worker %d: %s priority %d refused by the OS: %s%s", (int)worker,
                    policy_os_names[p], (int)sp.sched_priority, strerror(e), why(e));
            return -1;
        }
    }
    if (req->n_worker_nice > 0) {
        int32_t n = req->worker_nice[worker % req->n_worker_nice];
        if (setpriority(PRIO_PROCESS, (id_t)tid, n) != 0) {
            int e = errno;
            set_err(err, errlen, "worker %d: nice %d refused by the OS: %s%s", (int)worker, (int)n,
                    strerror(e), why(e));
            return -1;
        }
    }
    return 0;
}

void sb_sched_claim_failure(void) {
    static atomic_flag claimed = ATOMIC_FLAG_INIT;
    if (atomic_flag_test_and_set(&claimed))
        for (;;)
            pause();
}

void sb_sched_read_back(sb_sched_applied *out) {
    pid_t tid = (pid_t)syscall(SYS_gettid);
    int os = sched_getscheduler(0);
    out->policy = -1;
    for (int32_t p = 0; p < SB_POLICY_COUNT; p++)
        if (os >= 0 && (os & ~SCHED_RESET_ON_FORK) == policy_os[p])
            out->policy = p;
    struct sched_param sp = {0};
    out->rtprio = sched_getparam(0, &sp) == 0 ? sp.sched_priority : -1;
    errno = 0;
    int n = getpriority(PRIO_PROCESS, (id_t)tid);
    out->nice = errno == 0 ? n : 99;
}

static void put_text_or_null(FILE *f, const char *s) {
    if (s && s[0])
        sb_put_json_string(f, s);
    else
        fputs("null", f);
}

void sb_sched_put_json(FILE *f, const sb_sched_request *req, const sb_sched_applied *workers,
                       int32_t nworkers, const char *wait_policy, const char *wait_applied) {
    fputs("{\"nice\":", f);
    if (req->has_nice)
        fprintf(f, "%d", (int)req->nice);
    else
        fputs("null", f);
    fputs(",\"worker_nice\":", f);
    put_text_or_null(f, req->worker_nice_text);
    fputs(",\"worker_policy\":", f);
    put_text_or_null(f, req->worker_policy_text);
    /* The OpenMP runtime reads these itself; echoed because spin-waiting changes CPU time. */
    const char *vars[] = {"OMP_WAIT_POLICY", "GOMP_SPINCOUNT"};
    const char *keys[] = {"omp_wait_policy", "gomp_spincount"};
    for (int i = 0; i < 2; i++) {
        const char *v = getenv(vars[i]);
        fprintf(f, ",\"%s\":", keys[i]);
        if (v) {
            fputc('"', f);
            for (const char *c = v; *c; c++)
                if ((unsigned char)*c >= 0x20 && *c != '"' && *c != '\\')
                    fputc(*c, f);
            fputc('"', f);
        } else {
            fputs("null", f);
        }
    }
    fputs(",\"wait_policy\":", f);
    put_text_or_null(f, wait_policy);
    fputs(",\"wait_applied\":", f);
    put_text_or_null(f, wait_applied);
    fputs(",\"applied\":[", f);
    for (int32_t w = 0; w < nworkers; w++)
        fprintf(f, "%s[\"%s\",%d,%d]", w ? "," : "", sb_policy_name(workers[w].policy),
                (int)workers[w].rtprio, (int)workers[w].nice);
    fputs("]}", f);
}

void sb_sched_print_help(FILE *out) {
    fprintf(
        out,
        "\nScheduling scenario (applied by each worker to its own thread; a refusal by the\n"
        "OS ends the run with exit status 1 and one line saying why):\n"
        "  --nice N           process nice value, -20..19, inherited by every worker\n"
        "  --worker-nice L    comma list of nice values; worker i takes entry i mod length\n"
        "  --worker-policy L  comma list of other|batch|idle|fifo:P|rr:P (P = rt priority\n"
        "                     1..99); worker i takes entry i mod length\n"
        "The record's \"sched\" says what was asked, OMP_WAIT_POLICY/GOMP_SPINCOUNT as set, and\n"
        "per worker the [policy, rt priority, nice] its thread ran under (read at its end).\n");
}
