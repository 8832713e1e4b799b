/*
 * Scenario knobs: the process's nice value and, per worker, a nice value and a scheduling policy.
 * Each worker applies its own setting to its own kernel thread (tid) in sb_worker_begin, so the
 * same code serves OpenMP, pthreads and Fortran kernels; sb_worker_end reads back what the OS
 * holds, for the record. A refusal by the OS (EPERM/EACCES) ends the run with exit 1 and one line
 * naming the worker, the setting and the reason: a case is never measured without its scenario.
 */
#ifndef SB_SCHED_H
#define SB_SCHED_H

#include <stdint.h>
#include <stdio.h>

/* Longest --worker-nice / --worker-policy list; worker i takes entry i mod length. */
#define SB_SCHED_MAX_LIST 64

/* The policy names of --worker-policy, indexed by enum sb_policy. */
enum sb_policy {
    SB_POLICY_OTHER = 0,
    SB_POLICY_BATCH = 1,
    SB_POLICY_IDLE = 2,
    SB_POLICY_FIFO = 3,
    SB_POLICY_RR = 4,
    SB_POLICY_COUNT = 5
};

typedef struct sb_sched_request {
    int has_nice; /* --nice given */
    int32_t nice; /* process nice value, applied before any worker thread exists */
    int32_t n_worker_nice;
    int32_t worker_nice[SB_SCHED_MAX_LIST];
    int32_t n_worker_policy;
    int32_t worker_policy[SB_SCHED_MAX_LIST];            /* enum sb_policy */
    int32_t worker_rtprio[SB_SCHED_MAX_LIST];            /* 1..99 for fifo/rr, else 0 */
    char worker_nice_text[256], worker_policy_text[512]; /* as given, echoed in records */
} sb_sched_request;

/* What one worker's thread ran under, read back at the end of its work. */
typedef struct sb_sched_applied {
    int32_t policy; /* enum sb_policy, -1 if unknown */
    int32_t rtprio;
    int32_t nice;
} sb_sched_applied;

/* Parsers for --nice, --worker-nice and --worker-policy: 0 on success, else -1 with one line in
 * err naming the option and the value. */
int sb_sched_parse_nice(const char *text, sb_sched_request *req, char *err, size_t errlen);
int sb_sched_parse_worker_nice(const char *text, sb_sched_request *req, char *err, size_t errlen);
int sb_sched_parse_worker_policy(const char *text, sb_sched_request *req, char *err, size_t errlen);

/* Applies --nice to the calling (main) thread, which every later thread inherits. Returns 0, or
 * -1 with the OS's refusal in err. */
int sb_sched_apply_process(const sb_sched_request *req, char *err, size_t errlen);

/* In worker w's own thread: applies its nice value and policy (if any were asked for). Returns 0,
 * or -1 with the refusal in err. */
int sb_sched_apply_worker(const sb_sched_request *req, int32_t worker, char *err, size_t errlen);

/* Called by a worker whose setting was refused: returns in the first such worker only and blocks
 * the others forever (the first one's exit ends them), so the run prints exactly one line. */
void sb_sched_claim_failure(void);

/* In worker w's own thread: what the OS holds for it now. */
void sb_sched_read_back(sb_sched_applied *out);

/* The "sched" object of the record (without the leading comma and key). */
/* wait_policy / wait_applied: --wait-policy as asked and as it ran (NULL for kernels without it).
 */
void sb_sched_put_json(FILE *f, const sb_sched_request *req, const sb_sched_applied *workers,
                       int32_t nworkers, const char *wait_policy, const char *wait_applied);

/* The --help paragraph. */
void sb_sched_print_help(FILE *out);

const char *sb_policy_name(int32_t policy);

#endif /* SB_SCHED_H */
