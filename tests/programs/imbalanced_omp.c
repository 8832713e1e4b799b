/* A test program for the OMPT tool and the task-CPU fallback: N iterations whose work grows with
 * the index (iteration i spins (i + 1) * unit), under the schedule given by OMP_SCHEDULE. On 2
 * threads a static schedule gives a load balance of about 0.67 and dynamic,1 about 1.00. Prints its
 * own region time so a test can compare. With "critical" as the fourth argument every iteration's
 * work runs inside one critical section (the threads wait for each other there). Usage:
 * imbalanced_omp [N [unit_iterations [regions [critical]]]] */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double spin(long n) {
    volatile double x = 0.0;
    for (long k = 0; k < n; k++)
        x = x * 0.999999 + 1.0;
    return x;
}

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 200;
    long unit = argc > 2 ? atol(argv[2]) : 20000;
    int regions = argc > 3 ? atoi(argv[3]) : 1;
    int critical = argc > 4 && strcmp(argv[4], "critical") == 0;
    double sink = 0.0, t0 = omp_get_wtime();
    for (int r = 0; r < regions; r++) {
#pragma omp parallel for schedule(runtime) reduction(+ : sink)
        for (long i = 0; i < n; i++) {
            if (critical) {
#pragma omp critical
                sink += spin((i + 1) * unit);
            } else {
                sink += spin((i + 1) * unit);
            }
        }
    }
    printf("region_s %.6f sink %.1f threads %d\n", omp_get_wtime() - t0, sink,
           omp_get_max_threads());
    return 0;
}
