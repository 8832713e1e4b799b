/*
 * C-level tests of --inner simd: every vector path this CPU has against the scalar reference, row
 * by row and hit count by hit count, on regions chosen to break a vector kernel: lanes escaping at
 * very different steps, points exactly on |z|^2 = 4, overflow to inf and NaN, max-iter around the
 * kernel's block length, widths that are no multiple of any vector width. Paths the CPU lacks are
 * reported as skipped (the binary says which ran).
 */
#include "sb_mandel_emu8.h"
#include "sb_mandelbrot.h"
#include "sb_rng.h"
#include "sb_simd.h"
#include "sb_test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef void (*row_fn)(const sb_params *, int32_t, uint32_t *);
typedef int64_t (*hits_fn)(uint64_t, int64_t, int64_t);

static int rows_equal(row_fn fn, double x0, double x1, double y0, double y1, int32_t width,
                      int32_t height, int32_t max_iter) {
    sb_params p = {.width = width, .height = height, .max_iter = max_iter};
    p.region[0] = x0, p.region[1] = x1, p.region[2] = y0, p.region[3] = y1;
    uint32_t *want = malloc((size_t)width * 4), *got = malloc((size_t)width * 4);
    int same = want && got;
    for (int32_t j = 0; same && j < height; j++) {
        sb_mandel_row(&p, j, want);
        memset(got, 0xff, (size_t)width * 4); /* a pixel the kernel forgets shows up */
        fn(&p, j, got);
        if (memcmp(want, got, (size_t)width * 4) != 0) {
            for (int32_t i = 0; i < width; i++)
                if (want[i] != got[i]) {
                    fprintf(stderr,
                            "  region %g,%g,%g,%g %dx%d max-iter %d: pixel (%d,%d) %u != %u\n", x0,
                            x1, y0, y1, width, height, max_iter, i, j, got[i], want[i]);
                    break;
                }
            same = 0;
        }
    }
    free(want);
    free(got);
    return same;
}

static void test_mandelbrot(row_fn fn) {
    static const int32_t iters[] = {1,  2,  3,  7,  8,  9,  15, 16, 17,  23,
                                    24, 25, 31, 32, 33, 47, 48, 49, 100, 1000};
    /* presets, all widths 1..37 so every lane count and tail occurs */
    for (int32_t w = 1; w <= 37; w++)
        CHECK(rows_equal(fn, -0.75, 0.25, 0.0, 1.0, w, 5, 300));
    for (size_t k = 0; k < sizeof iters / sizeof iters[0]; k++) {
        CHECK(rows_equal(fn, -2.0, 0.5, -1.25, 1.25, 61, 13, iters[k]));
        CHECK(rows_equal(fn, -0.75, 0.25, 0.0, 1.0, 29, 11, iters[k]));
    }
    /* pixel centres exactly on -2, -1, 0, 1, 2 times 2i .. -2i: |z|^2 == 4 exactly (c = -2, 2i),
     * the cusp 0.25, period-2 and -3 points */
    CHECK(rows_equal(fn, -2.5, 2.5, -2.5, 2.5, 5, 5, 1000));
    CHECK(rows_equal(fn, 0.0, 0.5, -0.5, 0.5, 1, 1, 1000));  /* c = 0.25 */
    CHECK(rows_equal(fn, -2.5, -1.5, -0.5, 0.5, 1, 1, 999)); /* c = -2 */
    CHECK(rows_equal(fn, 1.5, 2.5, -0.5, 0.5, 1, 1, 10));    /* c = 2: z1 = 2 */
    /* orbits that stay near |z| = 2 for many steps before they escape or not (c around -2 and on
     * the circle |c| = 2): the block test relies on an escaped orbit staying outside the disc */
    CHECK(rows_equal(fn, -2.0000001, -1.9999999, -1e-7, 1e-7, 37, 9, 5000));
    CHECK(rows_equal(fn, -2.0 - 1e-12, -2.0 + 1e-12, -1e-12, 1e-12, 31, 7, 3000));
    CHECK(rows_equal(fn, 1.4142134, 1.4142138, 1.4142134, 1.4142138, 29, 7, 200));
    CHECK(rows_equal(fn, -1e-7, 1e-7, 1.9999999, 2.0000001, 29, 7, 200));
    /* lanes ending thousands of steps apart: a thin strip across the boundary */
    CHECK(rows_equal(fn, -0.7454, -0.7452, 0.1130, 0.1132, 41, 7, 20000));
    CHECK(rows_equal(fn, -1.7690, -1.7680, -0.0005, 0.0005, 33, 5, 5000));
    /* overflow: |c|^2 = inf, inf - inf = NaN, infinite and NaN regions */
    CHECK(rows_equal(fn, -1e300, 1e300, -1e300, 1e300, 23, 3, 100));
    CHECK(rows_equal(fn, -1e308, 1e308, -1e308, 1e308, 19, 3, 100));
    CHECK(rows_equal(fn, -1e154, 1e154, -1e154, 1e154, 19, 3, 50));
    CHECK(rows_equal(fn, -INFINITY, INFINITY, -1.0, 1.0, 9, 3, 20));
    CHECK(rows_equal(fn, NAN, 1.0, -1.0, 1.0, 9, 3, 20));
    CHECK(rows_equal(fn, -2.0, 0.5, NAN, 1.0, 9, 3, 20));
    /* random regions, sizes and limits */
    srand(12345);
    for (int t = 0; t < 300; t++) {
        double cx = 4.0 * rand() / RAND_MAX - 2.5, cy = 3.0 * rand() / RAND_MAX - 1.5;
        double h = pow(10.0, -6.0 * rand() / RAND_MAX);
        CHECK(rows_equal(fn, cx - h, cx + h, cy - h, cy + h, 1 + rand() % 50, 1 + rand() % 4,
                         1 + rand() % 3000));
    }
}

