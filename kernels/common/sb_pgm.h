/* --dump: iteration counts as a 16-bit P5 PGM (maxval 65535, big-endian, clamped), written
 * atomically (temp file in the same directory, fsync, rename). */
#ifndef SB_PGM_H
#define SB_PGM_H

#include <stddef.h>
#include <stdint.h>

/* Fails (returns -1, err = one line naming --dump and the path) unless a file can be created next
 * to `path` and `path` is not a directory. Leaves nothing behind. */
int sb_pgm_check_writable(const char *path, char *err, size_t errlen);

/* Writes the image; on failure returns -1 with err set and leaves `path` untouched. */
int sb_pgm_write(const char *path, const uint32_t *counts, int32_t width, int32_t height, char *err,
                 size_t errlen);

#endif /* SB_PGM_H */
