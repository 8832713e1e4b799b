/* likwid marker API: real when built with -DLIKWID_PERFMON -llikwid (c.mk does so when
 * /usr/include/likwid-marker.h exists), empty otherwise so the harness builds everywhere. */
#ifndef SB_LIKWID_H
#define SB_LIKWID_H

#ifdef LIKWID_PERFMON
#include <likwid-marker.h>
#else
#define LIKWID_MARKER_INIT ((void)0)
#define LIKWID_MARKER_START(tag) ((void)0)
#define LIKWID_MARKER_STOP(tag) ((void)0)
#define LIKWID_MARKER_CLOSE ((void)0)
#endif

/* The one region every kernel measures; likwid-perfctr -m reports it as "compute". */
#define SB_LIKWID_REGION "compute"

#endif /* SB_LIKWID_H */
