/*
 * MPI glue shared by the MPI kernels (mandelbrot-c-mpi, mcpi-c-mpi), on top of harness.h's MPI
 * hooks.
 *
 * Per repetition every rank runs the same skeleton: sb_mpi_attach (rank -> harness), start the
 * rank's OpenMP team, the team's master thread calls sb_mpi_compute_begin (MPI_Barrier, then the
 * harness clock), compute, sb_compute_end, then sb_mpi_report gathers every rank's compute time and
 * placement on rank 0: wall_s = the slowest rank, rank_wall_s = all of them, placement rank-major.
 * Results are combined after the timed region (MPI_Reduce), so wall_s is compute time only.
 *
 * MPI is initialised with MPI_THREAD_FUNNELED: only a rank's master thread calls MPI. Nothing here
 * assumes mpirun: ranks come from MPI_Comm_rank, so `srun --mpi=pmix` works the same.
 */
#ifndef SB_MPI_H
#define SB_MPI_H

#include "harness.h"

#include <mpi.h>

/* Descriptor init/finalize callbacks: MPI_Init_thread (FUNNELED) / MPI_Finalize. init also makes
 * any exit without MPI_Finalize (sb_fail, exit(1)) call MPI_Abort, so a failing rank takes the
 * whole job down instead of leaving the others waiting in a collective. */
int sb_mpi_init(int *argc, char ***argv);
void sb_mpi_finalize(void);

/* Tells the harness this process's rank; returns it (nranks in *nranks). */
int sb_mpi_attach(sb_ctx *ctx, int *nranks);

/* From the rank's master thread once its threads are up: all ranks meet, then the clock starts. */
void sb_mpi_compute_begin(sb_ctx *ctx);

/* After sb_compute_end, on every rank (collective): rank times, placement and the per-worker
 * measurements' sums and maxima to rank 0. */
void sb_mpi_report(sb_ctx *ctx);

/* Block `part` of [0, n) cut into `nparts` contiguous blocks: [n*part/nparts, n*(part+1)/nparts).
 * 128-bit intermediate: n * part overflows int64 beyond 2^62 / nparts. */
static inline void sb_block_range(int64_t n, int part, int nparts, int64_t *first, int64_t *end) {
    *first = (int64_t)((__int128)n * part / nparts);
    *end = (int64_t)((__int128)n * (part + 1) / nparts);
}

#endif /* SB_MPI_H */
