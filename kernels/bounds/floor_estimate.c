/* The floor of a figure timed in many short trials: see floor_estimate.h. */
#include "floor_estimate.h"

#include <math.h>
#include <stdlib.h>

static int by_value(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of the sorted values in [v, v x (1 + span)], v the lowest value such that
 * [v, v x (1 + tol)] holds `need` of them; NAN if there is none. */
static double lowest_cluster(const double *sorted, size_t m, size_t need, double tol, double span) {
    for (size_t i = 0; i + need <= m; i++)
        if (sorted[i + need - 1] <= sorted[i] * (1.0 + tol)) {
            size_t end = i + need;
            while (end < m && sorted[end] <= sorted[i] * (1.0 + span))
                end++;
            const size_t mid = i + (end - i) / 2;
            return (end - i) % 2 ? sorted[mid] : 0.5 * (sorted[mid - 1] + sorted[mid]);
        }
    return NAN;
}

static size_t share_of(size_t all) {
    const size_t need = (size_t)ceil(SB_FLOOR_SHARE * (double)all);
    return need < SB_FLOOR_CONFIRM ? SB_FLOOR_CONFIRM : need;
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
    return lowest_cluster(scratch, m, share_of(all), SB_FLOOR_TOL, SB_FLOOR_SPAN);
}

double sb_quiet_level(double *values, size_t m, double tol) {
    size_t all = m;
    m = 0;
    for (size_t i = 0; i < all; i++)
        if (isfinite(values[i]))
            values[m++] = values[i];
    qsort(values, m, sizeof *values, by_value);
    return lowest_cluster(values, m, share_of(all), tol, tol);
}

int sb_floor_settled(const struct sb_trial *trials, size_t n, double now_s, double *scratch,
                     double *floor) {
    *floor = sb_floor_confirmed(trials, n, -INFINITY, INFINITY, scratch);
    const double first = sb_floor_confirmed(trials, n, -INFINITY, now_s / 2, scratch);
    const double second = sb_floor_confirmed(trials, n, now_s / 2, INFINITY, scratch);
    return isfinite(first) && isfinite(second) &&
           fabs(first - second) <= SB_FLOOR_TOL * fmin(first, second);
}
