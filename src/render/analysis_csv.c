/* CSV renderer: one table per call (its writer in src/render/table_*.c), header row first, RFC
 * 4180 quoting; columns are the JSON fields of the same table (docs/analyses.md). Also the
 * registry as data (gp__analysis_tables) and the table name parser. */
#include <string.h>

#include "core/util.h"
#include "render/analysis_tables.h"

static const gp__analysis_table tables[] = {
#define X(bit, fn, name, alias, json, csv, build) {bit, name, alias, json, csv},
    GP__ANALYSIS_TABLES(X)
#undef X
};

const gp__analysis_table *gp__analysis_tables(size_t *n)
{
    *n = GP_ARRAY_LEN(tables);
    return tables;
}

gp_status gp_analysis_table_parse(const char *name, unsigned *out)
{
    if (!name)
        return GP_EINVAL;
    if (strcmp(name, "all") == 0) {
        *out = GP_AT_ALL;
        return GP_OK;
    }
    for (size_t i = 0; i < GP_ARRAY_LEN(tables); i++)
        if (strcmp(name, tables[i].name) == 0 || strcmp(name, tables[i].alias) == 0) {
            *out = tables[i].bit;
            return GP_OK;
        }
    return GP_EINVAL;
}

/* One writer per table, from the registry (render/analysis_tables.h). */
static const struct {
    unsigned table;
    void (*write)(const gp_analysis *a, FILE *fp);
} csv_writers[] = {
#define X(bit, fn, name, alias, json, csv, build) {bit, gp__table_csv_##fn},
    GP__ANALYSIS_TABLES(X)
#undef X
};

/* The CSV of one of the tables of csv_writers. */
static gp_status analysis_csv(const gp_analysis *a, unsigned table, FILE *fp)
{
    for (size_t i = 0; i < sizeof csv_writers / sizeof *csv_writers; i++)
        if (csv_writers[i].table == table) {
            csv_writers[i].write(a, fp);
            return ferror(fp) ? GP_EIO : GP_OK;
        }
    return GP_EINVAL;
}

gp_status gp_analysis_render_csv(const gp_analysis *a, unsigned table, FILE *fp)
{
    return analysis_csv(a, table, fp);
}
