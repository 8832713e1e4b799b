/* A minimal test runner for the C-level tests: CHECK records a failure with its location and goes
 * on; sb_test_summary prints "N passed, M failed" and gives the exit status. */
#ifndef SB_TEST_H
#define SB_TEST_H

#include <stdio.h>

static int sb_tests_passed, sb_tests_failed;

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (cond) {                                                                                \
            sb_tests_passed++;                                                                     \
        } else {                                                                                   \
            sb_tests_failed++;                                                                     \
            fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);                        \
        }                                                                                          \
    } while (0)

static inline int sb_test_summary(void) {
    printf("%d passed, %d failed\n", sb_tests_passed, sb_tests_failed);
    return sb_tests_failed == 0 && sb_tests_passed > 0 ? 0 : 1;
}

#endif /* SB_TEST_H */
