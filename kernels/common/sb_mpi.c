/* MPI glue shared by the MPI kernels: init/finalize, the timed-region start, gathering per-rank
 * times and placement for rank 0's record. */
#include "sb_mpi.h"
#include "sb_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int mpi_started;

/* On bad arguments every rank exits 2 before MPI_Init and only rank 0 prints the error line. The
 * launcher tears the job down at the first non-zero exit, and when another rank gets there first,
 * rank 0's line is lost (2 of 60 `mpirun -np 3` runs). Ranks other than 0 therefore linger a second
 * before such an early exit. Registered from a constructor because nothing of the kernel runs
 * before the harness's option parsing. */
static void linger_unless_first_rank(void) {
    if (!mpi_started && !sb_is_first_rank_by_env())
        sleep(1);
}

__attribute__((constructor)) static void register_early_exit_linger(void) {
    atexit(linger_unless_first_rank);
}

/* Any exit between MPI_Init and MPI_Finalize is a failure of this rank: abort the job so no other
 * rank hangs in a collective (mpirun would kill them too, srun might not). */
static void abort_unless_finalized(void) {
    int initialized = 0, finalized = 0;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    if (initialized && !finalized)
        MPI_Abort(MPI_COMM_WORLD, 1);
}

int sb_mpi_init(int *argc, char ***argv) {
    int provided = 0;
    if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
        return -1;
    mpi_started = 1;
    atexit(abort_unless_finalized);
    if (provided < MPI_THREAD_FUNNELED) {
        fprintf(stderr, "MPI library provides no MPI_THREAD_FUNNELED (level %d)\n", provided);
        return -1;
    }
    return 0;
}

void sb_mpi_finalize(void) {
    MPI_Finalize();
}

int sb_mpi_attach(sb_ctx *ctx, int *nranks) {
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, nranks);
    sb_set_rank(ctx, rank, *nranks);
    return rank;
}

void sb_mpi_compute_begin(sb_ctx *ctx) {
    MPI_Barrier(MPI_COMM_WORLD);
    sb_compute_begin(ctx);
}

void sb_mpi_report(sb_ctx *ctx) {
    int rank = 0, nranks = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    const int threads = sb_params_get(ctx)->threads;
    double mine = sb_wall(ctx);
    int32_t *pairs = malloc(2 * (size_t)threads * sizeof *pairs);
    double *times = rank == 0 ? malloc((size_t)nranks * sizeof *times) : NULL;
    int32_t *all = rank == 0 ? malloc(2 * (size_t)threads * (size_t)nranks * sizeof *all) : NULL;
    if (!pairs || (rank == 0 && (!times || !all)))
        sb_fail(ctx, "out of memory gathering per-rank results");
    sb_get_placement(ctx, pairs, threads);
    MPI_Gather(&mine, 1, MPI_DOUBLE, times, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    MPI_Gather(pairs, 2 * threads, MPI_INT32_T, all, 2 * threads, MPI_INT32_T, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        double slowest = times[0];
        for (int r = 1; r < nranks; r++)
            slowest = times[r] > slowest ? times[r] : slowest;
        sb_set_rank_times(ctx, times, nranks);
        sb_set_wall(ctx, slowest);
        sb_set_placement(ctx, all, threads * nranks);
    }
    free(pairs);
    free(times);
    free(all);
    /* every rank's workers: sums and maxima onto rank 0 (worker_* fields) */
    const sb_worker_totals local = sb_worker_totals_local(ctx);
    const double sums[] = {local.useful_sum, local.wait_sum,  local.cpu_sum, local.work_sum,
                           local.workers,    local.clock_sum, local.clocks};
    const double maxima[] = {local.useful_max, local.work_max};
    /* a rank without measured clocks offers no least clock */
    const double clock_min = local.clocks > 0 ? local.clock_min : HUGE_VAL;
    double sum_all[7], max_all[2], clock_min_all = HUGE_VAL;
    MPI_Reduce(sums, sum_all, 7, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(maxima, max_all, 2, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&clock_min, &clock_min_all, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
    /* the waiting of the worker with the largest useful time (the critical path,
     * docs/pop-metrics.md): the rank holding it sends it to rank 0 */
    struct {
        double useful;
        int rank;
    } mine_max = {local.useful_max, rank}, owner;
    MPI_Allreduce(&mine_max, &owner, 1, MPI_DOUBLE_INT, MPI_MAXLOC, MPI_COMM_WORLD);
    const double wait_here = rank == owner.rank ? local.wait_at_useful_max : 0.0;
    double wait_at_max = 0.0;
    MPI_Reduce(&wait_here, &wait_at_max, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        ctx->worker_totals = (sb_worker_totals){
            .useful_sum = sum_all[0],
            .wait_sum = sum_all[1],
            .cpu_sum = sum_all[2],
            .work_sum = sum_all[3],
            .workers = sum_all[4],
            .useful_max = max_all[0],
            .work_max = max_all[1],
            .wait_at_useful_max = wait_at_max,
            .clock_sum = sum_all[5],
            .clocks = sum_all[6],
            .clock_min = clock_min_all,
        };
        ctx->worker_totals_set = 1;
    }
}
