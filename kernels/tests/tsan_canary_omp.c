/* A deliberate data race in OpenMP: proves that clang + TSan + Archer report races in OpenMP code
 * here, so a clean run of the OpenMP kernels under the same set-up means something. */
#include <stdio.h>

int main(void) {
    long counter = 0;
#pragma omp parallel num_threads(2)
    for (int i = 0; i < 100000; i++)
        counter++;
    printf("%ld\n", counter);
    return 0;
}
