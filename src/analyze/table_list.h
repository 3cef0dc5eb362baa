/* The registry of analysis tables: each table of `gpuprof analyze` named once, with the per-rank
 * computations that fill it. It lives in the analyze layer because analyze.c runs the computations
 * it names; the render layer (render/analysis_tables.h) declares and dispatches the writers from
 * the same list, and the app layer lists the tables from it.
 *
 * GP__ANALYSIS_TABLES(X) calls X(BIT, FN, NAME, ALIAS, JSON, CSV, BUILD) once per table, in the
 * order the text and JSON documents show them:
 *   BIT    its GP_AT_* bit (include/gpuprof/analyze.h);
 *   FN     the stem of its writers, defined in src/render/table_FN.c: gp__table_text_FN,
 *          gp__table_json_FN (writing the member JSON first; tests/analyze/test_tables.c checks
 *          it) and gp__table_csv_FN (render/analysis_tables.h declares them);
 *   NAME   its name for --table (gp_analysis_table_parse);
 *   ALIAS  a second accepted name (the HTA function's or the CSV file's stem);
 *   JSON   its member in the JSON document (schema gpuprof.analyze/1);
 *   CSV    the file `gpuprof analyze --csv DIR` writes it to;
 *   BUILD  the per-rank computations that fill it, each as B(stem) for a
 *          gp_status gp__analyze_stem(const gp__view *, gp_rank_analysis *) of the analyze layer
 *          (analyze_internal.h declares them, analyze.c runs them side by side on each rank);
 *          empty for a table that another table's computation fills (overlap, memory) or that
 *          the job-level steps compute (stragglers, collectives, findings).
 * Everything that lists tables reads this list: the computations, the three renderers' dispatch,
 * the name parser, `gpuprof analyze --help` and its CSV files (app/cli/cmd_analyze.c),
 * docs/analyses.md's list (checked by tests/analyze/test_tables.c). Adding a table:
 * docs/internals/adding-a-table.md. */
#ifndef GP_ANALYZE_TABLE_LIST_H
#define GP_ANALYZE_TABLE_LIST_H

/* clang-format off */
#define GP__ANALYSIS_TABLES(X)                                                                     \
    X(GP_AT_TEMPORAL, temporal, "temporal", "temporal_breakdown", "temporal_breakdown",            \
      "temporal_breakdown.csv", B(temporal))                                                       \
    X(GP_AT_IDLE, idle, "idle", "idle_time_breakdown", "idle_time_breakdown",                      \
      "idle_time_breakdown.csv", B(idle))                                                          \
    X(GP_AT_TYPES, types, "kernel_types", "kernel_type_breakdown", "kernel_type_breakdown",        \
      "kernel_type_breakdown.csv", B(types))                                                       \
    X(GP_AT_KERNELS, kernels, "top_kernels", "kernels", "top_kernels", "top_kernels.csv",          \
      B(top_kernels))                                                                              \
    X(GP_AT_OVERLAP, overlap, "overlap", "comm_comp_overlap", "comm_comp_overlap",                 \
      "comm_comp_overlap.csv", /* by temporal */)                                                  \
    X(GP_AT_LAUNCH, launch, "launch", "launch_stats", "launch_stats", "launch_stats.csv",          \
      B(launch_stats))                                                                             \
    X(GP_AT_QUEUE, queue, "queue", "queue_length", "queue_length", "queue_length.csv",             \
      B(queues) B(bandwidth))                                                                      \
    X(GP_AT_ACTIVITY, activity, "activity", "activity", "activity", "activity.csv",                \
      B(activity) B(kernel_stats))                                                                 \
    X(GP_AT_MEMORY, memory, "memory", "memory", "memory", "memory.csv", /* by activity */)         \
    X(GP_AT_PEAK_MEMORY, peak_memory, "peak_memory", "peak_memory", "peak_memory",                 \
      "peak_memory.csv", B(peak_memory))                                                           \
    X(GP_AT_IDLE_CAUSES, idle_causes, "idle_causes", "idle_causes", "idle_causes",                 \
      "idle_causes.csv", B(idle_causes))                                                           \
    X(GP_AT_STEP_PARTS, step_parts, "step_breakdown", "step_parts", "step_breakdown",              \
      "step_breakdown.csv", B(step_parts))                                                         \
    X(GP_AT_RANKS, ranks, "ranks", "stragglers", "stragglers", "stragglers.csv", /* job */)        \
    X(GP_AT_COLLECTIVES, collectives, "collectives", "collectives", "collectives",                 \
      "collectives.csv", /* job */)                                                                \
    X(GP_AT_FINDINGS, findings, "findings", "findings", "findings", "findings.csv", /* job */)     \
    X(GP_AT_CRITICAL_PATH, critical_path, "critical_path", "critical_path", "critical_path",       \
      "critical_path.csv", B(critical_path))
/* clang-format on */

#endif
