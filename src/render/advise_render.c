/* Renderers of gpuprof advise: the findings of a gp_analysis (analyze's bottleneck rules and the
 * profile rules) as suggestions, in text or JSON ("gpuprof.advise/1"). They format; every figure
 * comes from the analysis. */
#include <math.h>
#include <string.h>

#include "core/json_writer.h"
#include "render/render_internal.h"
#include "gpuprof/advise.h"

/* The potential speedup current / estimated; NaN when there is no estimate. */
static double speedup_of(const gp_finding *f)
{
    return f->estimated_ns > 0 ? (double)f->current_ns / (double)f->estimated_ns : NAN;
}

static bool shown(const gp_finding *f, const gp_advise_render_opts *o)
{
    return !o || f->priority <= o->min_priority;
}

gp_status gp_advise_render_text(const gp_analysis *a, const gp_advise_render_opts *o, FILE *fp)
{
    size_t n = 0;
    for (size_t i = 0; i < a->n_findings; i++)
        n += shown(&a->findings[i], o);
    fprintf(fp, "gpuprof advise%s%s: %zu suggestion%s", o && o->source ? ": " : "",
            o && o->source ? o->source : "", n, n == 1 ? "" : "s");
    if (o && o->min_priority != GP_PRIO_LOW)
        fprintf(fp, " of priority %s or higher", gp_priority_name(o->min_priority));
    fputs(a->n_findings && a->findings[0].cause ? " (the causes first, then by estimated gain)\n"
                                                : " (by estimated gain)\n",
          fp);
    size_t k = 0;
    for (size_t i = 0; i < a->n_findings; i++) {
        const gp_finding *f = &a->findings[i];
        if (!shown(f, o))
            continue;
        char who[256] = "";
        if (f->n_ranks) {
            gp_ranks_format(f->ranks, f->n_ranks, "-", who + 2, sizeof who - 2);
            memcpy(who, ", ", 2);
        }
        char title[512];
        gp__finding_title(f, title, sizeof title);
        fprintf(fp, "\n%zu. [%s/%s] %s (rule %s%s)\n", ++k, gp_priority_name(f->priority),
                gp_suggestion_type_name(f->type), title, f->rule, who);
        if (f->current_ns > 0) {
            double sp = speedup_of(f);
            fprintf(fp, "   time: %.3f ms now -> %.3f ms estimated", (double)f->current_ns / 1e6,
                    (double)f->estimated_ns / 1e6);
            if (!isnan(sp))
                fprintf(fp, " (potential speedup %.2fx)", sp);
            fputc('\n', fp);
        } else {
            fprintf(fp, "   estimated gain: %.3f ms\n", (double)f->gain_ns / 1e6);
        }
        const char *expected = gp__finding_expected(f);
        if (expected)
            fprintf(fp, "   expected improvement: %s\n", expected);
        fprintf(fp, "   how: %s\n   evidence:", gp__finding_advice(f));
        gp__finding_evidence_text(f, fp);
        for (size_t e = 0; e < f->n_objects; e++) {
            char ob[600];
            gp__finding_object_text(&f->objects[e], ob, sizeof ob);
            fprintf(fp, "\n   - %s", ob);
        }
        fputc('\n', fp);
    }
    if (n == 0)
        fputs("\nNo rule fired.\n", fp);
    size_t n_skip;
    const gp_advise_skipped *sk = gp_advise_skipped_rules(&n_skip);
    for (size_t i = 0; i < n_skip; i++)
        fprintf(fp, "\nnot evaluated: %s (%s)\n", sk[i].rule, sk[i].why);
    return ferror(fp) ? GP_EIO : GP_OK;
}

static void kv_num(gp__jw *w, const char *key, double v)
{
    gp__jw_key(w, key);
    if (isnan(v)) {
        gp__jw_null(w);
        return;
    }
    char buf[48];
    int len = snprintf(buf, sizeof buf, "%.6g", v);
    gp__jw_raw(w, buf, (size_t)len);
}

