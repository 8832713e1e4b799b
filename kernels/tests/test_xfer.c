/* C-level tests of sb_xfer.c, the probe's cache-line ping-pong: a round trip between two threads is
 * timed and the partner stopped; a partner slow to answer ends the timing after its budget instead
 * of after every round trip; a partner that arrives late does not count. A hang (a partner never
 * stopped) is turned into a failure by the alarm. */
#define _GNU_SOURCE
#include "sb_internal.h"
#include "sb_test.h"
#include "sb_xfer.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

static void sleep_us(long us) {
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000L};
    nanosleep(&ts, NULL);
}

static void *pong(void *line) {
    sb_xfer_pong(line);
    return NULL;
}

/* A partner that arrives `delay_us` late and then sleeps `answer_us` before each answer. */
typedef struct {
    sb_xfer_line *line;
    long delay_us, answer_us;
    long answers;
} slow_partner;

static void *slow_pong(void *arg) {
    slow_partner *p = arg;
    sleep_us(p->delay_us);
    for (;;) {
        uint64_t turn = atomic_load(&p->line->turn);
        if (turn == SB_XFER_STOP)
            return NULL;
        if (turn % 2 == 1) {
            sleep_us(p->answer_us);
            p->answers++;
            atomic_store(&p->line->turn, turn + 1);
        }
    }
}

static double timed_ping(void *(*partner)(void *), void *arg, sb_xfer_line *line, double *elapsed) {
    pthread_t t;
    pthread_create(&t, NULL, partner, arg);
    double t0 = sb_now();
    double per_trip = sb_xfer_ping(line);
    *elapsed = sb_now() - t0;
    pthread_join(t, NULL); /* returns only if the partner saw the stop */
    return per_trip;
}

static void test_round_trip(void) {
    sb_xfer_line *line = &sb_xfer_lines(2)[1];
    double elapsed;
    double per_trip = timed_ping(pong, line, line, &elapsed);
    CHECK(per_trip > 0 && per_trip < elapsed);
    CHECK(atomic_load(&line->turn) == SB_XFER_STOP);
    sb_xfer_lines(2); /* reset: the same line serves the next probe */
    CHECK(atomic_load(&line->turn) == 0);
    per_trip = timed_ping(pong, line, line, &elapsed);
    CHECK(per_trip > 0);
}

/* A ping against a partner `delay_us` late that sleeps `answer_us` before each answer: the
 * partner's state after it (its answers counted), the time per round trip and the ping's time. */
static slow_partner ping_slow_partner(long delay_us, long answer_us, double *per_trip,
                                      double *elapsed) {
    sb_xfer_line *line = &sb_xfer_lines(2)[1];
    slow_partner p = {line, delay_us, answer_us, 0};
    *per_trip = timed_ping(slow_pong, &p, line, elapsed);
    return p;
}

static void test_budget(void) {
    /* 300 us per answer: a sample of 8 round trips takes 2.4 ms or more, past the 2 ms budget, so
     * the ping stops after its first sample: the arrival trip and 8 answers, not 1 + 31 x 8
     * (counted, not timed: a loaded machine's late wake-ups change the time, not the count). */
    double per_trip, elapsed;
    slow_partner p = ping_slow_partner(0, 300, &per_trip, &elapsed);
    CHECK(per_trip >= 250e-6);
    CHECK(p.answers == 1 + SB_XFER_BATCH);
}

static void test_late_partner(void) {
    /* A partner 400 ms late (a helper woken from sleep, a preempted thread): not a slow transfer.
     * Were its arrival timed, the first sample alone would pass the budget and give 50 ms per round
     * trip; 25 ms leaves room for a loaded machine's preemptions of the partner afterwards (200 ms
     * within one sample of 8 round trips; with 80 ms and 5 ms a test run at load 2 failed once). */
    double per_trip, elapsed;
    ping_slow_partner(400000, 0, &per_trip, &elapsed);
    CHECK(elapsed >= 399e-3);
    CHECK(per_trip < 25e-3);
}

int main(void) {
    alarm(60);
    test_round_trip();
    test_budget();
    test_late_partner();
    return sb_test_summary();
}
