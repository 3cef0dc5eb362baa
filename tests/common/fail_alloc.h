/* Failing allocations for tests linked with -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc:
 * set g_fail_at to N to fail the N-th allocation (1-based) counted in g_count; 0 = never.
 * Include it in exactly one file of a test program (it defines the wrappers). */
#ifndef GP_TESTS_FAIL_ALLOC_H
#define GP_TESTS_FAIL_ALLOC_H

#include <stddef.h>

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t m);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t m);
void *__wrap_realloc(void *p, size_t n);

static long g_count, g_fail_at; /* fail the g_fail_at-th allocation (1-based); 0 = never */

static int should_fail(void)
{
    return g_fail_at && ++g_count == g_fail_at;
}

void *__wrap_malloc(size_t n)
{
    return should_fail() ? NULL : __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t m)
{
    return should_fail() ? NULL : __real_calloc(n, m);
}

void *__wrap_realloc(void *p, size_t n)
{
    return should_fail() ? NULL : __real_realloc(p, n);
}

#endif
