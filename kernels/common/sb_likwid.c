/* The likwid marker API through dlopen (see sb_likwid.h). */
#include "sb_likwid.h"

#ifdef LIKWID_PERFMON
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

/* likwid 5's sonames first, then the development link for other versions. */
static const char *const libraries[] = {"liblikwid.so.5.2", "liblikwid.so.5", "liblikwid.so"};

static void (*marker_close)(void);
static int (*marker_start)(const char *);
static int (*marker_stop)(const char *);

void sb_likwid_init(const char *prog) {
    void *lib = NULL;
    for (size_t i = 0; i < sizeof libraries / sizeof libraries[0] && !lib; i++)
        lib = dlopen(libraries[i], RTLD_NOW | RTLD_GLOBAL);
    void (*init)(void) = NULL;
    if (lib) {
        *(void **)&init = dlsym(lib, "likwid_markerInit");
        *(void **)&marker_close = dlsym(lib, "likwid_markerClose");
        *(void **)&marker_start = dlsym(lib, "likwid_markerStartRegion");
        *(void **)&marker_stop = dlsym(lib, "likwid_markerStopRegion");
    }
    if (!init || !marker_close || !marker_start || !marker_stop) {
        fprintf(
            stderr,
            "%s: likwid-perfctr -m is measuring, but liblikwid's marker API cannot be loaded: %s\n",
            prog, lib ? "a marker function is missing" : dlerror());
        exit(1);
    }
    init();
}

void sb_likwid_start(const char *tag) {
    if (marker_start)
        marker_start(tag);
}

void sb_likwid_stop(const char *tag) {
    if (marker_stop)
        marker_stop(tag);
}

void sb_likwid_close(void) {
    if (marker_close)
        marker_close();
}
#endif
