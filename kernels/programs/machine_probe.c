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
 * {"probe":{...}}, the same "probe" field a kernel's record carries. No cache-line transfers (those
 * need the measured process's own workers): xfer is null. Exit status 0, or 2 with one line on
 * stderr for a bad CPU list.
 */
#define _GNU_SOURCE
#include "sb_probe.h"

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

static void measure(sb_probe_sample *s) {
    for (int32_t k = 0; k < s->n; k++)
        s->xfer_s[k] = -1.0; /* no pair of the program's workers to time a transfer with */
    sb_probe_on_cpus(s);
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
