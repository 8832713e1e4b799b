/* Cache-line ping-pong between two CPUs (see sb_xfer.h). */
#include "sb_xfer.h"
#include "sb_internal.h"

#include <stdlib.h>
#include <string.h>

#define SB_XFER_MAX_LINES 64

static sb_xfer_line lines[SB_XFER_MAX_LINES];

sb_xfer_line *sb_xfer_lines(int32_t n) {
    if (n > SB_XFER_MAX_LINES)
        n = SB_XFER_MAX_LINES;
    for (int32_t k = 0; k < n; k++)
        atomic_store(&lines[k].turn, 0);
    return lines;
}

static inline void relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

static void wait_for(sb_xfer_line *line, uint64_t value) {
    while (atomic_load_explicit(&line->turn, memory_order_acquire) != value)
        relax();
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double sb_xfer_ping(sb_xfer_line *line) {
    double per_trip[SB_XFER_SAMPLES];
    int32_t taken = 0;
    /* One untimed round trip first: the partner's arrival (a woken or preempted thread) is not a
     * transfer, and the budget starts once it is there. */
    atomic_store_explicit(&line->turn, 1, memory_order_release);
    uint64_t turn = 2;
    wait_for(line, turn);
    const double start = sb_now();
    while (taken < SB_XFER_SAMPLES) {
        double t0 = sb_now();
        for (int32_t b = 0; b < SB_XFER_BATCH; b++) {
            atomic_store_explicit(&line->turn, turn + 1, memory_order_release);
            turn += 2;
            wait_for(line, turn);
        }
        double t1 = sb_now();
        per_trip[taken++] = (t1 - t0) / SB_XFER_BATCH;
        if (t1 - start > SB_XFER_BUDGET_S)
            break;
    }
    atomic_store_explicit(&line->turn, SB_XFER_STOP, memory_order_release);
    qsort(per_trip, (size_t)taken, sizeof per_trip[0], by_value);
    return taken % 2 ? per_trip[taken / 2] : 0.5 * (per_trip[taken / 2 - 1] + per_trip[taken / 2]);
}

void sb_xfer_pong(sb_xfer_line *line) {
    for (;;) {
        uint64_t turn = atomic_load_explicit(&line->turn, memory_order_acquire);
        if (turn == SB_XFER_STOP)
            return;
        if (turn % 2 == 1)
            atomic_store_explicit(&line->turn, turn + 1, memory_order_release);
        else
            relax();
    }
}
