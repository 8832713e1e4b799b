/* C-level tests of sb_wait.c: the spin-then-sleep wait, the barrier, --wait-policy's parsing and
 * auto's resolution. A lost wake-up hangs: the alarm turns that into a failure. */
#define _GNU_SOURCE
#include "sb_test.h"
#include "sb_wait.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static void test_parse_and_resolve(void) {
    const char *names[] = {"auto", "spin", "sleep"};
    for (int32_t k = 0; k < SB_WAIT_POLICY_COUNT; k++) {
        int32_t got = -1;
        char err[160] = "";
        CHECK(sb_wait_parse(names[k], &got, err, sizeof err) == 0 && got == k);
        CHECK(strcmp(sb_wait_policy_name(k), names[k]) == 0);
    }
    const char *bad[] = {"", "active", "SPIN", "spin ", "sleepy"};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        int32_t got = 7;
        char err[160] = "";
        CHECK(sb_wait_parse(bad[k], &got, err, sizeof err) == -1 && got == 7);
        CHECK(strstr(err, "--wait-policy") != NULL && strstr(err, bad[k]) != NULL);
    }
    CHECK(sb_wait_resolve(SB_WAIT_AUTO, 2, 2) == SB_WAIT_SPIN);
    CHECK(sb_wait_resolve(SB_WAIT_AUTO, 3, 2) == SB_WAIT_SLEEP);
    CHECK(sb_wait_resolve(SB_WAIT_AUTO, 4096, 2) == SB_WAIT_SLEEP);
    CHECK(sb_wait_resolve(SB_WAIT_SPIN, 4096, 2) == SB_WAIT_SPIN);
    CHECK(sb_wait_resolve(SB_WAIT_SLEEP, 1, 64) == SB_WAIT_SLEEP);
    CHECK(sb_wait_spin_limit(SB_WAIT_SPIN) == SB_SPIN_FOREVER);
    CHECK(sb_wait_spin_limit(SB_WAIT_SLEEP) == 0);
    CHECK(sb_wait_allowed_cpus() >= 1);
}

/* The waiter spins up to its limit and then sleeps; the waker looks at `sleepers` before it
 * changes the word, 50 ms later. */
typedef struct {
    sb_wait_word word;
    int64_t limit, spun;
} waiter_arg;

static void *waiter(void *p) {
    waiter_arg *a = p;
    a->spun = sb_wait_while_equal(&a->word, 0, a->limit);
    return NULL;
}

static void test_spin_limit(void) {
    const int64_t limits[] = {0, 1000, SB_SPIN_FOREVER};
    for (int k = 0; k < 3; k++) {
        waiter_arg a = {.limit = limits[k]};
        pthread_t t;
        CHECK(pthread_create(&t, NULL, waiter, &a) == 0);
        sleep_ms(50);
        const uint32_t sleeping = atomic_load(&a.word.sleepers);
        sb_wait_store_wake(&a.word, 1);
        pthread_join(t, NULL);
        if (limits[k] == SB_SPIN_FOREVER) {
            CHECK(sleeping == 0); /* still spinning after 50 ms */
            CHECK(a.spun > 1000);
        } else {
            CHECK(sleeping == 1); /* gave up spinning and sleeps */
            CHECK(a.spun == limits[k]);
        }
        CHECK(atomic_load(&a.word.sleepers) == 0);
    }
}

/* Two threads hand a token back and forth, each sleeping at once (limit 0) or spinning briefly:
 * a lost wake-up leaves both asleep (the alarm fails the test). */
typedef struct {
    sb_wait_word word;
    int32_t rounds;
    int64_t limit;
} pingpong_arg;

static void *pong(void *p) {
    pingpong_arg *a = p;
    for (uint32_t r = 0; r < (uint32_t)a->rounds; r++) {
        sb_wait_while_equal(&a->word, 2 * r, a->limit); /* wait for ping 2r+1 */
        sb_wait_store_wake(&a->word, 2 * r + 2);
    }
    return NULL;
}

static void test_no_lost_wakeup(void) {
    const int64_t limits[] = {0, 50};
    for (int k = 0; k < 2; k++) {
        pingpong_arg a = {.rounds = 20000, .limit = limits[k]};
        pthread_t t;
        CHECK(pthread_create(&t, NULL, pong, &a) == 0);
        for (uint32_t r = 0; r < (uint32_t)a.rounds; r++) {
            sb_wait_store_wake(&a.word, 2 * r + 1);
            sb_wait_while_equal(&a.word, 2 * r + 1, a.limit);
        }
        pthread_join(t, NULL);
        CHECK(atomic_load(&a.word.value) == 2 * (uint32_t)a.rounds);
    }
}

/* Every worker adds 1 to the generation's counter before the barrier and checks after it that all
 * did: nobody leaves a generation early, nobody is counted twice, one leader per generation. */
#define GENERATIONS 3000
typedef struct {
    sb_barrier barrier;
    int32_t workers;
    _Atomic int32_t arrived[GENERATIONS];
    _Atomic int32_t leaders[GENERATIONS];
    _Atomic int32_t early;
} barrier_arg;

static void *barrier_worker(void *p) {
    barrier_arg *a = p;
    for (int g = 0; g < GENERATIONS; g++) {
        atomic_fetch_add(&a->arrived[g], 1);
        if (sb_barrier_wait(&a->barrier))
            atomic_fetch_add(&a->leaders[g], 1);
        if (atomic_load(&a->arrived[g]) != a->workers)
            atomic_fetch_add(&a->early, 1);
    }
    return NULL;
}

static void run_barrier(int32_t workers, int64_t limit, int generations) {
    barrier_arg *a = calloc(1, sizeof *a);
    a->workers = workers;
    sb_barrier_init(&a->barrier, (uint32_t)workers, limit);
    pthread_t *t = calloc((size_t)workers, sizeof *t);
    for (int32_t w = 0; w < workers; w++)
        CHECK(pthread_create(&t[w], NULL, barrier_worker, a) == 0);
    for (int32_t w = 0; w < workers; w++)
        pthread_join(t[w], NULL);
    int wrong = 0;
    for (int g = 0; g < generations; g++)
        wrong += atomic_load(&a->arrived[g]) != workers || atomic_load(&a->leaders[g]) != 1;
    CHECK(wrong == 0);
    CHECK(atomic_load(&a->early) == 0);
    free(t);
    free(a);
}

static void test_barrier(void) {
    const int32_t cpus = sb_wait_allowed_cpus();
    run_barrier(2, SB_SPIN_FOREVER, GENERATIONS); /* spin, workers fit (2 vCPUs or more) */
    run_barrier(cpus, sb_wait_spin_limit(sb_wait_resolve(SB_WAIT_AUTO, cpus, cpus)), GENERATIONS);
    /* oversubscribed: auto sleeps, and many sleeping workers still meet every generation */
    const int32_t many = 8 * cpus + 1;
    CHECK(sb_wait_resolve(SB_WAIT_AUTO, many, cpus) == SB_WAIT_SLEEP);
    run_barrier(many, sb_wait_spin_limit(sb_wait_resolve(SB_WAIT_AUTO, many, cpus)), GENERATIONS);
    run_barrier(5, 100, GENERATIONS); /* spin a little, then sleep */
}

int main(void) {
    alarm(240);
    test_parse_and_resolve();
    test_spin_limit();
    test_no_lost_wakeup();
    test_barrier();
    return sb_test_summary();
}
