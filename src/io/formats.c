/* The reader registry (see formats.h): one entry per trace format. */
#include "io/formats.h"

#include <string.h>

#include "io/reader_internal.h"

/* The first non-blank byte after an optional UTF-8 byte order mark, or NULL. */
static const char *first_byte(const char *head, size_t n)
{
    const char *p = head, *end = head + n;
    if (n >= 3 && memcmp(p, "\xef\xbb\xbf", 3) == 0)
        p += 3;
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
        p++;
    return p < end ? p : NULL;
}

static bool contains(const char *head, size_t n, const char *needle)
{
    size_t k = strlen(needle);
    for (size_t i = 0; i + k <= n; i++)
        if (head[i] == needle[0] && memcmp(head + i, needle, k) == 0)
            return true;
    return false;
}

/* The legacy autograd profiler's process names (io/kineto_events.c decides per event). */
static bool has_legacy_pid(const char *head, size_t n)
{
    return contains(head, n, "\"CPU functions\"") || contains(head, n, "\"CUDA functions\"");
}

/* Kineto / Chrome trace JSON: an object holding "traceEvents", or a bare array of events. */
static gp__sniff sniff_kineto(const char *head, size_t n)
{
    const char *p = first_byte(head, n);
    if (!p)
        return GP__SNIFF_NO;
    if (*p == '{')
        return contains(head, n, "\"traceEvents\"") ? GP__SNIFF_YES : GP__SNIFF_MAYBE;
    return *p == '[' ? GP__SNIFF_MAYBE : GP__SNIFF_NO;
}

/* The legacy autograd-profiler format: a bare array whose events carry its pid strings. */
static gp__sniff sniff_legacy(const char *head, size_t n)
{
    const char *p = first_byte(head, n);
    return p && *p == '[' && has_legacy_pid(head, n) ? GP__SNIFF_YES : GP__SNIFF_NO;
}

/* *.json and *.json.gz: what profilers name their traces (the content decides the format). */
static bool json_file_name(const char *name)
{
    size_t l = strlen(name);
    return name[0] != '.' && ((l > 5 && strcmp(name + l - 5, ".json") == 0) ||
                              (l > 8 && strcmp(name + l - 8, ".json.gz") == 0));
}

/* Kineto JSON and the legacy format share one streaming reader: the legacy format is decided per
 * event from its pid strings, so that every piece of a parallel read decides as a whole read does.
 * Its own entry says so by name and sniff (and to whoever adds the next JSON dialect). */
static const gp__trace_format formats[] = {
    {"kineto",
     "Kineto / Chrome trace JSON (torch.profiler, HTA's inputs, gpuprof trace and convert), plain "
     "or gzip",
     sniff_kineto, json_file_name, gp__kineto_read, NULL},
    {"legacy_autograd",
     "the legacy autograd profiler's export_chrome_trace (PyTorch without Kineto): a bare array, "
     "pids \"CPU functions\" / \"CUDA functions\"",
     sniff_legacy, json_file_name, gp__kineto_read, NULL},
    {"cupti",
     "CUPTI activity records, converted in the traced process (gpuprof trace, "
     "src/produce/tracer/convert.c) and written as Kineto JSON",
     NULL, NULL, NULL, "io/gpu_records.h"},
};

const gp__trace_format *gp__trace_formats(size_t *n)
{
    *n = sizeof formats / sizeof formats[0];
    return formats;
}

const gp__trace_format *gp__trace_format_of(const char *head, size_t n)
{
    const gp__trace_format *best = &formats[0];
    gp__sniff best_sniff = GP__SNIFF_NO;
    for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++) {
        if (!formats[i].read || !formats[i].sniff)
            continue;
        gp__sniff s = formats[i].sniff(head, n);
        if (s > best_sniff) {
            best = &formats[i];
            best_sniff = s;
        }
    }
    return best;
}

const gp__trace_format *gp__trace_format_of_input(const gp__input *in)
{
    char head[GP__SNIFF_BYTES];
    return gp__trace_format_of(head, gp__input_peek(in, head, sizeof head));
}

bool gp_trace_file_name(const char *name)
{
    for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++)
        if (formats[i].file_name && formats[i].file_name(name))
            return true;
    return false;
}
