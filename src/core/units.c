/* The one formatter of sizes and durations (core/units.h). */
#include "core/units.h"

#include <stdio.h>

void gp__fmt_dur(char *buf, size_t cap, int64_t ns)
{
    double v = (double)ns;
    double a = v < 0 ? -v : v;
    if (a >= 1e9)
        snprintf(buf, cap, "%.3f s", v / 1e9);
    else if (a >= 1e6)
        snprintf(buf, cap, "%.3f ms", v / 1e6);
    else if (a >= 1e3)
        snprintf(buf, cap, "%.3f us", v / 1e3);
    else
        snprintf(buf, cap, "%lld ns", (long long)ns);
}

void gp__fmt_bytes(char *buf, size_t cap, double bytes)
{
    static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    double v = bytes;
    while ((v >= 1024.0 || v <= -1024.0) && u < 4) {
        v /= 1024.0;
        u++;
    }
    if (u == 0)
        snprintf(buf, cap, "%.0f B", v);
    else
        snprintf(buf, cap, "%.2f %s", v, units[u]);
}
