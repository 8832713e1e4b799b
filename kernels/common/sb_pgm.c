/* 16-bit PGM writer for --dump. */
#define _GNU_SOURCE
#include "sb_pgm.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void temp_name(const char *path, char *out, size_t n) {
    snprintf(out, n, "%s.tmp.%ld", path, (long)getpid());
}

/* fsync of the directory makes the rename itself durable. */
static void sync_parent_dir(const char *path) {
    char *copy = strdup(path);
    if (!copy)
        return;
    int fd = open(dirname(copy), O_RDONLY | O_DIRECTORY);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
    free(copy);
}

int sb_pgm_check_writable(const char *path, char *err, size_t errlen) {
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "--dump: '%s' is a directory", path);
        return -1;
    }
    char tmp[4096 + 32];
    temp_name(path, tmp, sizeof tmp);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (fd < 0) {
        snprintf(err, errlen, "--dump: '%s' is not writable (%s)", path, strerror(errno));
        return -1;
    }
    close(fd);
    unlink(tmp);
    return 0;
}

int sb_pgm_write(const char *path, const uint32_t *counts, int32_t width, int32_t height, char *err,
                 size_t errlen) {
    char tmp[4096 + 32];
    temp_name(path, tmp, sizeof tmp);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    FILE *f = fd >= 0 ? fdopen(fd, "wb") : NULL;
    if (!f) {
        snprintf(err, errlen, "--dump: '%s' is not writable (%s)", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    int ok = fprintf(f, "P5\n%d %d\n65535\n", (int)width, (int)height) > 0;
    size_t n = (size_t)width * (size_t)height;
    unsigned char buf[8192];
    size_t fill = 0;
    for (size_t k = 0; ok && k < n; k++) {
        uint32_t v = counts[k] > 65535u ? 65535u : counts[k];
        buf[fill++] = (unsigned char)(v >> 8);
        buf[fill++] = (unsigned char)(v & 0xffu);
        if (fill == sizeof buf || k + 1 == n) {
            ok = fwrite(buf, 1, fill, f) == fill;
            fill = 0;
        }
    }
    ok = ok && fflush(f) == 0 && fsync(fileno(f)) == 0;
    int saved = errno;
    ok = (fclose(f) == 0) && ok;
    if (!ok || rename(tmp, path) != 0) {
        snprintf(err, errlen, "--dump: writing '%s' failed (%s)", path,
                 strerror(ok ? errno : saved));
        unlink(tmp);
        return -1;
    }
    sync_parent_dir(path);
    return 0;
}
