/*
 * Monte-Carlo π, MPI (+OpenMP inside each rank): rank r takes the samples [r*N/R, (r+1)*N/R); its
 * --threads OpenMP threads share the rank's range in batches of --batch samples with
 * reduction(+:hits); one MPI_Reduce(SUM) after the timed region gives rank 0 the total. The
 * generator is keyed by sample index, so the hit count equals the serial one for any R and T.
 */
#include "harness.h"
#include "sb_mpi.h"
#include "sb_omp.h"
#include "sb_rng.h"
#include "sb_simd.h"

static int run(sb_ctx *ctx) {
    const sb_params *p = sb_params_get(ctx);
    int nranks;
    const int rank = sb_mpi_attach(ctx, &nranks);
    int64_t first, end;
    sb_block_range(p->samples, rank, nranks, &first, &end);
    const int64_t nbatches = (end - first + p->batch - 1) / p->batch;
    omp_set_dynamic(0);
    int64_t hits = 0;
    int team = 0;
#pragma omp parallel num_threads(p->threads)
    {
        const int worker = sb_omp_region_begin(ctx, &team, sb_mpi_compute_begin);
        int64_t work = 0;
#pragma omp for schedule(static) reduction(+ : hits) nowait
        for (int64_t b = 0; b < nbatches; b++) {
            int64_t s0 = first + b * p->batch;
            int64_t s1 = sb_pi_batch_end(s0, p->batch, end);
            hits += sb_pi_hits_inner(p, s0, s1);
            work += s1 - s0;
        }
        sb_worker_add_work(ctx, worker, work);
        sb_omp_region_end(ctx, worker);
    }
    sb_check_team(ctx, team);
    int64_t total = 0;
    MPI_Reduce(&hits, &total, 1, MPI_INT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    sb_set_hits(ctx, rank == 0 ? total : hits);
    sb_mpi_report(ctx);
    return 0;
}

const sb_kernel_desc sb_kernel = {
    .kernel = "mcpi",
    .lang = "c",
    .model = "mpi",
    .kind = SB_KERNEL_MCPI,
    .max_threads = 4096,
    .default_schedule = SB_SCHED_BLOCK,
    .default_sync = SB_SYNC_REDUCTION,
    .sync_by_schedule = {[SB_SCHED_BLOCK] = SB_BIT(SB_SYNC_REDUCTION)},
    .chunk_schedules = 0,
    .help =
        "MPI model (run under mpirun or srun --mpi=pmix; --threads = OpenMP threads per rank).\n"
        "--schedule block: rank r takes samples [r*N/R, (r+1)*N/R), its threads share them in\n"
        "batches of --batch with reduction(+); --sync reduction: one MPI_Reduce of the hit counts\n"
        "onto rank 0 after the timed region. wall_s is the slowest rank's compute time (after an\n"
        "MPI_Barrier), rank_wall_s every rank's; placement is rank-major.",
    .init = sb_mpi_init,
    .finalize = sb_mpi_finalize,
    .run = run,
    .inner_simd = 1,
};
