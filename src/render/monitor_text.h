/* The live monitor's sample lines (gpuprof monitor): the table, CSV and JSON-lines formats of one
 * GPU's latest sample. Writers only; the caller serialises output and checks the stream. */
#ifndef GP_RENDER_MONITOR_TEXT_H
#define GP_RENDER_MONITOR_TEXT_H

#include <stdbool.h>
#include <stdio.h>

#include "gpuprof/monitor.h"

/* The table's two header lines (column names, units; sizes in MiB). */
void gp_monitor_table_header(FILE *fp);
/* One table row; "no sample yet" or "lost" when there is no sample to show. */
void gp_monitor_table_row(FILE *fp, const gp_gpu_ident *id, const gp_gpu_sample *s, bool have);
/* The CSV header: index, ts_ns and one column per metric (gp_metric_name). */
void gp_monitor_csv_header(FILE *fp);
/* One CSV row; empty cells for metrics the sample does not have. */
void gp_monitor_csv_row(FILE *fp, const gp_gpu_ident *id, const gp_gpu_sample *s, bool have);
/* One JSON line {"type":"sample","gpu":...}, metrics by name. */
void gp_monitor_sample_write_json(FILE *fp, const gp_gpu_ident *id, const gp_gpu_sample *s,
                                  bool have);
/* The suggestions as "# suggestion" lines: severity, type, GPU, message, suggestion, evidence
 * ("# suggestions: none" when n == 0). */
void gp_monitor_suggestions_text(FILE *fp, const gp_suggestion *s, size_t n);
/* One JSON line {"type":"suggestions","suggestions":[{"type","severity","gpu","message",
 * "suggestion","evidence"}, ...]}. */
void gp_monitor_suggestions_write_json(FILE *fp, const gp_suggestion *s, size_t n);

#endif
