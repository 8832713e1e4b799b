/* The floor of a figure timed in many short trials: see floor_estimate.h. */
#include "floor_estimate.h"

#include <math.h>
#include <stdlib.h>

static int by_value(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double sb_floor_confirmed(const struct sb_trial *trials, size_t n, double from_s, double to_s,
                          double *scratch) {
    size_t m = 0, all = 0;
    for (size_t i = 0; i < n; i++)
        if (trials[i].t_s >= from_s && trials[i].t_s < to_s) {
            all++;
            if (isfinite(trials[i].value))
                scratch[m++] = trials[i].value;
        }
    qsort(scratch, m, sizeof *scratch, by_value);
    size_t need = (size_t)ceil(SB_FLOOR_SHARE * (double)all);
    if (need < SB_FLOOR_CONFIRM)
        need = SB_FLOOR_CONFIRM;
    for (size_t i = 0; i + need <= m; i++)
        if (scratch[i + need - 1] <= scratch[i] * (1.0 + SB_FLOOR_TOL)) {
            size_t end = i + need;
            while (end < m && scratch[end] <= scratch[i] * (1.0 + SB_FLOOR_SPAN))
                end++;
            const size_t mid = i + (end - i) / 2;
            return (end - i) % 2 ? scratch[mid] : 0.5 * (scratch[mid - 1] + scratch[mid]);
        }
    return NAN;
}

int sb_floor_settled(const struct sb_trial *trials, size_t n, double now_s, double *scratch,
                     double *floor) {
    *floor = sb_floor_confirmed(trials, n, -INFINITY, INFINITY, scratch);
    const double first = sb_floor_confirmed(trials, n, -INFINITY, now_s / 2, scratch);
    const double second = sb_floor_confirmed(trials, n, now_s / 2, INFINITY, scratch);
    return isfinite(first) && isfinite(second) &&
           fabs(first - second) <= SB_FLOOR_TOL * fmin(first, second);
}
