/* The HTML page of two jobs compared rank by rank (gpuprof diff JOB_A JOB_B --html, issue 33.3):
 * one section per rank pair holding that pair's own diff page (gp_diff_render_html, with its
 * flame graph) in an iframe's srcdoc, and a rank selector that shows one section at a time (its
 * labels carry each pair's speedup, regressions and improvements, so the pair that changed is
 * found without opening each).
 * Without scripts every section shows, one under the other. */
#include <math.h>
#include <stdio.h>

#include "render/diff_render.h"
#include "render/render_internal.h"

static const char head[] =
    "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
    "<title>gpuprof diff: two jobs, rank by rank</title>\n<style>\n"
    "body{margin:0;font-family:system-ui,sans-serif}\n"
    "header{padding:8px 12px;background:#f4f5f7;border-bottom:1px solid #ccd}\n"
    "header h1{font-size:16px;margin:0 0 6px}\n"
    ".gp-note{color:#8a5a00;margin:4px 0 0}\n"
    ".gp-pair h2{font-size:14px;margin:8px 12px 0}\n"
    ".gp-pair iframe{border:0;width:100%;height:calc(100vh - 90px)}\n"
    /* with the script: one pair, filling the window under the header whatever its height (notes
     * make it taller), so only the pair's page scrolls */
    "html.gp-js body{height:100vh;display:flex;flex-direction:column}\n"
    "html.gp-js header{flex:none}\n"
    "html.gp-js .gp-pair{flex:1;min-height:0;display:flex;flex-direction:column}\n"
    "html.gp-js .gp-pair[hidden]{display:none}\n"
    "html.gp-js .gp-pair iframe{flex:1;height:auto;min-height:0;display:block}\n"
    "</style>\n</head>\n<body>\n<header>\n"
    "<h1>gpuprof diff: two jobs, rank <i>i</i> of the base with rank <i>i</i> of the current</h1>\n"
    "<label>Rank pair <select id=\"gp-rank\">\n";

static const char tail[] =
    "<script>\n"
    "(function () {\n"
    "  document.documentElement.className += ' gp-js';\n"
    "  var sel = document.getElementById('gp-rank');\n"
    "  var pairs = document.querySelectorAll('.gp-pair');\n"
    "  function show() {\n"
    "    for (var i = 0; i < pairs.length; i++)\n"
    "      pairs[i].hidden = pairs[i].getAttribute('data-rank') !== sel.value;\n"
    "    if (history.replaceState) history.replaceState(null, '', '#rank=' + sel.value);\n"
    "  }\n"
    "  var m = /^#rank=(\\d+)$/.exec(location.hash);\n"
    "  if (m && document.querySelector('.gp-pair[data-rank=\"' + m[1] + '\"]')) sel.value = m[1];\n"
    "  sel.addEventListener('change', show);\n"
    "  show();\n"
    "})();\n"
    "</script>\n</body>\n</html>\n";

gp_status gp__diff_jobs_html(const gp__diff_job_page *pages, size_t n, const char *const *notes,
                             size_t n_notes, FILE *fp)
{
    fputs(head, fp);
    for (size_t i = 0; i < n; i++) {
        const gp__diff_job_page *p = &pages[i];
        fprintf(fp, "<option value=\"%d\">rank %d: ", (int)p->rank, (int)p->rank);
        if (isnan(p->speedup))
            fputs("speedup n/a", fp);
        else
            fprintf(fp, "%.3fx", p->speedup);
        fprintf(fp, ", %zu regression%s, %zu improvement%s</option>\n", p->regressions,
                p->regressions == 1 ? "" : "s", p->improvements, p->improvements == 1 ? "" : "s");
    }
    fprintf(fp, "</select></label> <span>%zu rank pair%s</span>\n", n, n == 1 ? "" : "s");
    for (size_t i = 0; i < n_notes; i++) {
        fputs("<p class=\"gp-note\">NOTE: ", fp);
        gp__html_str(fp, notes[i]);
        fputs("</p>\n", fp);
    }
    fputs("</header>\n", fp);
    for (size_t i = 0; i < n; i++) {
        fprintf(fp,
                "<section class=\"gp-pair\" data-rank=\"%d\">\n<h2>Rank %d: base rank %d with "
                "current rank %d</h2>\n<iframe title=\"rank %d\" srcdoc=\"",
                (int)pages[i].rank, (int)pages[i].rank, (int)pages[i].rank, (int)pages[i].rank,
                (int)pages[i].rank);
        gp__html_str(fp, pages[i].html);
        fputs("\"></iframe>\n</section>\n", fp);
    }
    fputs(tail, fp);
    return ferror(fp) ? GP_EIO : GP_OK;
}
