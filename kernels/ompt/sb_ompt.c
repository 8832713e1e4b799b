/* scalebench's OMPT tool: per-thread useful time of an unmodified OpenMP program.
 *
 * Loaded by the OpenMP runtime through OMP_TOOL_LIBRARIES (an OMPT runtime: LLVM's libomp, Intel's,
 * or libomp standing in for GCC's libgomp; libgomp itself has no OMPT). At the runtime's shutdown
 * it writes one JSON object to the file named by SB_OMPT_OUT (created exclusively under a temporary
 * name, then renamed), read by jobs/programs/ompt_report.py:
 *
 *   {"schema":"scalebench.ompt/1","runtime":"...","tool_s":T,"parallel_s":P,"regions":N,
 *    "threads_dropped":0,"callbacks":{"sync_region_wait":true,...},
 *    "threads":[{"useful_s":u,"lock_wait_s":w,"regions":n},...]}
 *
 * tool_s     from the tool's initialisation to the runtime's finalisation (the process, less its
 *            start-up and exit);
 * parallel_s time inside outermost parallel regions, from the primary thread's parallel-begin and
 *            parallel-end callbacks (the primary's callbacks arrive on time);
 * useful_s   per thread (thread 0 the initial thread), time inside implicit tasks of outermost
 *            regions less the time waiting: barriers, taskwait and taskgroup (sync_region_wait) and
 *            locks, critical sections and ordered regions (mutex_acquire .. mutex_acquired).
 * lock_wait_s per thread, the part of that waiting spent on locks, critical sections and ordered
 *            regions (whose acquired callbacks arrive on time).
 *            Explicit tasks a thread runs while it waits count as useful. Serial code outside
 *            parallel regions is not in any thread's useful_s: it is tool_s - parallel_s.
 *
 * libomp reports a worker's end-of-region barrier end and implicit-task end late (at the next fork,
 * or never for the last region): useful time stops at the barrier's begin, which arrives on time,
 * so the late ends add nothing, and open intervals are closed at finalisation.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <omp-tools.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SB_OMPT_MAX_THREADS 4096

typedef struct {
    double useful_s;
    double lock_wait_s;   /* waiting for locks, critical sections and ordered regions */
    double waiting_since; /* > 0 while waiting for a lock */
    double working_since; /* > 0 while the thread does useful work in an implicit task */
    long regions;
    int in_task;         /* implicit-task depth: > 0 inside an implicit task */
    int waiting;         /* inside a wait (barrier, taskwait, lock) */
    void *implicit_task; /* the implicit task's data, to tell it from explicit tasks */
} sb_thread_times;

static sb_thread_times sb_threads[SB_OMPT_MAX_THREADS];
static atomic_int sb_thread_count;
static atomic_int sb_threads_dropped;
static _Thread_local sb_thread_times *sb_self;

static double sb_tool_start, sb_parallel_s, sb_region_start;
static long sb_regions;
static int sb_in_region;
static char sb_runtime[128];
static const char *sb_callback_names[8];
static int sb_callback_set[8];
static int sb_callback_count;

static double sb_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static sb_thread_times *sb_thread(void) {
    if (sb_self == NULL) {
        int i = atomic_fetch_add(&sb_thread_count, 1);
        if (i >= SB_OMPT_MAX_THREADS) {
            atomic_fetch_add(&sb_threads_dropped, 1);
            return NULL;
        }
        sb_self = &sb_threads[i];
    }
    return sb_self;
}

static void sb_stop_work(sb_thread_times *t, double now) {
    if (t->working_since > 0.0) {
        t->useful_s += now - t->working_since;
        t->working_since = 0.0;
    }
}

static void sb_on_thread_begin(ompt_thread_t type, ompt_data_t *data) {
    (void)type;
    (void)data;
    (void)sb_thread();
}

