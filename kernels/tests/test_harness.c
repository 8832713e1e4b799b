/* C-level tests of the harness: checksum and RNG test vectors, option parser, work queue, PGM, the
 * lock-wait estimate. */
#define _GNU_SOURCE
#include "sb_checksum.h"
#include "sb_descriptors.h"
#include "sb_internal.h"
#include "sb_options.h"
#include "sb_pgm.h"
#include "sb_rng.h"
#include "sb_test.h"
#include "sb_threads.h"
#include "sb_workqueue.h"

#include <pthread.h>
#include <time.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The descriptors' field sets the kernels use (sb_descriptors.h), so these tests parse against the
 * very schedule/sync tables the binaries accept. */
static const sb_kernel_desc mandel_pthreads = {
    SB_DESC_PTHREADS("mandelbrot", SB_KERNEL_MANDELBROT),
    .lang = "c",
    .chunk_schedules = SB_BIT(SB_SCHED_CYCLIC) | SB_BIT(SB_SCHED_QUEUE),
};

static const sb_kernel_desc mcpi_serial = {SB_DESC_SERIAL("mcpi", SB_KERNEL_MCPI), .lang = "c"};

static const sb_kernel_desc mandel_omp = {SB_DESC_MANDELBROT_OMP, .lang = "c"};

static char err[512];
static sb_cli cli;

/* Parses a space-separated argument string (no quoting needed by these tests). */
static int parse(const sb_kernel_desc *d, const char *args) {
    char buf[1024];
    char *argv[64];
    int argc = 0;
    snprintf(buf, sizeof buf, "%s", args);
    argv[argc++] = "prog";
    for (char *tok = strtok(buf, " "); tok && argc < 63; tok = strtok(NULL, " "))
        argv[argc++] = tok;
    argv[argc] = NULL;
    err[0] = '\0';
    return sb_parse_options(d, argc, argv, &cli, err, sizeof err);
}

static int error_is(const sb_kernel_desc *d, const char *args, const char *expected) {
    int rc = parse(d, args);
    int ok = rc == SB_PARSE_ERROR && strcmp(err, expected) == 0;
    if (!ok)
        fprintf(stderr, "  parse('%s') -> rc %d, err '%s', expected '%s'\n", args, rc, err,
                expected);
    return ok;
}

static int error_contains(const sb_kernel_desc *d, const char *args, const char *a, const char *b) {
    int rc = parse(d, args);
    int ok = rc == SB_PARSE_ERROR && strstr(err, a) && strstr(err, b);
    if (!ok)
        fprintf(stderr, "  parse('%s') -> rc %d, err '%s', expected '%s' and '%s'\n", args, rc, err,
                a, b);
    return ok;
}

static void test_fnv1a64(void) {
    /* published FNV-1a 64 test vectors (Fowler/Noll/Vo reference test suite) */
    CHECK(sb_fnv1a64_bytes(SB_FNV_OFFSET, "", 0) == UINT64_C(0xcbf29ce484222325));
    CHECK(sb_fnv1a64_bytes(SB_FNV_OFFSET, "a", 1) == UINT64_C(0xaf63dc4c8601ec8c));
    CHECK(sb_fnv1a64_bytes(SB_FNV_OFFSET, "foobar", 6) == UINT64_C(0x85944171f73967e8));
    /* the uint32/uint64 forms hash little-endian bytes */
    uint32_t abcd = 0x64636261u; /* 'a' 'b' 'c' 'd' in little-endian order */
    CHECK(sb_fnv1a64_u32le(&abcd, 1) == sb_fnv1a64_bytes(SB_FNV_OFFSET, "abcd", 4));
    CHECK(sb_fnv1a64_u64le(UINT64_C(0x7261626f6f66)) ==
          sb_fnv1a64_bytes(SB_FNV_OFFSET, "foobar\0\0", 8));
}

static void test_splitmix64(void) {
    /* SplitMix64 seeded with 0: published first outputs */
    CHECK(sb_splitmix64_at(0, 0) == UINT64_C(0xe220a8397b1dcdaf));
    CHECK(sb_splitmix64_at(0, 1) == UINT64_C(0x6e789e6aa1b965f4));
    CHECK(sb_splitmix64_at(0, 2) == UINT64_C(0x06c45d188009454f));
    /* seed s, output n equals seed s + gamma, output n - 1: one stream, any start */
    CHECK(sb_splitmix64_at(12345, 7) == sb_splitmix64_at(12345 + SB_SPLITMIX_GAMMA, 6));
    CHECK(sb_unit_double(UINT64_MAX) == 1.0 - 0x1.0p-53);
    CHECK(sb_unit_double(0) == 0.0);
    /* hit counting is additive over ranges, the property every threaded model relies on */
    CHECK(sb_pi_count_hits(42, 0, 1000) ==
          sb_pi_count_hits(42, 0, 337) + sb_pi_count_hits(42, 337, 1000));
}

