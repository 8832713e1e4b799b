/*
 * The Mandelbrot pixel, the definition every kernel and test follows: pixel centres, this
 * operation order, no FMA (built -ffp-contract=off), so every model and language yields the same
 * counts bit for bit.
 */
#ifndef SB_MANDELBROT_H
#define SB_MANDELBROT_H

#include "harness.h"

#include <stddef.h>
#include <stdint.h>

static inline uint32_t sb_mandel_count(double cx, double cy, int32_t max_iter) {
    double x = 0.0, y = 0.0;
    int32_t n = 0;
    while (n < max_iter && x * x + y * y <= 4.0) {
        double xt = (x * x - y * y) + cx;
        y = ((2.0 * x) * y) + cy;
        x = xt;
        n = n + 1;
    }
    return (uint32_t)n;
}

/* Computes row j into row_out[0 .. width-1]. */
static inline void sb_mandel_row(const sb_params *p, int32_t j, uint32_t *row_out) {
    const double x0 = p->region[0], x1 = p->region[1], y0 = p->region[2], y1 = p->region[3];
    const double dx = (x1 - x0) / p->width;
    const double dy = (y1 - y0) / p->height;
    const double cy = y1 - (j + 0.5) * dy;
    for (int32_t i = 0; i < p->width; i++)
        row_out[i] = sb_mandel_count(x0 + (i + 0.5) * dx, cy, p->max_iter);
}

/* The count of pixel (i, j) alone, for kernels that store pixel by pixel under a lock. */
static inline uint32_t sb_mandel_pixel(const sb_params *p, int32_t i, int32_t j) {
    const double x0 = p->region[0], x1 = p->region[1], y0 = p->region[2], y1 = p->region[3];
    const double dx = (x1 - x0) / p->width;
    const double dy = (y1 - y0) / p->height;
    return sb_mandel_count(x0 + (i + 0.5) * dx, y1 - (j + 0.5) * dy, p->max_iter);
}

/* A computed row's work for sb_worker_add_work: its iterations, the sum of its pixel counts
 * (0 when the per-worker measurements are compiled out: -DSB_WORKER_TIMES=0). */
static inline int64_t sb_mandel_row_work(const uint32_t *row, int32_t width) {
    int64_t sum = 0;
#if defined(SB_WORKER_TIMES) && !SB_WORKER_TIMES
    width = 0;
#endif
    for (int32_t i = 0; i < width; i++)
        sum += row[i];
    return sum;
}

#endif /* SB_MANDELBROT_H */