static void test_pi(hits_fn fn) {
    static const uint64_t seeds[] = {0, 1, 99, UINT64_C(0xffffffffffffffff), UINT64_C(1) << 63};
    for (size_t s = 0; s < sizeof seeds / sizeof seeds[0]; s++)
        for (int64_t begin = 0; begin < 20; begin += 3)
            for (int64_t len = 0; len < 70; len += 7) {
                int64_t want = sb_pi_count_hits(seeds[s], begin, begin + len);
                int64_t got = fn(seeds[s], begin, begin + len);
                if (want != got)
                    fprintf(stderr, "  pi seed %llu [%lld, %lld): %lld != %lld\n",
                            (unsigned long long)seeds[s], (long long)begin,
                            (long long)(begin + len), (long long)got, (long long)want);
                CHECK(want == got);
            }
    /* long ranges, and a start near the top of the counter range */
    CHECK(fn(42, 0, 1000003) == sb_pi_count_hits(42, 0, 1000003));
    CHECK(fn(7, (INT64_C(1) << 62) - 1000, (INT64_C(1) << 62) + 12345) ==
          sb_pi_count_hits(7, (INT64_C(1) << 62) - 1000, (INT64_C(1) << 62) + 12345));
}

int main(void) {
    static const struct {
        int32_t path;
        row_fn row;
        hits_fn hits;
    } paths[] = {{SB_PATH_AVX2, sb_mandel_row_avx2, sb_pi_hits_avx2},
                 {SB_PATH_AVX512, sb_mandel_row_avx512, sb_pi_hits_avx512}};
    for (size_t k = 0; k < sizeof paths / sizeof paths[0]; k++) {
        const char *name = sb_inner_path_name(paths[k].path);
        if (!sb_cpu_supports_path(paths[k].path)) {
            printf("SKIP %s: this CPU does not have it\n", name);
            continue;
        }
        printf("testing %s\n", name);
        test_mandelbrot(paths[k].row);
        test_pi(paths[k].hits);
    }
    /* the shared body with 8 lanes (what the AVX-512 path runs), emulated with AVX2 */
#ifdef SB_HAVE_EMU8
    if (sb_cpu_supports_path(SB_PATH_AVX2)) {
        printf("testing the Mandelbrot body with 8 lanes emulated by AVX2\n");
        test_mandelbrot(sb_mandel_row_emu8);
        printf("testing it with escaped lanes refilled one block late\n");
        test_mandelbrot(sb_mandel_row_emu8_late);
    }
#endif
    /* the dispatcher: scalar on request, else the best path */
    sb_params p = {.inner = SB_INNER_SCALAR};
    CHECK(sb_inner_path(&p) == SB_PATH_SCALAR);
    p.inner = SB_INNER_SIMD;
    CHECK(sb_inner_path(&p) == sb_cpu_best_path());
    CHECK(sb_cpu_supports_path(sb_cpu_best_path()));
    return sb_test_summary();
}