/* Every enum value has a name that maps back to it (a missing name would be NULL). */
static void test_names_round_trip(void) {
    for (int32_t i = 0; i < SB_SCHED_COUNT; i++)
        CHECK(sb_schedule_name(i) != NULL && sb_schedule_from_name(sb_schedule_name(i)) == i);
    for (int32_t i = 0; i < SB_SYNC_COUNT; i++)
        CHECK(sb_sync_name(i) != NULL && sb_sync_from_name(sb_sync_name(i)) == i);
    CHECK(sb_schedule_from_name("bogus") == -1 && sb_sync_from_name("") == -1);
}

static void test_options_valid(void) {
    CHECK(parse(&mandel_pthreads, "") == SB_PARSE_OK);
    CHECK(cli.p.threads == 1 && cli.p.reps == 1 && cli.p.warmup == 0);
    CHECK(cli.p.schedule == SB_SCHED_BLOCK && cli.p.sync == SB_SYNC_NONE);
    CHECK(cli.p.region[0] == -2.0 && cli.p.region[3] == 1.25 &&
          cli.p.preset == SB_PRESET_SYMMETRIC);
    CHECK(strcmp(cli.schedule_text, "block") == 0);

    CHECK(parse(&mandel_pthreads, "--threads 8 --schedule queue,4 --sync atomic --reps 3 "
                                  "--warmup 2") == SB_PARSE_OK);
    CHECK(cli.p.threads == 8 && cli.p.schedule == SB_SCHED_QUEUE && cli.p.chunk == 4);
    CHECK(cli.p.sync == SB_SYNC_ATOMIC && cli.p.reps == 3 && cli.p.warmup == 2);
    CHECK(strcmp(cli.schedule_text, "queue,4") == 0);

    CHECK(parse(&mandel_pthreads, "--threads=16 --width=10 --height=20 --max-iter=7") ==
          SB_PARSE_OK);
    CHECK(cli.p.threads == 16 && cli.p.width == 10 && cli.p.height == 20 && cli.p.max_iter == 7);

    CHECK(parse(&mandel_pthreads, "--preset asymmetric") == SB_PARSE_OK);
    CHECK(cli.p.preset == SB_PRESET_ASYMMETRIC && cli.p.region[0] == -0.75 &&
          cli.p.region[1] == 0.25 && cli.p.region[2] == 0.0 && cli.p.region[3] == 1.0);
    /* --region overrides --preset in either order */
    CHECK(parse(&mandel_pthreads, "--region -1,1,-0.5,0.5 --preset asymmetric") == SB_PARSE_OK);
    CHECK(cli.p.preset == SB_PRESET_CUSTOM && cli.p.region[0] == -1.0 && cli.p.region[3] == 0.5);
    CHECK(parse(&mandel_pthreads, "--preset asymmetric --region -1,1,-0.5,0.5") == SB_PARSE_OK);
    CHECK(cli.p.preset == SB_PRESET_CUSTOM && cli.p.region[1] == 1.0);

    CHECK(parse(&mcpi_serial, "--seed 0xffffffffffffffff --samples 1000 --batch 1") == SB_PARSE_OK);
    CHECK((uint64_t)cli.p.seed == UINT64_MAX && cli.p.samples == 1000 && cli.p.batch == 1);
    CHECK(parse(&mcpi_serial, "--threads 1 --schedule none --sync none") == SB_PARSE_OK);
    CHECK(parse(&mandel_omp, "--schedule guided,3") == SB_PARSE_OK);
    CHECK(cli.p.schedule == SB_SCHED_GUIDED && cli.p.chunk == 3);
    CHECK(parse(&mandel_omp, "--help") == SB_PARSE_HELP);
    CHECK(parse(&mandel_omp, "--threads 0 --help") == SB_PARSE_ERROR);
}