static void sb_on_parallel_begin(ompt_data_t *task, const ompt_frame_t *frame,
                                 ompt_data_t *parallel, unsigned int requested, int flags,
                                 const void *codeptr) {
    (void)task, (void)frame, (void)requested, (void)flags, (void)codeptr;
    sb_thread_times *t = sb_thread();
    int outermost = t != NULL && !t->in_task; /* a region started inside a region is nested */
    parallel->value = outermost ? 1 : 2;
    if (outermost) {
        sb_in_region = 1;
        sb_region_start = sb_now();
        sb_regions++;
    }
}

static void sb_on_parallel_end(ompt_data_t *parallel, ompt_data_t *task, int flags,
                               const void *codeptr) {
    (void)task, (void)flags, (void)codeptr;
    if (parallel->value == 1) {
        sb_parallel_s += sb_now() - sb_region_start;
        sb_in_region = 0;
    }
}

static void sb_on_implicit_task(ompt_scope_endpoint_t endpoint, ompt_data_t *parallel,
                                ompt_data_t *task, unsigned int actual, unsigned int index,
                                int flags) {
    (void)parallel, (void)actual, (void)index;
    if (flags & ompt_task_initial)
        return;
    sb_thread_times *t = sb_thread();
    if (t == NULL)
        return;
    double now = sb_now();
    if (endpoint == ompt_scope_begin) {
        if (t->in_task++ > 0) /* a nested region's implicit task: the outer one goes on */
            return;
        t->waiting = 0;
        t->implicit_task = task;
        t->working_since = now;
        t->regions++;
    } else if (t->in_task > 0 && --t->in_task == 0) {
        /* libomp passes a worker's implicit task to the end callback with other data than to the
         * begin: the ends are matched by depth, not by data */
        sb_stop_work(t, now);
        t->waiting = 0;
        t->implicit_task = NULL;
    }
}

static void sb_wait_begin(int lock) {
    sb_thread_times *t = sb_thread();
    if (t == NULL || !t->in_task)
        return;
    double now = sb_now();
    sb_stop_work(t, now);
    t->waiting = 1;
    t->waiting_since = lock ? now : 0.0;
}

static void sb_wait_end(void) {
    sb_thread_times *t = sb_thread();
    if (t == NULL || !t->in_task || !t->waiting)
        return;
    double now = sb_now();
    if (t->waiting_since > 0.0)
        t->lock_wait_s += now - t->waiting_since;
    t->waiting = 0;
    t->waiting_since = 0.0;
    t->working_since = now;
}

static void sb_on_sync_region_wait(ompt_sync_region_t kind, ompt_scope_endpoint_t endpoint,
                                   ompt_data_t *parallel, ompt_data_t *task, const void *codeptr) {
    (void)kind, (void)parallel, (void)task, (void)codeptr;
    if (endpoint == ompt_scope_begin)
        sb_wait_begin(0);
    else
        sb_wait_end();
}

static void sb_on_mutex_acquire(ompt_mutex_t kind, unsigned int hint, unsigned int impl,
                                ompt_wait_id_t wait_id, const void *codeptr) {
    (void)kind, (void)hint, (void)impl, (void)wait_id, (void)codeptr;
    sb_wait_begin(1);
}

static void sb_on_mutex_acquired(ompt_mutex_t kind, ompt_wait_id_t wait_id, const void *codeptr) {
    (void)kind, (void)wait_id, (void)codeptr;
    sb_wait_end();
}

/* An explicit task run while the thread waits is useful work; back in the waiting implicit task,
 * the wait goes on. */
static void sb_on_task_schedule(ompt_data_t *prior, ompt_task_status_t status, ompt_data_t *next) {
    (void)prior, (void)status;
    sb_thread_times *t = sb_thread();
    if (t == NULL || !t->in_task || !t->waiting)
        return;
    double now = sb_now();
    if (next == t->implicit_task)
        sb_stop_work(t, now);
    else if (t->working_since <= 0.0)
        t->working_since = now;
}

static void sb_register(ompt_set_callback_t set, ompt_callbacks_t which, ompt_callback_t fn,
                        const char *name) {
    ompt_set_result_t r = set(which, fn);
    sb_callback_names[sb_callback_count] = name;
    sb_callback_set[sb_callback_count++] = r == ompt_set_always || r == ompt_set_sometimes_paired;
}

