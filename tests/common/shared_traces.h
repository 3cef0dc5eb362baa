/* Helpers for tests that read the real traces in $GP_SHARED_DIR/traces (../shared/traces). */
#ifndef GP_TESTS_SHARED_TRACES_H
#define GP_TESTS_SHARED_TRACES_H

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* True when the shared traces folder is readable. */
static inline int gp_test_have_shared_traces(void)
{
    const char *shared = getenv("GP_SHARED_DIR");
    char dir[4096];
    int n = snprintf(dir, sizeof dir, "%s/traces", shared ? shared : "../shared");
    return n > 0 && (size_t)n < sizeof dir && access(dir, R_OK | X_OK) == 0;
}

/* The exit code of a cmocka group: its own when a case failed; otherwise 77 (ctest SKIP) when the
 * shared traces are absent, because the cases that need them only skipped; else 0. */
static inline int gp_test_exit(int cmocka_rc)
{
    if (cmocka_rc != 0)
        return cmocka_rc;
    return gp_test_have_shared_traces() ? 0 : 77;
}

#endif
