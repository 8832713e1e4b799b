/* Worker start-up and join for the pthreads kernels. */
#define _POSIX_C_SOURCE 200809L
#include "sb_threads.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Small stacks: 4096 workers x the 8 MiB default would reserve 32 GiB of address space. */
#define WORKER_STACK_BYTES (256 * 1024)

typedef struct {
    void (*body)(void *, int32_t);
    void *arg;
    int32_t worker;
} start_info;

static void *start(void *p) {
    start_info *s = p;
    s->body(s->arg, s->worker);
    return NULL;
}

void sb_run_workers(sb_ctx *ctx, int32_t threads, void (*body)(void *arg, int32_t worker),
                    void *arg) {
    pthread_t *tids = calloc((size_t)threads, sizeof *tids);
    start_info *info = calloc((size_t)threads, sizeof *info);
    if (!tids || !info)
        sb_fail(ctx, "out of memory for worker threads");
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, WORKER_STACK_BYTES);
    for (int32_t w = 1; w < threads; w++) {
        info[w] = (start_info){body, arg, w};
        int rc = pthread_create(&tids[w], &attr, start, &info[w]);
        if (rc != 0) {
            /* Workers already started wait at a barrier for all `threads`: nothing to unwind. */
            char msg[160];
            snprintf(msg, sizeof msg, "cannot create worker thread %d of %d: %s", (int)w,
                     (int)threads, strerror(rc));
            sb_fail(ctx, msg);
        }
    }
    pthread_attr_destroy(&attr);
    body(arg, 0);
    for (int32_t w = 1; w < threads; w++)
        pthread_join(tids[w], NULL);
    free(tids);
    free(info);
}
