/* Timing precision: a periodic thread sleeps with clock_nanosleep(TIMER_ABSTIME) to absolute
 * deadlines t_i = t_0 + i * period and records how late it wakes up ("miss time" tau_i - t_i).
 * Absolute deadlines keep one late wake-up from shifting all later ones (no drift). Period 0
 * runs the loop back to back: its rate is the highest rate the loop can sustain (P_max). */
#define _GNU_SOURCE
#include "harness.h"
#include "sb_descriptors.h"
#include "sb_micro_util.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include <unistd.h>

static const char *const policy_names[] = {"other", "fifo", NULL};
static const char *const yesno_names[] = {"no", "yes", NULL};
static const char *const load_names[] = {"none", "same-cpu", "other-cpu", NULL};
static const char *const wait_names[] = {"sleep", "busy", NULL};

static const sb_micro_option options[] = {
    {"period-us", "1000", "period in microseconds, 0..10^6 (0 = back to back: P_max)"},
    {"count", "1000", "periods per repetition, 2..10^7"},
    {"policy", "other", "scheduling policy of the periodic thread: other|fifo (fifo priority 80)"},
    {"pin", "no", "pin the periodic thread to its current CPU (no|yes)"},
    {"load", "none", "competing busy thread: none|same-cpu|other-cpu (SCHED_OTHER)"},
    {"wait", "sleep", "how to wait for a deadline: sleep (clock_nanosleep) | busy (spin)"},
    {"udp", "no", "send an 18-byte UDP datagram to 127.0.0.1 each period (no|yes)"},
};

static int check(const char *const *v, char *err, int32_t errlen) {
    int64_t x;
    return sbm_parse_i64("period-us", v[0], 0, 1000000, &x, err, errlen) ||
                   sbm_parse_i64("count", v[1], 2, 10000000, &x, err, errlen) ||
                   sbm_parse_choice("policy", v[2], policy_names, err, errlen) < 0 ||
                   sbm_parse_choice("pin", v[3], yesno_names, err, errlen) < 0 ||
                   sbm_parse_choice("load", v[4], load_names, err, errlen) < 0 ||
                   sbm_parse_choice("wait", v[5], wait_names, err, errlen) < 0 ||
                   sbm_parse_choice("udp", v[6], yesno_names, err, errlen) < 0
               ? -1
               : 0;
}

const sb_micro_desc sb_micro = {options, sizeof options / sizeof options[0], check};

static int choice(sb_ctx *ctx, const char *name, const char *const *names) {
    char err[256];
    return sbm_parse_choice(name, sb_micro_value(ctx, name), names, err, sizeof err);
}

struct hog {
    atomic_int stop;
    int cpu;
    uint64_t spins;
};

static void *hog_thread(void *arg) {
    struct hog *h = arg;
    if (h->cpu >= 0)
        sbm_pin_self(h->cpu);
    while (!atomic_load_explicit(&h->stop, memory_order_relaxed))
        h->spins++;
    return NULL;
}

static void ns_to_ts(int64_t ns, struct timespec *ts) {
    ts->tv_sec = ns / 1000000000;
    ts->tv_nsec = ns % 1000000000;
}

