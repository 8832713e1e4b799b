/*
 * Building blocks of the kernel descriptors (harness.h's sb_kernel_desc). A model's schedules,
 * syncs and defaults are the same whichever language implements it, so they are stated once here;
 * each kernel file writes one SB_DESC_* field set plus what is its own (.lang, .help, .run and, for
 * pthreads, .chunk_schedules). The C-level tests parse options against these same field sets.
 */
#ifndef SB_DESCRIPTORS_H
#define SB_DESCRIPTORS_H

#include "harness.h"

/* OpenMP: schedule(runtime) with every schedule omp_set_schedule knows, each taking ",chunk". */
#define SB_OMP_SCHEDULES                                                                           \
    (SB_BIT(SB_SCHED_STATIC) | SB_BIT(SB_SCHED_DYNAMIC) | SB_BIT(SB_SCHED_GUIDED))

/* The ways an OpenMP π kernel adds a batch's hits to the total. */
#define SB_OMP_MCPI_SYNCS                                                                          \
    (SB_BIT(SB_SYNC_REDUCTION) | SB_BIT(SB_SYNC_ATOMIC) | SB_BIT(SB_SYNC_CRITICAL))

/* pthreads: every sync with the static partitions; the run-time queue is shared state, so it
 * needs a sync other than none. */
#define SB_PTHREADS_SYNCS                                                                          \
    (SB_BIT(SB_SYNC_NONE) | SB_BIT(SB_SYNC_COARSE) | SB_BIT(SB_SYNC_FINE) | SB_BIT(SB_SYNC_ATOMIC))

/* Serial: one thread, --schedule and --sync none only. */
#define SB_DESC_SERIAL(kernel_name, kernel_kind)                                                   \
    .kernel = (kernel_name), .model = "serial", .kind = (kernel_kind), .max_threads = 1,           \
    .default_schedule = SB_SCHED_NONE, .default_sync = SB_SYNC_NONE,                               \
    .sync_by_schedule = {[SB_SCHED_NONE] = SB_BIT(SB_SYNC_NONE)}, .chunk_schedules = 0

/* OpenMP: static|dynamic|guided[,chunk] (default static), each allowing the sync mask `syncs`. */
#define SB_DESC_OMP(kernel_name, kernel_kind, default_sync_, syncs)                                \
    .kernel = (kernel_name), .model = "omp", .kind = (kernel_kind), .max_threads = 4096,           \
    .default_schedule = SB_SCHED_STATIC, .default_sync = (default_sync_),                          \
    .sync_by_schedule =                                                                            \
        {[SB_SCHED_STATIC] = (syncs), [SB_SCHED_DYNAMIC] = (syncs), [SB_SCHED_GUIDED] = (syncs)},  \
    .chunk_schedules = SB_OMP_SCHEDULES

/* The OpenMP field sets of the two kernels: rows are written by one thread each (sync none);
 * π adds hits by reduction (default), atomic or critical. */
#define SB_DESC_MANDELBROT_OMP                                                                     \
    SB_DESC_OMP("mandelbrot", SB_KERNEL_MANDELBROT, SB_SYNC_NONE, SB_BIT(SB_SYNC_NONE))
#define SB_DESC_MCPI_OMP SB_DESC_OMP("mcpi", SB_KERNEL_MCPI, SB_SYNC_REDUCTION, SB_OMP_MCPI_SYNCS)

/* pthreads: block|cyclic|queue (default block, sync none); which of them take ",chunk" is the
 * kernel's own .chunk_schedules. Its pool and barriers wait as --wait-policy says. */
#define SB_DESC_PTHREADS(kernel_name, kernel_kind)                                                 \
    .kernel = (kernel_name), .model = "pthreads", .kind = (kernel_kind), .max_threads = 4096,      \
    .default_schedule = SB_SCHED_BLOCK, .default_sync = SB_SYNC_NONE,                              \
    .sync_by_schedule = {[SB_SCHED_BLOCK] = SB_PTHREADS_SYNCS,                                     \
                         [SB_SCHED_CYCLIC] = SB_PTHREADS_SYNCS,                                    \
                         [SB_SCHED_QUEUE] = SB_PTHREADS_SYNCS & ~SB_BIT(SB_SYNC_NONE)},            \
    .wait_policy = 1

#endif /* SB_DESCRIPTORS_H */
