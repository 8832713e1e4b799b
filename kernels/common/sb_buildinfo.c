/* The compiler flags of one binary, compiled per binary by kernels/c.mk with
 * -DSB_CFLAGS='"<the real flags>"'. Overrides the weak default in sb_record.c, so binaries built
 * without it (e.g. other fragments that only link HARNESS_OBJS) still report the harness flags. */
#ifndef SB_CFLAGS
#error "compile with -DSB_CFLAGS='\"<flags>\"'"
#endif

const char sb_build_flags[] = SB_CFLAGS;