static void test_options_errors(void) {
    const sb_kernel_desc *m = &mandel_pthreads;
    CHECK(error_is(m, "--threads 0", "--threads: '0' is out of range (1..4096)"));
    CHECK(error_is(m, "--threads 4097", "--threads: '4097' is out of range (1..4096)"));
    CHECK(error_is(m, "--threads 99999999999999999999",
                   "--threads: '99999999999999999999' is out of range (1..4096)"));
    CHECK(error_is(m, "--threads 2x", "--threads: '2x' is not an integer"));
    CHECK(error_is(m, "--threads", "--threads: missing value"));
    CHECK(error_is(m, "--max-iter 0", "--max-iter: '0' is out of range (1..2147483647)"));
    CHECK(error_is(m, "--bogus 3", "unknown option '--bogus' (see --help)"));
    CHECK(error_is(m, "stray", "unexpected argument 'stray' (see --help)"));
    CHECK(error_is(m, "--region 1,0,0,1",
                   "--region: '1,0,0,1' is empty or inverted (need x0 < x1 and y0 < y1)"));
    CHECK(error_contains(m, "--region 0,1,1,1", "--region", "'0,1,1,1'"));
    CHECK(error_contains(m, "--region 0,1,2", "--region", "not four finite numbers"));
    CHECK(error_contains(m, "--region 0,1,2,nan", "--region", "'0,1,2,nan'"));
    CHECK(error_contains(m, "--width 100000 --height 100000", "--width: '100000'",
                         "--height '100000'"));
    CHECK(error_contains(m, "--schedule queue --sync none", "--sync: 'none'", "queue"));
    CHECK(error_contains(m, "--sync none --schedule queue", "--sync: 'none'", "queue"));
    CHECK(error_contains(m, "--schedule block,4", "--schedule: 'block,4'", "takes no chunk"));
    CHECK(error_contains(m, "--schedule cyclic,0", "--schedule: 'cyclic,0'", "bad chunk"));
    CHECK(error_contains(m, "--schedule dynamic", "--schedule: 'dynamic'", "block|cyclic|queue"));
    CHECK(error_contains(m, "--sync reduction", "--sync: 'reduction'", "not supported"));
    CHECK(error_contains(m, "--preset lopsided", "--preset: 'lopsided'", "symmetric|asymmetric"));
    CHECK(error_contains(m, "--inner simd", "--inner: 'simd'", "scalar"));
    CHECK(error_contains(&mandel_omp, "--sync coarse", "--sync: 'coarse'", "supports none"));
    CHECK(error_contains(&mandel_omp, "--schedule queue", "--schedule: 'queue'",
                         "static|dynamic|guided"));
    CHECK(error_is(&mcpi_serial, "--threads 2", "--threads: '2' is out of range (1..1)"));
    CHECK(error_is(&mcpi_serial, "--samples 0",
                   "--samples: '0' is out of range (1..4611686018427387904)"));
    CHECK(error_contains(&mcpi_serial, "--seed -1", "--seed: '-1'", "unsigned"));
    CHECK(error_contains(&mcpi_serial, "--seed 18446744073709551616", "--seed", "out of range"));
    CHECK(error_is(&mcpi_serial, "--width 5", "unknown option '--width' (see --help)"));
    CHECK(error_is(m, "--samples 5", "unknown option '--samples' (see --help)"));
}

/* Every unit is handed out exactly once, whatever the schedule and sync (workers interleaved). */
static void test_workqueue(void) {
    const int32_t schedules[] = {SB_SCHED_BLOCK, SB_SCHED_CYCLIC, SB_SCHED_QUEUE};
    const int32_t syncs[] = {SB_SYNC_NONE, SB_SYNC_COARSE, SB_SYNC_FINE, SB_SYNC_ATOMIC};
    const int32_t workers[] = {1, 3, 7, 40};
    const int64_t nunits = 29;
    for (size_t a = 0; a < 3; a++)
        for (size_t b = 0; b < 4; b++)
            for (size_t c = 0; c < 4; c++)
                for (int64_t chunk = 1; chunk <= 4; chunk += 3) {
                    if (schedules[a] == SB_SCHED_QUEUE && syncs[b] == SB_SYNC_NONE)
                        continue;
                    int32_t nw = workers[c];
                    sb_queue q;
                    CHECK(sb_queue_init(&q, schedules[a], syncs[b], nunits, chunk, nw) == 0);
                    sb_queue_cursor cur[40];
                    for (int32_t w = 0; w < nw; w++)
                        sb_queue_cursor_init(&cur[w], &q, w);
                    int seen[29] = {0};
                    int active = nw, bad = 0;
                    /* round-robin with worker 0 taking 2 turns, so stealing happens */
                    while (active > 0) {
                        active = 0;
                        for (int32_t w = 0; w < nw; w++)
                            for (int turn = 0; turn < (w == 0 ? 2 : 1); turn++) {
                                int64_t lo, hi;
                                if (!sb_queue_next(&q, &cur[w], &lo, &hi))
                                    continue;
                                active++;
                                bad |= lo < 0 || hi > nunits || lo >= hi;
                                for (int64_t u = lo; u < hi && !bad; u++)
                                    seen[u]++;
                            }
                    }
                    int once = !bad;
                    for (int64_t u = 0; u < nunits; u++)
                        once &= seen[u] == 1;
                    if (!once)
                        fprintf(stderr, "  queue schedule %d sync %d workers %d chunk %lld\n",
                                (int)schedules[a], (int)syncs[b], (int)nw, (long long)chunk);
                    CHECK(once);
                    sb_queue_destroy(&q);
                }
}

