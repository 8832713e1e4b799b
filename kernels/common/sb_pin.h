/*
 * Pinning inside the harness: the runner plans a CPU list with likwid's topology and hands it over
 * in SB_PIN_CPUS ("0,2,3"); worker g of the job (g = rank * threads + worker) runs on entry
 * g mod length, the placement likwid-pin gives the same list. Each thread pins itself the first
 * time it starts work as a given worker, so no wrapper process and no pthread_create interposer
 * (likwid-pin's start-up costs about a second on some virtual machines, its preload library tens of
 * milliseconds per created thread) sits between the runner and the kernel.
 */
#ifndef SB_PIN_H
#define SB_PIN_H

#include <stddef.h>
#include <stdint.h>

#define SB_PIN_MAX_CPUS 1024

/* Reads SB_PIN_CPUS once; 0 = no list (not pinned by the harness), 1 = list read, -1 = malformed
 * (message in err). With a list, pins the calling (main) thread to the entry of worker 0 of this
 * rank (rank from the launcher's environment), so setup memory is touched where it will be used. */
int sb_pin_init(int32_t threads, char *err, size_t errlen);

/* The list (NULL when the harness does not pin) and its length. */
const int32_t *sb_pin_list(int32_t *n);

/* Pins the calling thread to the CPU of worker `global_worker` unless it already runs there
 * pinned; 0 on success or without a list, -1 with a message when the OS refuses. */
int sb_pin_worker(int32_t global_worker, char *err, size_t errlen);

/* Moves the calling thread onto `cpu` alone: 0, or -1 (errno set) when the OS refuses. What
 * sb_pin_worker remembers stays: a caller that moves a pinned worker away puts its mask back. */
int sb_pin_to_cpu(int32_t cpu);

#endif /* SB_PIN_H */
