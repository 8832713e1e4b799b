/*
 * Taking turns with other processes: --turns R,W. Before each repetition (warm-ups included) the
 * harness waits for one byte on the inherited file descriptor R; after it (its probe taken and its
 * record written) it writes one byte to W. A conductor that holds the other ends decides which
 * process measures when, so two kernels' repetitions can alternate with microseconds between them
 * instead of a process start and a warm-up (perf/perf_alternating.py). Without --turns nothing
 * changes.
 */
#ifndef SB_TURNS_H
#define SB_TURNS_H

#include <stddef.h>

typedef struct sb_turns {
    int in;  /* R, or -1: not taking turns */
    int out; /* W, or -1 */
} sb_turns;

#define SB_TURNS_NONE ((sb_turns){.in = -1, .out = -1})

/* Parses "R,W" (two distinct descriptors 3..1023, each open: R readable, W writable) into *t;
 * -1 with one line in err naming the option and the value. */
int sb_turns_parse(const char *text, sb_turns *t, char *err, size_t errlen);

/* Waits for the conductor's byte on t->in; 0, or -1 when the conductor closed its end (it ended:
 * the caller stops). No-op without --turns. */
int sb_turns_wait(const sb_turns *t);

/* Writes one byte to t->out (a repetition is done); 0, or -1 when the conductor is gone. */
int sb_turns_done(const sb_turns *t);

#endif /* SB_TURNS_H */