static void test_pgm(void) {
    char dir[] = "/tmp/sb-test-pgm-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char path[256];
    snprintf(path, sizeof path, "%s/img.pgm", dir);
    CHECK(sb_pgm_check_writable(path, err, sizeof err) == 0);
    CHECK(access(path, F_OK) != 0); /* the check leaves nothing behind */
    const uint32_t counts[6] = {0, 1, 255, 256, 65535, 70000};
    CHECK(sb_pgm_write(path, counts, 3, 2, err, sizeof err) == 0);
    FILE *f = fopen(path, "rb");
    unsigned char buf[64];
    size_t n = f ? fread(buf, 1, sizeof buf, f) : 0;
    if (f)
        fclose(f);
    const char header[] = "P5\n3 2\n65535\n";
    const unsigned char pixels[12] = {0, 0, 0, 1, 0, 255, 1, 0, 255, 255, 255, 255};
    CHECK(n == strlen(header) + 12);
    CHECK(memcmp(buf, header, strlen(header)) == 0);
    CHECK(memcmp(buf + strlen(header), pixels, 12) == 0);
    unlink(path);
    CHECK(rmdir(dir) == 0); /* no temp file left behind */
    CHECK(sb_pgm_check_writable("/nonexistent-dir/x.pgm", err, sizeof err) != 0);
    CHECK(strstr(err, "--dump: '/nonexistent-dir/x.pgm'") != NULL);
    CHECK(sb_pgm_check_writable("/tmp", err, sizeof err) != 0);
    CHECK(strstr(err, "is a directory") != NULL);
}

/* A mutex held by another thread for HOLD_S: the worker's wait on it is timed (its first
 * acquisitions always are); the same mutex free costs no wait, however often it is taken. */
#define HOLD_S 0.03
static pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t locked;

static void *hold(void *unused) {
    (void)unused;
    pthread_mutex_lock(&held);
    pthread_barrier_wait(&locked);
    nanosleep(&(struct timespec){0, (long)(HOLD_S * 1e9)}, NULL);
    pthread_mutex_unlock(&held);
    return NULL;
}

/* The queue times its locks through the function sb_queue_lock_with sets (the kernels time the
 * waits there): each acquisition the countdown picks, here all of them (the countdown is set to 1),
 * once per group taken under coarse, per slot visited under fine, never without locks. */
static int hook_calls;
static sb_lock_sampler counting_lock(void *arg, int32_t worker, sb_lock_sampler s,
                                     pthread_mutex_t *mutex) {
    (void)arg;
    (void)worker;
    hook_calls++;
    pthread_mutex_lock(mutex);
    s.gap = 1;
    return s;
}

static void test_queue_lock_hook(void) {
    const int32_t syncs[] = {SB_SYNC_COARSE, SB_SYNC_FINE, SB_SYNC_ATOMIC};
    for (int k = 0; k < 3; k++) {
        sb_queue q;
        CHECK(sb_queue_init(&q, SB_SCHED_QUEUE, syncs[k], 10, 1, 2) == 0);
        sb_queue_lock_with(&q, counting_lock, NULL);
        sb_queue_cursor c;
        sb_queue_cursor_init(&c, &q, 0);
        hook_calls = 0;
        int64_t lo, hi, taken = 0;
        while (sb_queue_next(&q, &c, &lo, &hi))
            taken += hi - lo;
        CHECK(taken == 10);
        /* coarse: 10 groups + the last, empty try; fine: its own slot's 5 groups (one lock each),
         * 5 stolen (its empty slot, then the other: two each), the last try (both slots empty) */
        CHECK(hook_calls == (syncs[k] == SB_SYNC_COARSE ? 11 : syncs[k] == SB_SYNC_FINE ? 17 : 0));
        sb_queue_destroy(&q);
    }
}

