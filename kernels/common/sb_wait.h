/*
 * --wait-policy of the pthreads kernels: how a worker waits for the others (the kernels' barriers)
 * and for the pool (the next job, the job's end). One primitive: spin on a C11 atomic word with a
 * pause instruction up to a spin limit, then sleep on it in the kernel (futex). On a shared guest a
 * sleeping vCPU slows the busy one (docs/campaigns.md), so spinning while the workers fit the CPUs
 * the process may use is the default; with more workers than those CPUs a spinner would take the
 * CPU from a worker that computes, so the same default sleeps at once.
 */
#ifndef SB_WAIT_H
#define SB_WAIT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* The policies of --wait-policy (OpenMP's OMP_WAIT_POLICY vocabulary: spin = active, sleep =
 * passive), indexed by name in sb_wait_policy_name. auto is resolved once per run. */
enum sb_wait_policy {
    SB_WAIT_AUTO = 0,
    SB_WAIT_SPIN = 1,
    SB_WAIT_SLEEP = 2,
    SB_WAIT_POLICY_COUNT = 3
};

/* Spin limit (pause iterations) meaning "never sleep". */
#define SB_SPIN_FOREVER INT64_MAX

/* Spin limit of a helper parked between repetitions under spin: short, so that a warm-up followed
 * by the next repetition finds it awake, while the harness's probe between repetitions (sb_probe.c
 * moves the main thread onto each CPU of the case in turn) never shares a CPU with a spinner. */
#define SB_SPIN_BETWEEN_JOBS 20000

const char *sb_wait_policy_name(int32_t policy);

/* --wait-policy's parser: 0 and *out set, or -1 with one line in err naming option and value. */
int sb_wait_parse(const char *text, int32_t *out, char *err, size_t errlen);

/* CPUs this process may run on (its affinity mask); 1 if it cannot be read. */
int32_t sb_wait_allowed_cpus(void);

/* The policy that runs: auto is spin when `threads` fit `cpus`, else sleep; others as asked. */
int32_t sb_wait_resolve(int32_t asked, int32_t threads, int32_t cpus);

/* Pause iterations a waiter spins under the applied policy before it sleeps (0 under sleep). */
int64_t sb_wait_spin_limit(int32_t applied);

/* A word waiters wait on and wakers change. `sleepers` counts waiters inside the kernel, so a
 * wake costs a system call only when somebody sleeps. */
typedef struct sb_wait_word {
    _Atomic uint32_t value;
    _Atomic uint32_t sleepers;
} sb_wait_word;

/* Waits until w->value differs from `old`: spins up to spin_limit pause iterations, then sleeps.
 * Returns the number of pause iterations spun (for tests). */
int64_t sb_wait_while_equal(sb_wait_word *w, uint32_t old, int64_t spin_limit);

/* Stores `value` into w->value and wakes every waiter that sleeps on it. */
void sb_wait_store_wake(sb_wait_word *w, uint32_t value);

/* A sense-reversing barrier of `count` workers built on the primitive. */
typedef struct sb_barrier {
    sb_wait_word phase; /* bumped by the last arriver: the generation */
    _Atomic uint32_t arrived;
    uint32_t count;
    int64_t spin_limit;
} sb_barrier;

void sb_barrier_init(sb_barrier *b, uint32_t count, int64_t spin_limit);

/* Returns once all `count` workers called it for this generation; 1 in exactly one worker (the
 * last to arrive), 0 in the others. */
int sb_barrier_wait(sb_barrier *b);

#endif /* SB_WAIT_H */
