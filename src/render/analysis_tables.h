/* The analysis tables of `gpuprof analyze` as the render and app layers see them: the registry
 * (analyze/table_list.h, GP__ANALYSIS_TABLES) as data, and the declarations of each table's three
 * writers, defined in src/render/table_FN.c. Adding a table: docs/internals/adding-a-table.md. */
#ifndef GP_RENDER_ANALYSIS_TABLES_H
#define GP_RENDER_ANALYSIS_TABLES_H

#include <stddef.h>
#include <stdio.h>

#include "gpuprof/analyze.h"
#include "analyze/table_list.h"
#include "core/json_writer.h"

/* One table of the list as data (for loops in app and tests). */
typedef struct gp__analysis_table {
    unsigned bit;
    const char *name, *alias, *json, *csv;
} gp__analysis_table;

/* The list above as an array of n entries (*n set), in document order. */
const gp__analysis_table *gp__analysis_tables(size_t *n);

/* The writers of table FN, each formatting the table from a (computing nothing):
 * gp__table_text_FN: its fixed-width text section (gp_analysis_render_text), GP_OK or GP_ENOMEM;
 * gp__table_json_FN: its member JSON (the registry's) first, then any others of its own
 * (gp_analysis_render_json); gp__table_csv_FN: the rows of its CSV file, header row first
 * (gp_analysis_render_csv). Write errors are left to the caller's ferror / gp__jw_finish. */
#define GP__TABLE_WRITERS(bit, fn, name, alias, json, csv, build)                                  \
    gp_status gp__table_text_##fn(FILE *fp, const gp_analysis *a) GP_WARN_UNUSED;                  \
    void gp__table_json_##fn(gp__jw *w, const gp_analysis *a);                                     \
    void gp__table_csv_##fn(const gp_analysis *a, FILE *fp);
GP__ANALYSIS_TABLES(GP__TABLE_WRITERS)
#undef GP__TABLE_WRITERS

#endif
