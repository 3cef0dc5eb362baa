/* The one number parser (core/parse.h). */
#include "core/parse.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"

bool gp__parse_int(const char *text, long long min, long long max, long long *out)
{
    char *end;
    long long v = strtoll(text, &end, 10);
    if (end == text || *end || v < min || v > max)
        return false;
    *out = v;
    return true;
}

bool gp__parse_uint(const char *text, unsigned long long max, unsigned long long *out)
{
    char *end;
    unsigned long long v = strtoull(text, &end, 10);
    if (*text == '\0' || *text == '-' || end == text || *end || v > max)
        return false;
    *out = v;
    return true;
}

bool gp__parse_real(const char *text, double lo, double hi, double *out)
{
    char *end;
    double v = strtod(text, &end);
    if (end == text || *end || !(v >= lo && v <= hi))
        return false;
    *out = v;
    return true;
}

bool gp__parse_duration_ns(const char *text, double bare_ns, int64_t *out)
{
    static const struct {
        const char *unit;
        double ns;
    } units[] = {{"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}, {"m", 60e9}, {"min", 60e9}};
    char *end;
    double v = strtod(text, &end);
    if (end == text || !isfinite(v) || v < 0)
        return false;
    double mult = *end ? 0 : bare_ns;
    for (size_t i = 0; i < GP_ARRAY_LEN(units) && mult == 0; i++)
        if (strcmp(end, units[i].unit) == 0)
            mult = units[i].ns;
    double ns = v * mult;
    if (mult == 0 || ns >= 9.2e18)
        return false;
    *out = (int64_t)(ns + 0.5);
    return true;
}

gp_status gp__parse_duration_ms(const char *text, uint32_t *ms)
{
    int64_t ns;
    if (!gp__parse_duration_ns(text, 1e6, &ns) || ns < 1000000 || ns > 3600 * INT64_C(1000000000))
        return GP_EINVAL;
    *ms = (uint32_t)((ns + 500000) / 1000000);
    return GP_OK;
}
