#include "core/util.h"

#include "core/invariant.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

gp_status gp__reserve(void **data, size_t *cap, size_t elem, size_t need)
{
    if (need <= *cap)
        return GP_OK;
    if (need > SIZE_MAX / elem)
        return GP_ENOMEM;
    void *p = realloc(*data, need * elem);
    if (!p)
        return GP_ENOMEM;
    *data = p;
    *cap = need;
    return GP_OK;
}

gp_status gp__grow(void **data, size_t *cap, size_t elem, size_t need)
{
    if (need <= *cap)
        return GP_OK;
    size_t ncap = *cap ? *cap : 16;
    while (ncap < need) {
        if (ncap > SIZE_MAX / 2)
            return GP_ENOMEM;
        ncap *= 2;
    }
    return gp__reserve(data, cap, elem, ncap);
}

gp_status gp__buf_append(gp__buf *b, const void *p, size_t n)
{
    if (b->max && b->len + n > b->max)
        return GP_ELIMIT;
    if (b->len + n + 1 > b->cap) {
        gp_status s = gp__grow((void **)&b->data, &b->cap, 1, b->len + n + 1);
        if (s != GP_OK)
            return s;
    }
    if (n)
        memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = '\0';
    return GP_OK;
}

gp_status gp__buf_printf(gp__buf *b, const char *fmt, ...)
{
    char small[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        return GP_EINVAL;
    if ((size_t)n < sizeof small)
        return gp__buf_append(b, small, (size_t)n);
    char *big = malloc((size_t)n + 1);
    if (!big)
        return GP_ENOMEM;
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    gp_status s = gp__buf_append(b, big, (size_t)n);
    free(big);
    return s;
}

gp_status gp__buf_terminate(gp__buf *b)
{
    return gp__buf_append(b, "", 0);
}

void gp__buf_free(gp__buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

static inline uint64_t rd64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

static inline uint64_t mix(uint64_t a, uint64_t b)
{
    __uint128_t r = (__uint128_t)a * b;
    return (uint64_t)r ^ (uint64_t)(r >> 64);
}

uint64_t gp__hash_bytes(const void *data, size_t n)
{
    return gp__hash_bytes_seeded(data, n, 0);
}

uint64_t gp__hash_bytes_seeded(const void *data, size_t n, uint64_t seed)
{
    const uint8_t *p = data;
    uint64_t h = 0x9E3779B97F4A7C15ULL ^ n ^ seed;
    while (n >= 16) {
        h = mix(rd64(p) ^ 0xa0761d6478bd642fULL, rd64(p + 8) ^ h);
        p += 16;
        n -= 16;
    }
    uint64_t a = 0, b = 0;
    if (n >= 8) {
        a = rd64(p);
        b = rd64(p + n - 8);
    } else if (n > 0) {
        for (size_t i = 0; i < n; i++)
            a |= (uint64_t)p[i] << (8 * i);
    }
    return mix(a ^ 0xe7037ed1a0b428dbULL, b ^ h ^ 0x8ebc6af09c88c6e3ULL);
}

gp_status gp__status_of_errno(int e)
{
    return e == ENOENT || e == ENOTDIR ? GP_ENOENT : e == ENOMEM ? GP_ENOMEM : GP_EIO;
}

void gp__zero(void *p, size_t n)
{
    memset(p, 0, n);
}

_Noreturn void gp__invariant_failed(const char *cond, const char *file, int line, const char *fmt,
                                    ...)
{
    fprintf(stderr, "gpuprof: invariant broken: %s (", cond);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, ") at %s:%d\n", file, line);
    abort();
}

static bool names_equal(const char *a, const char *b, bool nocase)
{
    return (nocase ? strcasecmp(a, b) : strcmp(a, b)) == 0;
}

int gp__value_of(const gp__named *t, size_t n, const char *name, bool nocase, int fallback)
{
    for (size_t i = 0; name && i < n; i++)
        if (names_equal(name, t[i].name, nocase))
            return t[i].value;
    return fallback;
}

int gp__index_of(const char *const *names, size_t n, const char *name, bool nocase)
{
    for (size_t i = 0; name && i < n; i++)
        if (names[i] && names_equal(name, names[i], nocase))
            return (int)i;
    return -1;
}
