/*
 * Mandelbrot, MPI (+OpenMP inside each rank). Rows are distributed over ranks by --schedule:
 *   block          rank r computes the contiguous rows [r*H/R, (r+1)*H/R)
 *   cyclic[,C]     chunks of C rows (default 1) dealt round-robin: chunk k goes to rank k mod R
 *   master[,C]     dynamic master/worker: rank 0 only hands out chunks of C rows (default 1) on
 *                  request, ranks 1..R-1 compute them (one rank alone computes everything itself)
 * Inside a rank its --threads OpenMP threads share the rank's rows with schedule(dynamic,1).
 * Every rank writes its rows into its own zeroed copy of the image; after the timed region one
 * MPI_Reduce(SUM) onto rank 0 assembles the image (each pixel is non-zero on at most one rank).
 */
#include "harness.h"
#include "sb_mandelbrot.h"
#include "sb_mpi.h"
#include "sb_omp.h"
#include "sb_simd.h"

#include <stdlib.h>

enum { TAG_REQUEST = 1, TAG_CHUNK = 2 };

/* The rows of `height` that `rank` computes under a static schedule, in order; returns how many.
 * Block with one rank = every row, which is also what a lone rank does under the master schedule.
 */
static int32_t static_rows(int32_t height, int cyclic, int32_t chunk, int rank, int nranks,
                           int32_t *rows) {
    int32_t n = 0;
    if (!cyclic) {
        int64_t first, end;
        sb_block_range(height, rank, nranks, &first, &end);
        for (int64_t j = first; j < end; j++)
            rows[n++] = (int32_t)j;
    } else {
        for (int64_t c0 = (int64_t)rank * chunk; c0 < height; c0 += (int64_t)nranks * chunk)
            for (int64_t j = c0; j < c0 + chunk && j < height; j++)
                rows[n++] = (int32_t)j;
    }
    return n;
}

/* Rank 0 under the master schedule: answer every request with the next chunk's first row, then
 * with -1 (stop) once per worker rank. */
static void hand_out_chunks(const sb_params *p, int nranks) {
    const int32_t chunk = p->chunk ? p->chunk : 1;
    int64_t next = 0;
    for (int active = nranks - 1; active > 0;) {
        MPI_Status st;
        MPI_Recv(NULL, 0, MPI_INT, MPI_ANY_SOURCE, TAG_REQUEST, MPI_COMM_WORLD, &st);
        int32_t first = next < p->height ? (int32_t)next : -1;
        if (first < 0)
            active--;
        else
            next += chunk;
        MPI_Send(&first, 1, MPI_INT32_T, st.MPI_SOURCE, TAG_CHUNK, MPI_COMM_WORLD);
    }
}

static int32_t request_chunk(void) {
    int32_t first;
    MPI_Send(NULL, 0, MPI_INT, 0, TAG_REQUEST, MPI_COMM_WORLD);
    MPI_Recv(&first, 1, MPI_INT32_T, 0, TAG_CHUNK, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    return first;
}

static int run(sb_ctx *ctx) {
    const sb_params *p = sb_params_get(ctx);
    uint32_t *image = sb_image(ctx);
    int nranks;
    const int rank = sb_mpi_attach(ctx, &nranks);
    const int master_mode = p->schedule == SB_SCHED_MASTER && nranks > 1;
    const int32_t chunk = p->chunk ? p->chunk : 1;
    int32_t *rows = malloc((size_t)p->height * sizeof *rows);
    if (!rows)
        sb_fail(ctx, "out of memory for the row list");
    const int32_t nrows = master_mode ? 0
                                      : static_rows(p->height, p->schedule == SB_SCHED_CYCLIC,
                                                    chunk, rank, nranks, rows);
    omp_set_dynamic(0);
    int team = 0;
    int32_t chunk_first = 0; /* master mode: the chunk the team works on, -1 = done */
#pragma omp parallel num_threads(p->threads)
    {
        const int worker = sb_omp_region_begin(ctx, &team, sb_mpi_compute_begin);
        int64_t work = 0;
        if (!master_mode) {
#pragma omp for schedule(dynamic, 1) nowait
            for (int32_t k = 0; k < nrows; k++) {
                uint32_t *row = image + (size_t)rows[k] * (size_t)p->width;
                sb_mandel_row_inner(p, rows[k], row);
                work += sb_mandel_row_work(row, p->width);
            }
        } else if (rank == 0) {
            /* handing out chunks is waiting for requests: rank 0 does no useful work */
            const double t0 = MPI_Wtime();
#pragma omp master
            hand_out_chunks(p, nranks);
#pragma omp barrier
            sb_worker_add_wait(ctx, worker, MPI_Wtime() - t0);
        } else {
            for (;;) {
                /* FUNNELED: the master thread asks (a wait: one clock pair per chunk), the team
                 * computes the chunk */
#pragma omp master
                {
                    const double t0 = MPI_Wtime();
                    chunk_first = request_chunk();
                    sb_worker_add_wait(ctx, worker, MPI_Wtime() - t0);
                }
#pragma omp barrier
                if (chunk_first < 0)
                    break;
                const int32_t end =
                    p->height - chunk_first > chunk ? chunk_first + chunk : p->height;
#pragma omp for schedule(dynamic, 1)
                for (int32_t j = chunk_first; j < end; j++) {
                    uint32_t *row = image + (size_t)j * (size_t)p->width;
                    sb_mandel_row_inner(p, j, row);
                    work += sb_mandel_row_work(row, p->width);
                }
                /* the for's implied barrier: nobody reads chunk_first while it is replaced */
            }
        }
        sb_worker_add_work(ctx, worker, work);
        sb_omp_region_end(ctx, worker);
    }
    free(rows);
    sb_check_team(ctx, team);
    MPI_Reduce(rank == 0 ? MPI_IN_PLACE : image, image, p->width * p->height, MPI_UINT32_T, MPI_SUM,
               0, MPI_COMM_WORLD);
    sb_mpi_report(ctx);
    return 0;
}

const sb_kernel_desc sb_kernel = {
    .kernel = "mandelbrot",
    .lang = "c",
    .model = "mpi",
    .kind = SB_KERNEL_MANDELBROT,
    .max_threads = 4096,
    .default_schedule = SB_SCHED_BLOCK,
    .default_sync = SB_SYNC_NONE,
    .sync_by_schedule =
        {
            [SB_SCHED_BLOCK] = SB_BIT(SB_SYNC_NONE),
            [SB_SCHED_CYCLIC] = SB_BIT(SB_SYNC_NONE),
            [SB_SCHED_MASTER] = SB_BIT(SB_SYNC_NONE),
        },
    .chunk_schedules = SB_BIT(SB_SCHED_CYCLIC) | SB_BIT(SB_SCHED_MASTER),
    .help =
        "MPI model (run under mpirun or srun --mpi=pmix; --threads = OpenMP threads per rank,\n"
        "sharing the rank's rows with schedule(dynamic,1)). Rows over ranks by --schedule:\n"
        "block = one contiguous block per rank; cyclic[,C] = chunks of C rows (default 1) dealt\n"
        "round-robin; master[,C] = dynamic master/worker, rank 0 hands out chunks of C rows on\n"
        "request and computes none (a single rank computes all). wall_s is the slowest rank's\n"
        "compute time (after an MPI_Barrier), rank_wall_s every rank's; placement is rank-major.\n"
        "The image is assembled on rank 0 after the timed region. --sync is none only.",
    .init = sb_mpi_init,
    .finalize = sb_mpi_finalize,
    .run = run,
    .inner_simd = 1,
};
