/* Small helpers shared by the microbenchmark kernels (header-only: each kernel is one object). */
#ifndef SB_MICRO_UTIL_H
#define SB_MICRO_UTIL_H

#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static inline double sbm_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static inline int64_t sbm_now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* Decimal integer in [lo, hi] with nothing else; 0 on success, else one error line in err. */
static inline int sbm_parse_i64(const char *name, const char *text, int64_t lo, int64_t hi,
                                int64_t *out, char *err, int32_t errlen) {
    char *end = NULL;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (!text[0] || *end || errno || v < lo || v > hi) {
        snprintf(err, (size_t)errlen, "--%s: '%s' is not an integer in %" PRId64 "..%" PRId64, name,
                 text, lo, hi);
        return -1;
    }
    *out = v;
    return 0;
}

/* Index of text in the NULL-terminated list names, or -1 with one error line in err. */
static inline int sbm_parse_choice(const char *name, const char *text, const char *const *names,
                                   char *err, int32_t errlen) {
    char all[256] = "";
    for (int i = 0; names[i]; i++) {
        if (strcmp(text, names[i]) == 0)
            return i;
        snprintf(all + strlen(all), sizeof all - strlen(all), "%s%s", i ? "|" : "", names[i]);
    }
    snprintf(err, (size_t)errlen, "--%s: '%s' is not one of %s", name, text, all);
    return -1;
}

/* The k-th CPU (0-based) of this thread's allowed set, or -1. */
static inline int sbm_allowed_cpu(int k) {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0)
        return -1;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &set) && k-- == 0)
            return c;
    return -1;
}

/* The first CPU of `set` other than `cpu`, or -1 (a set of one CPU). */
static inline int sbm_other_cpu(const cpu_set_t *set, int cpu) {
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, set) && c != cpu)
            return c;
    return -1;
}

/* Pins the calling thread to one CPU; a CPU the OS refuses ends the program with exit 1 and one
 * line (a measurement on another CPU than asked for would be recorded as if it were placed). */
static inline void sbm_pin_self(int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (cpu >= 0 && cpu < CPU_SETSIZE) {
        CPU_SET(cpu, &set);
        if (sched_setaffinity(0, sizeof set, &set) == 0)
            return;
    } else {
        errno = EINVAL;
    }
    int why = errno;
    static atomic_int failing;
    if (atomic_exchange(&failing, 1)) /* another worker was refused too: one line, from the first */
        for (;;)
            pause();
    fprintf(stderr, "%s: pinning to CPU %d refused by the OS: %s\n", program_invocation_short_name,
            cpu, strerror(why));
    exit(1);
}

/* The calling thread's CPU set, to be restored after a repetition that pinned it (the next
 * repetition must see the CPUs the process was started with). */
static inline cpu_set_t sbm_get_affinity(void) {
    cpu_set_t set;
    CPU_ZERO(&set);
    sched_getaffinity(0, sizeof set, &set);
    return set;
}

static inline void sbm_set_affinity(const cpu_set_t *set) {
    sched_setaffinity(0, sizeof *set, set);
}

#endif /* SB_MICRO_UTIL_H */
