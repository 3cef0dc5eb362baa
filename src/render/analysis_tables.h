/* The registry of analysis tables: each table of `gpuprof analyze` named once.
 *
 * GP__ANALYSIS_TABLES(X) calls X(BIT, FN, NAME, ALIAS, JSON, CSV) once per table, in the order the
 * text and JSON documents show them: BIT    its GP_AT_* bit (include/gpuprof/analyze.h) FN     the
 * renderers' function stem: analysis_text.c's FN(FILE *, const gp_analysis *) (void, or gp_status
 * when it can fail), analysis_json.c's FN(gp__jw *, const gp_analysis *) writing the member JSON
 * first (key and value; it may add members after it: tests/analyze/test_tables.c checks each
 * table's first member), analysis_csv.c's csv_FN(const gp_analysis *, FILE *) NAME   its name for
 * --table (gp_analysis_table_parse) ALIAS  a second accepted name (the HTA function's or the CSV
 * file's stem) JSON   its member in the JSON document (schema gpuprof.analyze/1) CSV    the file
 * `gpuprof analyze --csv DIR` writes it to Everything that lists tables reads this list: the three
 * renderers' dispatch, the name parser, `gpuprof analyze --help` and its CSV files
 * (app/cli/cmd_analyze.c), docs/analyses.md's list (checked by tests/analyze/test_registry.c).
 * Adding a table: docs/internals/adding-a-table.md. */
#ifndef GP_RENDER_ANALYSIS_TABLES_H
#define GP_RENDER_ANALYSIS_TABLES_H

#include <stddef.h>

#include "gpuprof/analyze.h"

#define GP__ANALYSIS_TABLES(X)                                                                     \
    X(GP_AT_TEMPORAL, temporal, "temporal", "temporal_breakdown", "temporal_breakdown",            \
      "temporal_breakdown.csv")                                                                    \
    X(GP_AT_IDLE, idle, "idle", "idle_time_breakdown", "idle_time_breakdown",                      \
      "idle_time_breakdown.csv")                                                                   \
    X(GP_AT_TYPES, types, "kernel_types", "kernel_type_breakdown", "kernel_type_breakdown",        \
      "kernel_type_breakdown.csv")                                                                 \
    X(GP_AT_KERNELS, kernels, "top_kernels", "kernels", "top_kernels", "top_kernels.csv")          \
    X(GP_AT_OVERLAP, overlap, "overlap", "comm_comp_overlap", "comm_comp_overlap",                 \
      "comm_comp_overlap.csv")                                                                     \
    X(GP_AT_LAUNCH, launch, "launch", "launch_stats", "launch_stats", "launch_stats.csv")          \
    X(GP_AT_QUEUE, queue, "queue", "queue_length", "queue_length", "queue_length.csv")             \
    X(GP_AT_ACTIVITY, activity, "activity", "activity", "activity", "activity.csv")                \
    X(GP_AT_MEMORY, memory, "memory", "memory", "memory", "memory.csv")                            \
    X(GP_AT_PEAK_MEMORY, peak_memory, "peak_memory", "peak_memory", "peak_memory",                 \
      "peak_memory.csv")                                                                           \
    X(GP_AT_IDLE_CAUSES, idle_causes, "idle_causes", "idle_causes", "idle_causes",                 \
      "idle_causes.csv")                                                                           \
    X(GP_AT_STEP_PARTS, step_parts, "step_breakdown", "step_parts", "step_breakdown",              \
      "step_breakdown.csv")                                                                        \
    X(GP_AT_RANKS, ranks, "ranks", "stragglers", "stragglers", "stragglers.csv")                   \
    X(GP_AT_COLLECTIVES, collectives, "collectives", "collectives", "collectives",                 \
      "collectives.csv")                                                                           \
    X(GP_AT_FINDINGS, findings, "findings", "findings", "findings", "findings.csv")                \
    X(GP_AT_CRITICAL_PATH, critical_path, "critical_path", "critical_path", "critical_path",       \
      "critical_path.csv")

/* One table of the list as data (for loops in app and tests). */
typedef struct gp__analysis_table {
    unsigned bit;
    const char *name, *alias, *json, *csv;
} gp__analysis_table;

/* The list above as an array of n entries (*n set), in document order. */
const gp__analysis_table *gp__analysis_tables(size_t *n);

#endif
