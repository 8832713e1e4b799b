/* Spin-then-sleep waits and the barrier of the pthreads kernels (see sb_wait.h). */
#define _GNU_SOURCE
#include "sb_wait.h"

#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static const char *const policy_names[SB_WAIT_POLICY_COUNT] = {"auto", "spin", "sleep"};

const char *sb_wait_policy_name(int32_t policy) {
    return policy >= 0 && policy < SB_WAIT_POLICY_COUNT ? policy_names[policy] : "unknown";
}

int sb_wait_parse(const char *text, int32_t *out, char *err, size_t errlen) {
    for (int32_t p = 0; p < SB_WAIT_POLICY_COUNT; p++)
        if (strcmp(text, policy_names[p]) == 0) {
            *out = p;
            return 0;
        }
    snprintf(err, errlen, "--wait-policy: '%s' is not one of auto, spin, sleep", text);
    return -1;
}

int32_t sb_wait_allowed_cpus(void) {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0)
        return 1;
    const int n = CPU_COUNT(&set);
    return n > 0 ? n : 1;
}

int32_t sb_wait_resolve(int32_t asked, int32_t threads, int32_t cpus) {
    if (asked == SB_WAIT_AUTO)
        return threads <= cpus ? SB_WAIT_SPIN : SB_WAIT_SLEEP;
    return asked;
}

int64_t sb_wait_spin_limit(int32_t applied) {
    return applied == SB_WAIT_SPIN ? SB_SPIN_FOREVER : 0;
}

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

int64_t sb_wait_while_equal(sb_wait_word *w, uint32_t old, int64_t spin_limit) {
    int64_t spun = 0;
    while (spun < spin_limit) {
        if (atomic_load_explicit(&w->value, memory_order_acquire) != old)
            return spun;
        cpu_relax();
        spun++;
    }
    /* Announce the sleep before checking the word once more; the waker stores the word before it
     * reads `sleepers` (both sequentially consistent), so either this check sees the new value or
     * the waker sees a sleeper and wakes; the futex itself sleeps only while the word is `old`. */
    atomic_fetch_add(&w->sleepers, 1);
    while (atomic_load(&w->value) == old)
        syscall(SYS_futex, &w->value, FUTEX_WAIT_PRIVATE, old, NULL, NULL, 0);
    atomic_fetch_sub(&w->sleepers, 1);
    return spun;
}

void sb_wait_store_wake(sb_wait_word *w, uint32_t value) {
    atomic_store(&w->value, value);
    if (atomic_load(&w->sleepers) > 0)
        syscall(SYS_futex, &w->value, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

void sb_barrier_init(sb_barrier *b, uint32_t count, int64_t spin_limit) {
    atomic_init(&b->phase.value, 0);
    atomic_init(&b->phase.sleepers, 0);
    atomic_init(&b->arrived, 0);
    b->count = count;
    b->spin_limit = spin_limit;
}

int sb_barrier_wait(sb_barrier *b) {
    /* The generation read before arriving: the last arriver resets `arrived` before it bumps the
     * phase, so a worker already in the next generation cannot be counted in this one. */
    const uint32_t phase = atomic_load_explicit(&b->phase.value, memory_order_acquire);
    if (atomic_fetch_add_explicit(&b->arrived, 1, memory_order_acq_rel) + 1 == b->count) {
        atomic_store_explicit(&b->arrived, 0, memory_order_relaxed);
        sb_wait_store_wake(&b->phase, phase + 1);
        return 1;
    }
    sb_wait_while_equal(&b->phase, phase, b->spin_limit);
    return 0;
}
