/* Where the workers run: the CPU of the calling thread and the process's kernel-thread count. */
#define _GNU_SOURCE
#include "sb_internal.h"

#include <dirent.h>
#include <sched.h>

int32_t sb_current_cpu(void) {
    return (int32_t)sched_getcpu();
}

int32_t sb_count_os_threads(void) {
    DIR *dir = opendir("/proc/self/task");
    if (!dir)
        return -1;
    int32_t n = 0;
    struct dirent *e;
    while ((e = readdir(dir)) != NULL)
        if (e->d_name[0] != '.')
            n++;
    closedir(dir);
    return n;
}
