/*
 * The floor of a figure timed in many short trials on a shared core (kernels/bounds/simd_bounds.c).
 * A latency or a throughput is a physical minimum: another tenant of the core (a slow phase of the
 * host) and interruptions can only raise a trial, so the figure is taken from the lowest cluster of
 * trials, not from their bulk. The cluster must hold a share of the trials (a lone low reading,
 * say from an add chain slowed beside the loop, is not a floor), and the figure is the median of
 * the trials near its lower edge (the trials of the fast phase scatter by about 1 % around the
 * true figure; their lowest one would read low). It counts as settled once two halves of the run,
 * far apart in time, find the same figure (docs/simd-bounds.md).
 */
#ifndef SB_FLOOR_ESTIMATE_H
#define SB_FLOOR_ESTIMATE_H

#include <stddef.h>

#define SB_FLOOR_TOL 0.02 /* the two halves agree within 2 %; the cluster is 2 % wide */
#define SB_FLOOR_SHARE                                                                             \
    0.15                   /* the cluster holds at least 15 % of the trials, dropped ones too ... */
#define SB_FLOOR_CONFIRM 3 /* ... and at least 3 of them */
#define SB_FLOOR_SPAN 0.03 /* the figure: the median of the trials within 3 % of its lower edge */

struct sb_trial {
    double t_s;   /* when the trial ran, seconds from the start of the run */
    double value; /* what it read (cycles); not finite: no reading (the trial was disturbed) */
};

/* The floor of the trials with t_s in [from_s, to_s): v is the lowest reading such that
 * [v, v x (1 + SB_FLOOR_TOL)] holds max(SB_FLOOR_CONFIRM, SB_FLOOR_SHARE of the trials) of them
 * (the trials without a reading count: the few readings a check lets through in a slow phase do
 * not make a floor);
 * the floor is the median of the readings in [v, v x (1 + SB_FLOOR_SPAN)]. NAN if there is none.
 * `scratch` holds n doubles. */
double sb_floor_confirmed(const struct sb_trial *trials, size_t n, double from_s, double to_s,
                          double *scratch);

/* At `now_s`, the floor of all the trials (*floor, NAN if none), and whether it is settled: the
 * floors of the trials before now_s / 2 and from then on both exist and agree within
 * SB_FLOOR_TOL. */
int sb_floor_settled(const struct sb_trial *trials, size_t n, double now_s, double *scratch,
                     double *floor);

/* The quiet level of readings that a shared core can only raise (the simd-bounds check chain's
 * ticks over the add chain's, kernels/bounds/simd_bounds.c): the median of the readings in
 * [v, v x (1 + tol)], v the lowest reading such that that range holds
 * max(SB_FLOOR_CONFIRM, SB_FLOOR_SHARE of the readings); readings not finite count in the share.
 * NAN if there is none. Sorts `values` in place (those not finite dropped). */
double sb_quiet_level(double *values, size_t m, double tol);

#endif
