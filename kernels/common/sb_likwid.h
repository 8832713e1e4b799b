/* likwid marker API, loaded at run time: under likwid-perfctr -m (LIKWID_EVENTS set) the harness
 * dlopen()s liblikwid and calls its marker functions; otherwise nothing of likwid is loaded.
 * Linking liblikwid costs every process about 13 ms of start-up (its constructors and
 * dependencies), which every uncounted repetition would pay. Built only with -DLIKWID_PERFMON (c.mk
 * sets it when /usr/include/likwid-marker.h exists); without it the calls are empty. */
#ifndef SB_LIKWID_H
#define SB_LIKWID_H

#ifdef LIKWID_PERFMON
/* Loads liblikwid and calls likwid_markerInit; on failure prints why and exits 1 (a counted run
 * without its marker region would report nothing). */
void sb_likwid_init(const char *prog);
void sb_likwid_start(const char *tag); /* no-ops until sb_likwid_init succeeded */
void sb_likwid_stop(const char *tag);
void sb_likwid_close(void);
#define LIKWID_MARKER_INIT(prog) sb_likwid_init(prog)
#define LIKWID_MARKER_START(tag) sb_likwid_start(tag)
#define LIKWID_MARKER_STOP(tag) sb_likwid_stop(tag)
#define LIKWID_MARKER_CLOSE sb_likwid_close()
#else
#define LIKWID_MARKER_INIT(prog) ((void)(prog))
#define LIKWID_MARKER_START(tag) ((void)0)
#define LIKWID_MARKER_STOP(tag) ((void)0)
#define LIKWID_MARKER_CLOSE ((void)0)
#endif

/* The one region every kernel measures; likwid-perfctr -m reports it as "compute". */
#define SB_LIKWID_REGION "compute"

#endif /* SB_LIKWID_H */
