/*
 * Command-line parsing (getopt_long). Pure: no output, no exit, no I/O, so it is unit-tested in
 * kernels/tests and behaves identically on every MPI rank.
 */
#ifndef SB_OPTIONS_H
#define SB_OPTIONS_H

#include "sb_internal.h"

#include <getopt.h>
#include <stdio.h>

enum { SB_PARSE_OK = 0, SB_PARSE_HELP = 1, SB_PARSE_ERROR = 2 };

/* Largest image the harness allocates (1 GiB of uint32 counts). */
#define SB_MAX_PIXELS (1LL << 28)
#define SB_MAX_THREADS 4096

/* Parses argv for kernel `desc` into *cli (defaults first). On SB_PARSE_ERROR, err holds one line
 * naming the option and the value, without the program prefix and without a newline. */
int sb_parse_options(const sb_kernel_desc *desc, int argc, char **argv, sb_cli *cli, char *err,
                     size_t errlen);

/* sb_micro.c: the kernel-specific options of SB_KERNEL_MICRO kernels (getopt codes 2000+i). */
size_t sb_micro_longopts(const sb_kernel_desc *desc, struct option *out, sb_cli *cli);
int sb_micro_take_option(const sb_kernel_desc *desc, int code, const char *value, sb_cli *cli);
int sb_micro_check(const sb_cli *cli, char *err, size_t errlen);
void sb_micro_print_help(FILE *out);

/* Writes the --help text for `desc` to `out`. */
void sb_print_help(const sb_kernel_desc *desc, const char *prog, FILE *out);

#endif /* SB_OPTIONS_H */