/* key: v, or null when !present. */
static void kv_ns(gp__jw *w, const char *key, gp_ns v, bool present)
{
    gp__jw_key(w, key);
    if (present)
        gp__jw_int(w, v);
    else
        gp__jw_null(w);
}

static void kv_str_or_null(gp__jw *w, const char *key, const char *v)
{
    gp__jw_key(w, key);
    if (v)
        gp__jw_str(w, v);
    else
        gp__jw_null(w);
}

gp_status gp_advise_render_json(const gp_analysis *a, const gp_advise_render_opts *o, FILE *fp)
{
    gp__jw w;
    gp__jw_init(&w, fp);
    w.pretty = true;
    gp__jw_obj_begin(&w);
    gp__jw_kv_str(&w, "schema", "gpuprof.advise/1");
    gp__jw_kv_str(&w, "source", o && o->source ? o->source : "");
    gp__jw_kv_str(&w, "min_priority", gp_priority_name(o ? o->min_priority : GP_PRIO_LOW));
    gp__jw_key(&w, "suggestions");
    gp__jw_arr_begin(&w);
    for (size_t i = 0; i < a->n_findings; i++) {
        const gp_finding *f = &a->findings[i];
        if (!shown(f, o))
            continue;
        gp__jw_obj_begin(&w);
        char title[512];
        gp__finding_title(f, title, sizeof title);
        gp__jw_kv_str(&w, "rule", f->rule);
        kv_str_or_null(&w, "operation", gp_finding_object_of(f, GP_OBJ_OP));
        gp__jw_kv_str(&w, "type", gp_suggestion_type_name(f->type));
        gp__jw_kv_str(&w, "priority", gp_priority_name(f->priority));
        gp__jw_kv_str(&w, "description", title);
        kv_str_or_null(&w, "expected_improvement", gp__finding_expected(f));
        gp__jw_kv_str(&w, "implementation_hint", gp__finding_advice(f));
        gp__jw_kv_int(&w, "gain_ns", f->gain_ns);
        kv_ns(&w, "current_ns", f->current_ns, f->current_ns > 0);
        kv_ns(&w, "estimated_ns", f->estimated_ns, f->current_ns > 0);
        kv_num(&w, "potential_speedup", f->current_ns > 0 ? speedup_of(f) : NAN);
        gp__jw_key(&w, "ranks");
        gp__jw_arr_begin(&w);
        for (size_t r = 0; r < f->n_ranks; r++)
            gp__jw_int(&w, f->ranks[r]);
        gp__jw_arr_end(&w);
        gp__jw_key(&w, "evidence");
        gp__jw_arr_begin(&w);
        for (size_t e = 0; e < f->n_evidence; e++) {
            gp__jw_obj_begin(&w);
            gp__jw_kv_str(&w, "name", f->evidence[e].name);
            kv_num(&w, "value", f->evidence[e].value);
            gp__jw_kv_str(&w, "unit", gp_finding_unit_name(f->evidence[e].unit));
            gp__jw_obj_end(&w);
        }
        gp__jw_arr_end(&w);
        gp__jw_obj_end(&w);
    }
    gp__jw_arr_end(&w);
    gp__jw_key(&w, "not_evaluated");
    gp__jw_arr_begin(&w);
    size_t n_skip;
    const gp_advise_skipped *sk = gp_advise_skipped_rules(&n_skip);
    for (size_t i = 0; i < n_skip; i++) {
        gp__jw_obj_begin(&w);
        gp__jw_kv_str(&w, "rule", sk[i].rule);
        gp__jw_kv_str(&w, "why", sk[i].why);
        gp__jw_obj_end(&w);
    }
    gp__jw_arr_end(&w);
    gp__jw_obj_end(&w);
    gp_status st = gp__jw_finish(&w);
    if (st == GP_OK && fputc('\n', fp) == EOF)
        st = GP_EIO;
    return st;
}
