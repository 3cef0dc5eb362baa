/* Fixed-width text of gp_analysis (the default output of `gpuprof analyze`): the header and notes,
 * then each table's section (src/render/table_*.c) in the registry's order. */
#include "render/analysis_tables.h"

gp_status gp_analysis_render_text(const gp_analysis *a, unsigned tables, FILE *fp)
{
    if (tables == 0)
        tables = GP_AT_ALL;
    fprintf(fp, "gpuprof analyze: %zu rank%s, steps %s, %s definitions\n", a->n_ranks,
            a->n_ranks == 1 ? "" : "s",
            a->opts.steps == GP_STEPS_ALL   ? "all"
            : a->opts.steps == GP_STEPS_HTA ? "hta (last ProfilerStep dropped)"
                                            : "range",
            a->opts.hta ? "HTA" : "gpuprof");
    if (a->note.msg[0])
        fprintf(fp, "note: %s\n", a->note.msg);
    for (size_t i = 0; i < a->n_ranks; i++)
        if (a->ranks[i].note.msg[0])
            fprintf(fp, "note (rank %d): %s\n", a->ranks[i].rank, a->ranks[i].note.msg);
    gp_status st = GP_OK;
#define X(bit, fn, name, alias, json, csv, build)                                                  \
    if (st == GP_OK && (tables & (bit)))                                                           \
        st = gp__table_text_##fn(fp, a);
    GP__ANALYSIS_TABLES(X)
#undef X
    if (st != GP_OK)
        return st;
    return ferror(fp) ? GP_EIO : GP_OK;
}
