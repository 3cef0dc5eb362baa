/* libFuzzer target for the TORCH_TRACE reader (src/io/compile_log.c, compile_records.c,
 * compile_payload.c), the compile analysis and its renderers. The first input byte picks the size
 * of the reader's reads (1..256 bytes, or whole when 0), so lines and payloads cross every chunk
 * boundary; the rest is the log. A read must succeed or fail cleanly; when it succeeds the model's
 * invariants must hold (every payload and phase belongs to a compile id in range, counts add up,
 * payload texts read back at their indexed size) and every renderer must succeed. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuprof/compile.h"
#include "io/compile_log_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(bool ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "compile log invariant broken: %s\n", what);
        abort();
    }
}

static void check_log(const gp_compile_log *log)
{
    const gp_compile_read_stats *s = &log->stats;
    check(s->records + s->payload_lines + s->blank_lines + s->bad_prefix + s->bad_json <= s->lines,
          "line counts add up");
    check(log->n_warnings <= log->warnings_total, "warnings kept <= counted");
    uint64_t kernels = 0;
    gp_compile_payload_reader *r;
    if (gp_compile_payload_open(log, &r) != GP_OK)
        return;
    for (size_t i = 0; i < log->n_payloads; i++) {
        const gp_compile_payload *p = &log->payloads[i];
        check(p->file < log->n_files, "payload file in range");
        check(p->unit == UINT32_MAX || p->unit < log->n_units, "payload unit in range");
        check(p->first_kernel + p->n_kernels <= log->n_kernel_names, "kernel names in range");
        check(p->n_aten_ops <= p->n_ops, "aten ops within ops");
        kernels += p->n_kernels;
        const char *text;
        size_t len;
        if (gp_compile_payload_text(r, p, SIZE_MAX, &text, &len, NULL) == GP_OK)
            check(len == p->bytes, "payload text reads back at its size");
    }
    gp_compile_payload_close(r);
    check(kernels == log->n_kernel_names, "every kernel name belongs to one payload");
    for (size_t i = 0; i < log->n_units; i++) {
        const gp_compile_unit *u = &log->units[i];
        for (size_t k = 0; k < u->n_payloads; k++)
            check(u->payloads[k] < log->n_payloads && log->payloads[u->payloads[k]].unit == i,
                  "unit payloads point back");
        for (size_t k = 0; k < u->n_phases; k++)
            check(u->phases[k].total >= 0, "phase time >= 0");
    }
}

static void check_analysis(const gp_compile_log *log, const gp_compile_analysis *a)
{
    check(a->summary.recompiles <= a->summary.compiles, "recompiles <= compiles");
    check(a->n_recompiles == a->summary.recompiles, "recompile list");
    for (size_t i = 0; i < a->n_breaks; i++)
        check(
            (a->breaks[i].unit == UINT32_MAX || a->breaks[i].unit < log->n_units) &&
                (a->breaks[i].resume_unit == UINT32_MAX || a->breaks[i].resume_unit < log->n_units),
            "break units in range");
    for (size_t i = 0; i < a->n_graphs; i++)
        check(a->graphs[i].fusion_ratio >= 0, "fusion ratio >= 0");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    gp__clog_max_read = data[0];
    gp_compile_log *log = NULL;
    gp_error err;
    gp_status st =
        gp_compile_log_read_buffer((const char *)data + 1, size - 1, "fuzz.log", &log, &err);
    gp__clog_max_read = 0;
    if (st != GP_OK)
        return 0;
    check_log(log);
    gp_compile_analysis *a = NULL;
    if (gp_compile_analyze(log, &a) == GP_OK) {
        check_analysis(log, a);
        FILE *fp = fopen("/dev/null", "w");
        if (fp) {
            gp_compile_report rep = {.log = log, .analysis = a};
            check(gp_compile_render_text(&rep, fp) == GP_OK, "text renders");
            check(gp_compile_render_json(&rep, fp) == GP_OK, "json renders");
            check(gp_compile_render_html(&rep, fp, &err) == GP_OK, "html renders");
            fclose(fp);
        }
        gp_compile_analysis_free(a);
    }
    gp_compile_log_free(log);
    return 0;
}
