/* The JSON string writer every record part uses (records, scheduling, microbenchmark results):
 * a leaf that calls nothing else of the harness. */
#include "sb_internal.h"

#include <stdio.h>

void sb_put_json_string(FILE *f, const char *s) {
    fputc('"', f);
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        if (*c == '"' || *c == '\\')
            fprintf(f, "\\%c", *c);
        else if (*c < 0x20)
            fprintf(f, "\\u%04x", *c);
        else
            fputc(*c, f);
    }
    fputc('"', f);
}