static int run(sb_ctx *ctx) {
    int64_t period = 1000 * strtoll(sb_micro_value(ctx, "period-us"), NULL, 10);
    int64_t count = strtoll(sb_micro_value(ctx, "count"), NULL, 10);
    int fifo = choice(ctx, "policy", policy_names) == 1;
    int pin = choice(ctx, "pin", yesno_names) == 1;
    int load = choice(ctx, "load", load_names);
    int busy = choice(ctx, "wait", wait_names) == 1;
    int udp = choice(ctx, "udp", yesno_names) == 1;

    cpu_set_t started_on = sbm_get_affinity();
    int here = sched_getcpu();
    if (pin)
        sbm_pin_self(here);
    struct hog hog = {.cpu = -1};
    pthread_t hog_th;
    if (load) {
        hog.cpu = here;
        if (load == 2) {
            hog.cpu = sbm_other_cpu(&started_on, here); /* of the CPUs it started on: pinned
                                                           itself, it has only `here` left */
            if (hog.cpu < 0)
                sb_fail(ctx, "--load other-cpu needs two allowed CPUs");
        }
        if (pthread_create(&hog_th, NULL, hog_thread, &hog) != 0)
            sb_fail(ctx, "pthread_create failed for the load thread");
    }
    int sock = -1;
    struct sockaddr_in dst = {.sin_family = AF_INET, .sin_port = htons(9)};
    dst.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (udp && (sock = socket(AF_INET, SOCK_DGRAM, 0)) < 0)
        sb_fail(ctx, "cannot open a UDP socket");
    if (fifo) {
        struct sched_param sp = {.sched_priority = 80};
        if (pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp) != 0)
            sb_fail(ctx, "SCHED_FIFO refused: permission denied (needs root or CAP_SYS_NICE)");
    }
    double *late = malloc((size_t)count * sizeof *late);
    if (!late)
        sb_fail(ctx, "out of memory for the samples");
    char payload[18] = "scalebench-timing";
    int64_t missed = 0, sent = 0;
    sb_compute_begin(ctx);
    sb_worker_begin(ctx, 0);
    int64_t t0 = sbm_now_ns() + (period > 0 ? period : 0), woke = t0, prev = t0;
    for (int64_t i = 0; i < count; i++) {
        int64_t deadline = t0 + i * period;
        if (busy) {
            while ((woke = sbm_now_ns()) < deadline)
                ;
        } else {
            struct timespec ts;
            ns_to_ts(deadline, &ts);
            while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) != 0)
                ;
            woke = sbm_now_ns();
        }
        /* back to back (period 0) the sample is the gap between two wake-ups instead */
        late[i] = 1e-9 * (double)(period > 0 ? woke - deadline : woke - prev);
        prev = woke;
        missed += period > 0 && woke - deadline >= period;
        if (udp)
            sent += sendto(sock, payload, sizeof payload, 0, (struct sockaddr *)&dst, sizeof dst) ==
                    (ssize_t)sizeof payload;
    }
    sb_worker_end(ctx, 0);
    sb_compute_end(ctx);
    if (fifo) {
        struct sched_param sp = {.sched_priority = 0};
        pthread_setschedparam(pthread_self(), SCHED_OTHER, &sp);
    }
    if (load) {
        atomic_store(&hog.stop, 1);
        pthread_join(hog_th, NULL);
    }
    if (sock >= 0)
        close(sock);
    if (udp && sent != count)
        sb_fail(ctx, "a UDP datagram could not be sent");
    /* The span from the first deadline to the last wake-up: with absolute deadlines it exceeds
     * (count-1) * period only by the last wake-up's lateness, never by the sum of all of them. */
    double span = 1e-9 * (double)(woke - t0);
    double lateness_sum = 0.0;
    for (int64_t i = 0; i < count; i++)
        lateness_sum += late[i];
    sb_set_op_times(ctx, period > 0 ? "wakeup_lateness" : "loop_gap", late, count, 1);
    sb_set_result_number(ctx, "period_s", 1e-9 * (double)period);
    sb_set_result_number(ctx, "span_s", span);
    sb_set_result_number(ctx, "drift_s", span - 1e-9 * (double)((count - 1) * period));
    sb_set_result_number(ctx, "lateness_sum_s", lateness_sum);
    sb_set_result_number(ctx, "rate_hz", span > 0 ? (double)(count - 1) / span : NAN);
    sb_set_result_number(ctx, "missed_periods", (double)missed);
    sb_set_result_number(ctx, "load_cpu", hog.cpu);
    sb_set_result_number(ctx, "load_spins", (double)hog.spins);
    sb_set_checksum_value(ctx, (uint64_t)(count + sent));
    free(late);
    sbm_set_affinity(&started_on);
    return 0;
}

const sb_kernel_desc sb_kernel = {
    SB_DESC_SERIAL("timing", SB_KERNEL_MICRO),
    .lang = "c",
    .help =
        "Wake-up precision of a periodic thread (clock_nanosleep to absolute deadlines):\n"
        "result: lateness ('miss time') min/median/mean/p99/max, rate_hz (with --period-us 0:\n"
        "the highest rate the loop sustains), missed_periods (late by a whole period or more),\n"
        "drift_s (span minus (count-1)*period: stays at one lateness, it does not accumulate).",
    .run = run,
};
