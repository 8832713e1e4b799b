/* The one way a kernel gives up (harness.h): a leaf that calls nothing else of the harness, so
 * every part may fail without depending on the context's other code. */
#include "sb_internal.h"

#include <stdio.h>
#include <stdlib.h>

void sb_fail(sb_ctx *ctx, const char *message) {
    fprintf(stderr, "%s: %s\n", ctx->prog, message);
    exit(1);
}