/* Each callback is sb_on_<name>, registered for ompt_callback_<name> and reported as "<name>". */
#define SB_REGISTER(set, name)                                                                     \
    sb_register(set, ompt_callback_##name, (ompt_callback_t)sb_on_##name, #name)

static int sb_initialize(ompt_function_lookup_t lookup, int initial_device,
                         ompt_data_t *tool_data) {
    (void)initial_device, (void)tool_data;
    ompt_set_callback_t set = (ompt_set_callback_t)lookup("ompt_set_callback");
    if (set == NULL)
        return 0;
    SB_REGISTER(set, thread_begin);
    SB_REGISTER(set, parallel_begin);
    SB_REGISTER(set, parallel_end);
    SB_REGISTER(set, implicit_task);
    SB_REGISTER(set, sync_region_wait);
    SB_REGISTER(set, mutex_acquire);
    SB_REGISTER(set, mutex_acquired);
    SB_REGISTER(set, task_schedule);
    sb_tool_start = sb_now();
    return 1; /* keep the tool */
}

static void sb_json_string(FILE *f, const char *s) {
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20 || c >= 0x7f)
            fputc('?', f);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

static void sb_write(const char *path, double tool_s) {
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s.tmp-%ld", path, (long)getpid()) >= (int)sizeof tmp)
        return;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) {
        fprintf(stderr, "scalebench OMPT tool: cannot create %s\n", tmp);
        return;
    }
    FILE *f = fdopen(fd, "w");
    if (f == NULL) {
        close(fd);
        unlink(tmp);
        return;
    }
    int n = atomic_load(&sb_thread_count);
    if (n > SB_OMPT_MAX_THREADS)
        n = SB_OMPT_MAX_THREADS;
    fprintf(f, "{\"schema\":\"scalebench.ompt/1\",\"runtime\":");
    sb_json_string(f, sb_runtime);
    fprintf(f,
            ",\"tool_s\":%.9g,\"parallel_s\":%.9g,\"regions\":%ld,\"threads_dropped\":%d,"
            "\"callbacks\":{",
            tool_s, sb_parallel_s, sb_regions, atomic_load(&sb_threads_dropped));
    for (int i = 0; i < sb_callback_count; i++)
        fprintf(f, "%s\"%s\":%s", i ? "," : "", sb_callback_names[i],
                sb_callback_set[i] ? "true" : "false");
    fprintf(f, "},\"threads\":[");
    for (int i = 0; i < n; i++)
        fprintf(f, "%s{\"useful_s\":%.9g,\"lock_wait_s\":%.9g,\"regions\":%ld}", i ? "," : "",
                sb_threads[i].useful_s, sb_threads[i].lock_wait_s, sb_threads[i].regions);
    fprintf(f, "]}\n");
    int bad = ferror(f);
    if (fclose(f) != 0 || bad || rename(tmp, path) != 0) {
        fprintf(stderr, "scalebench OMPT tool: cannot write %s\n", path);
        unlink(tmp);
    }
}

static void sb_finalize(ompt_data_t *tool_data) {
    (void)tool_data;
    double now = sb_now();
    int n = atomic_load(&sb_thread_count);
    for (int i = 0; i < n && i < SB_OMPT_MAX_THREADS; i++)
        sb_stop_work(&sb_threads[i], now);
    if (sb_in_region) /* finalised inside a region (exit from a parallel region) */
        sb_parallel_s += now - sb_region_start;
    const char *path = getenv("SB_OMPT_OUT");
    if (path != NULL && *path != '\0')
        sb_write(path, now - sb_tool_start);
}

ompt_start_tool_result_t *ompt_start_tool(unsigned int omp_version, const char *runtime_version) {
    (void)omp_version;
    static ompt_start_tool_result_t result = {&sb_initialize, &sb_finalize, {0}};
    snprintf(sb_runtime, sizeof sb_runtime, "%s", runtime_version ? runtime_version : "unknown");
    return &result;
}
