/* --turns R,W: wait for a byte before each repetition, write one after it (sb_turns.h). */
#define _GNU_SOURCE
#include "sb_turns.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define MAX_FD 1023

static int parse_fd(const char *text, char **end) {
    if (*text < '0' || *text > '9')
        return -1;
    errno = 0;
    long v = strtol(text, end, 10);
    return errno == 0 && v >= 3 && v <= MAX_FD ? (int)v : -1;
}

/* Whether fd is open with an access mode that allows `want` (O_RDONLY or O_WRONLY). */
static int open_for(int fd, int want) {
    int flags = fcntl(fd, F_GETFL);
    if (flags < 0)
        return 0;
    int mode = flags & O_ACCMODE;
    return mode == O_RDWR || mode == want;
}

int sb_turns_parse(const char *text, sb_turns *t, char *err, size_t errlen) {
    char *end = NULL;
    int in = parse_fd(text, &end);
    int out = in >= 0 && *end == ',' ? parse_fd(end + 1, &end) : -1;
    if (in < 0 || out < 0 || *end != '\0' || in == out) {
        snprintf(err, errlen, "--turns: '%s' is not two distinct file descriptors R,W (each 3..%d)",
                 text, MAX_FD);
        return -1;
    }
    if (!open_for(in, O_RDONLY) || !open_for(out, O_WRONLY)) {
        snprintf(err, errlen, "--turns: '%s': descriptor %d is not open for %s", text,
                 open_for(in, O_RDONLY) ? out : in, open_for(in, O_RDONLY) ? "writing" : "reading");
        return -1;
    }
    t->in = in;
    t->out = out;
    return 0;
}

int sb_turns_wait(const sb_turns *t) {
    if (t->in < 0)
        return 0;
    char byte;
    ssize_t n;
    do
        n = read(t->in, &byte, 1);
    while (n < 0 && errno == EINTR);
    return n == 1 ? 0 : -1;
}

int sb_turns_done(const sb_turns *t) {
    if (t->out < 0)
        return 0;
    const char byte = 'd';
    ssize_t n;
    do
        n = write(t->out, &byte, 1);
    while (n < 0 && errno == EINTR);
    return n == 1 ? 0 : -1;
}
