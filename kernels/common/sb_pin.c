/* Pinning inside the harness (see sb_pin.h). */
#define _GNU_SOURCE
#include "sb_pin.h"
#include "sb_internal.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int32_t pin_cpus[SB_PIN_MAX_CPUS];
static int32_t pin_n;
/* The CPU this thread last pinned itself to, -1 = not pinned by the harness. */
static _Thread_local int32_t pinned_to = -1;

static int parse_list(const char *text, char *err, size_t errlen) {
    const char *s = text;
    pin_n = 0;
    while (*s) {
        char *end;
        errno = 0;
        long cpu = strtol(s, &end, 10);
        if (end == s || errno || cpu < 0 || cpu >= CPU_SETSIZE || (*end && *end != ',') ||
            pin_n == SB_PIN_MAX_CPUS) {
            snprintf(err, errlen, "SB_PIN_CPUS=%s: expected a comma list of CPU numbers 0..%d",
                     text, CPU_SETSIZE - 1);
            pin_n = 0;
            return -1;
        }
        pin_cpus[pin_n++] = (int32_t)cpu;
        s = *end ? end + 1 : end;
    }
    if (pin_n == 0) {
        snprintf(err, errlen, "SB_PIN_CPUS is empty: expected a comma list of CPU numbers");
        return -1;
    }
    return 1;
}

int sb_rank_by_env(void) {
    static const char *const vars[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "SLURM_PROCID"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i]);
        if (v && *v)
            return atoi(v);
    }
    return 0;
}

int sb_pin_init(int32_t threads, char *err, size_t errlen) {
    const char *text = getenv("SB_PIN_CPUS");
    if (!text)
        return 0;
    if (parse_list(text, err, errlen) < 0)
        return -1;
    if (sb_pin_worker(sb_rank_by_env() * threads, err, errlen) != 0)
        return -1;
    return 1;
}

const int32_t *sb_pin_list(int32_t *n) {
    *n = pin_n;
    return pin_n ? pin_cpus : NULL;
}

int sb_pin_to_cpu(int32_t cpu) {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    return sched_setaffinity(0, sizeof one, &one);
}

int sb_pin_worker(int32_t global_worker, char *err, size_t errlen) {
    if (pin_n == 0 || global_worker < 0)
        return 0;
    int32_t cpu = pin_cpus[global_worker % pin_n];
    if (pinned_to == cpu)
        return 0;
    if (sb_pin_to_cpu(cpu) != 0) {
        snprintf(err, errlen, "worker %d: pinning to CPU %d refused by the OS: %s",
                 (int)global_worker, (int)cpu, strerror(errno));
        return -1;
    }
    pinned_to = cpu;
    return 0;
}