/* The timed acquisitions among a worker's stream of uncontended ones, counted by a timed function
 * that passes them on to sb_lock_timed. */
static int timed_calls, timed_even;
static int64_t acquisition;
static sb_lock_sampler counting_timed(void *ctx, int32_t worker, sb_lock_sampler s,
                                      pthread_mutex_t *mutex) {
    timed_calls++;
    timed_even += acquisition % 2 == 0;
    return sb_lock_timed(ctx, worker, s, mutex);
}

static sb_ctx two_workers(void) {
    CHECK(parse(&mandel_pthreads, "--threads 2 --width 4 --height 4") == SB_PARSE_OK);
    sb_ctx ctx;
    CHECK(sb_ctx_init(&ctx, &mandel_pthreads, &cli) == 0);
    return ctx;
}

/* The sampling of lock waits: the first SB_LOCK_TIMED_FIRST acquisitions of a stream timed, then
 * each with chance 1/SB_LOCK_SAMPLE_EVERY, independently of its neighbours (no period: as many on
 * even as on odd ones), from the stream a worker's share starts with (sb_worker_locks_start). */
static void test_lock_wait_sampling(void) {
    sb_ctx ctx = two_workers();
    sb_lock_sampler locks = sb_worker_locks_start(&ctx);
    timed_calls = 0;
    for (acquisition = 0; acquisition < SB_LOCK_TIMED_FIRST; acquisition++) {
        sb_lock_sampled(&locks, counting_timed, &ctx, 1, &held);
        pthread_mutex_unlock(&held);
    }
    CHECK(timed_calls == SB_LOCK_TIMED_FIRST);
    const int64_t expected = 10000, n = expected * SB_LOCK_SAMPLE_EVERY;
    timed_calls = timed_even = 0;
    for (acquisition = 0; acquisition < n; acquisition++) {
        sb_lock_sampled(&locks, counting_timed, &ctx, 1, &held);
        pthread_mutex_unlock(&held);
    }
    /* 10000 expected, standard deviation ~100: within 5 of them (the draws are seeded: no
     * flakiness) */
    CHECK(timed_calls > expected - 500 && timed_calls < expected + 500);
    CHECK(2 * timed_even > timed_calls - 5 * 100 && 2 * timed_even < timed_calls + 5 * 100);
    CHECK(ctx.workers[1].wait_s == 0.0); /* uncontended: no wait, however often timed */
    sb_ctx_free(&ctx);
}

/* A loop that counts off the untimed acquisitions at once (sb_lock_untimed_run, in runs of
 * irregular length as ranges of units are) times the same acquisitions as one that decrements the
 * countdown on each (two contexts: the same draws). */
static int64_t timed_at[256];
static int timed_count;
static sb_lock_sampler recording_timed(void *ctx, int32_t worker, sb_lock_sampler s,
                                       pthread_mutex_t *mutex) {
    if (timed_count < 256)
        timed_at[timed_count] = acquisition;
    timed_count++;
    return sb_lock_timed(ctx, worker, s, mutex);
}

static void test_lock_untimed_runs(void) {
    enum { N = 40000 };
    int64_t each[256];
    int each_count;
    for (int by_runs = 0; by_runs < 2; by_runs++) {
        sb_ctx ctx = two_workers();
        sb_lock_sampler locks = sb_worker_locks_start(&ctx);
        timed_count = 0;
        for (acquisition = 0; acquisition < N;) {
            const int64_t end = acquisition + 1 + acquisition % 7 * 13; /* a range of units */
            while (acquisition < end && acquisition < N) {
                const int64_t plain = by_runs ? sb_lock_untimed_run(&locks, end - acquisition) : 0;
                acquisition += plain; /* taken plainly: nothing to record */
                if (acquisition < end) {
                    sb_lock_sampled(&locks, recording_timed, &ctx, 1, &held);
                    pthread_mutex_unlock(&held);
                    acquisition++;
                }
            }
        }
        if (!by_runs) {
            memcpy(each, timed_at, sizeof each);
            each_count = timed_count;
        }
        sb_ctx_free(&ctx);
    }
    /* the first 64, then ~N/512 more */
    CHECK(each_count > SB_LOCK_TIMED_FIRST + 40 && each_count < 256);
    CHECK(timed_count == each_count && memcmp(timed_at, each, sizeof each) == 0);
}

