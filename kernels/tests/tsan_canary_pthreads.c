/* A deliberate data race: the ThreadSanitizer test builds this to prove that TSan, as set up on
 * this machine, reports races (so a clean kernel run means something). */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>

static long counter;

static void *bump(void *arg) {
    (void)arg;
    for (int i = 0; i < 100000; i++)
        counter++;
    return NULL;
}

int main(void) {
    pthread_t t;
    pthread_create(&t, NULL, bump, NULL);
    bump(NULL);
    pthread_join(t, NULL);
    printf("%ld\n", counter);
    return 0;
}
