/*
 * machine-probe: the kernels' machine-state probe (kernels/common/sb_probe.h) around a process that
 * is not a kernel, for the program runner (kernels/programs/run_program.py).
 *
 *   machine-probe CPULIST      e.g. machine-probe 0,1
 *
 * Times the probe's chains on each listed CPU (moving itself there and back), writes "ready" on
 * stdout and waits for one line on stdin: the run-queue wait of the measured process in seconds
 * ("-1" when unknown; end of input counts as unknown). Then times the chains again and writes one
 * JSON object
 * {"probe":{...}}, the same "probe" field a kernel's record carries. The cache-line transfers
 * between the first CPU and each other one are timed by two threads of its own, one on each CPU
 * (sb_xfer.h): the round trip is the host's placement of those CPUs, whoever's threads take it, as
 * the kernels' own workers do; null where a thread could not be placed. Exit status 0, or 2 with
 * one line on stderr for a bad CPU list.
 */
#define _GNU_SOURCE
#include "sb_pin.h"
#include "sb_probe.h"
#include "sb_xfer.h"

#include <pthread.h>
#include <sched.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int parse_cpus(const char *text, sb_probe_sample *s) {
    s->n = 0;
    while (*text) {
        char *end;
        long cpu = strtol(text, &end, 10);
        if (end == text || cpu < 0 || cpu >= CPU_SETSIZE || s->n >= SB_PROBE_MAX_CPUS)
            return -1;
        s->cpu[s->n++] = (int32_t)cpu;
        if (*end == ',')
            end++;
        else if (*end)
            return -1;
        text = end;
    }
    return s->n > 0 ? 0 : -1;
}

typedef struct {
    sb_xfer_line *line;
    int32_t cpu;
    int placed;
} pong_job;

/* The partner: answers the ping until told to stop, placed on its CPU or not (a round trip it took
 * from elsewhere is not recorded). */
static void *pong(void *arg) {
    pong_job *job = arg;
    job->placed = sb_pin_to_cpu(job->cpu) == 0;
    sb_xfer_pong(job->line);
    return NULL;
}

/* The round trip between the first CPU and each other one, by this thread on the first and a new
 * one on the other; the caller's affinity is restored afterwards. */
static void transfers(sb_probe_sample *s) {
    cpu_set_t saved;
    if (sched_getaffinity(0, sizeof saved, &saved) != 0 || sb_pin_to_cpu(s->cpu[0]) != 0)
        return;
    sb_xfer_line *lines = sb_xfer_lines(s->n);
    for (int32_t k = 1; k < s->n; k++) {
        if (!sb_probe_xfer_pair(s, k))
            continue;
        pong_job job = {&lines[k], s->cpu[k], 0};
        pthread_t partner;
        if (pthread_create(&partner, NULL, pong, &job) != 0)
            continue;
        double trip = sb_xfer_ping(&lines[k]);
        pthread_join(partner, NULL);
        if (job.placed)
            s->xfer_s[k] = trip;
    }
    sched_setaffinity(0, sizeof saved, &saved);
}

static void measure(sb_probe_sample *s) {
    for (int32_t k = 0; k < s->n; k++)
        s->xfer_s[k] = -1.0;
    sb_probe_on_cpus(s);
    transfers(s);
}

int main(int argc, char **argv) {
    static sb_probe_sample before, after;
    if (argc != 2 || parse_cpus(argv[1], &before) != 0) {
        fprintf(stderr, "machine-probe: usage: machine-probe CPULIST (e.g. 0,1; at most %d CPUs)\n",
                SB_PROBE_MAX_CPUS);
        return 2;
    }
    after = before;
    measure(&before);
    puts("ready");
    fflush(stdout);
    char line[64];
    double runq = -1.0;
    if (fgets(line, sizeof line, stdin) != NULL) {
        char *end;
        double v = strtod(line, &end);
        if (end != line && v >= 0)
            runq = v;
    }
    measure(&after);
    fputs("{\"tool\":\"machine-probe\"", stdout);
    sb_probe_put(stdout, &before, &after, runq);
    puts("}");
    return 0;
}