/* One worker has nobody to wait for: its stream is never timed, whatever the number of
 * acquisitions. */
static void test_lock_wait_one_worker(void) {
    CHECK(parse(&mandel_pthreads, "--threads 1 --width 4 --height 4") == SB_PARSE_OK);
    sb_ctx ctx;
    CHECK(sb_ctx_init(&ctx, &mandel_pthreads, &cli) == 0);
    sb_lock_sampler locks = sb_worker_locks_start(&ctx);
    timed_calls = 0;
    for (int i = 0; i < 1000; i++) {
        sb_lock_sampled(&locks, counting_timed, &ctx, 0, &held);
        pthread_mutex_unlock(&held);
    }
    CHECK(timed_calls == 0 && ctx.workers[0].wait_s == 0.0);
    sb_ctx_free(&ctx);
}

/* Locks are timed only where there is somebody to wait for: on two workers, not on one (the
 * kernels' locks and the queue's alike). */
static void test_locks_timed_from_two_workers(void) {
    for (int32_t threads = 1; threads <= 2; threads++) {
        char args[64];
        snprintf(args, sizeof args, "--threads %d --width 4 --height 4", (int)threads);
        CHECK(parse(&mandel_pthreads, args) == SB_PARSE_OK);
        sb_ctx ctx;
        CHECK(sb_ctx_init(&ctx, &mandel_pthreads, &cli) == 0);
        sb_queue q;
        CHECK(sb_queue_init(&q, SB_SCHED_QUEUE, SB_SYNC_COARSE, 10, 1, threads) == 0);
        sb_queue_time_waits(&q, &ctx);
        CHECK((q.lock_timed != NULL) == (threads > 1));
        const sb_lock_sampler locks = sb_worker_locks_start(&ctx);
        CHECK((locks.gap == 0) == (threads > 1) && (locks.gap == INT64_MAX) == (threads == 1));
        sb_queue_destroy(&q);
        sb_ctx_free(&ctx);
    }
}

/* A wait on a held mutex: (1) counted once when the acquisition is one of the first, (2) counted
 * SB_LOCK_SAMPLE_EVERY times when it is a sampled one after them (the Horvitz-Thompson weight). */
static double timed_wait_on_held(sb_ctx *ctx, int32_t worker, sb_lock_sampler locks) {
    pthread_t holder;
    CHECK(pthread_barrier_init(&locked, NULL, 2) == 0);
    CHECK(pthread_create(&holder, NULL, hold, NULL) == 0);
    pthread_barrier_wait(&locked);
    const double before = ctx->workers[worker].wait_s;
    sb_worker_lock(ctx, worker, &locks, &held);
    pthread_mutex_unlock(&held);
    pthread_join(holder, NULL);
    pthread_barrier_destroy(&locked);
    return ctx->workers[worker].wait_s - before;
}

static void test_lock_wait(void) {
    sb_ctx ctx = two_workers();
    sb_lock_sampler locks = sb_worker_locks_start(&ctx);
    for (int i = 0; i < 100000; i++) { /* uncontended: sampled or not, no wait */
        sb_worker_lock(&ctx, 0, &locks, &held);
        pthread_mutex_unlock(&held);
    }
    CHECK(ctx.workers[0].wait_s == 0.0);
    /* worker 1's first acquisition: timed, weight 1 */
    const double first = timed_wait_on_held(&ctx, 1, sb_worker_locks_start(&ctx));
    CHECK(first > 0.5 * HOLD_S && first < 2.0);
    /* the next one timed after the first SB_LOCK_TIMED_FIRST: weight SB_LOCK_SAMPLE_EVERY */
    const double sampled =
        timed_wait_on_held(&ctx, 1, (sb_lock_sampler){.gap = 1, .first = SB_LOCK_TIMED_FIRST});
    CHECK(sampled > 0.5 * HOLD_S * SB_LOCK_SAMPLE_EVERY && sampled < 2.0 * SB_LOCK_SAMPLE_EVERY);
    sb_ctx_free(&ctx);
}

int main(void) {
    test_fnv1a64();
    test_splitmix64();
    test_names_round_trip();
    test_options_valid();
    test_options_errors();
    test_workqueue();
    test_pgm();
    test_queue_lock_hook();
    test_lock_wait_sampling();
    test_lock_untimed_runs();
    test_lock_wait();
    test_lock_wait_one_worker();
    test_locks_timed_from_two_workers();
    return sb_test_summary();
}
