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

/* The process lines of the table: a "#" header line, then one line per process ("  p" first):
 * GPU, pid, user, type, GPU memory MiB, SM%, host CPU%, RSS MiB, command; "-" for unknown. Nothing
 * when n == 0. */
void gp_monitor_process_table(FILE *fp, const gp_process_row *r, size_t n);
/* The CSV header of --processes: ts_ns,gpu,pid,user,type,gpu_mem_bytes,sm_util,mem_util,
 * cpu_percent,rss_bytes,command. */
void gp_monitor_process_csv_header(FILE *fp);
/* One CSV row per process; empty cells for unknown figures, the command quoted as CSV. */
void gp_monitor_process_csv_rows(FILE *fp, gp_ns ts, const gp_process_row *r, size_t n);
/* One JSON line {"type":"process","ts_ns","gpu","pid","user","process_type","gpu_mem_bytes",
 * "sm_util","mem_util","cpu_percent","rss_bytes","command"} per process; unknown figures null. */
void gp_monitor_process_write_json(FILE *fp, gp_ns ts, const gp_process_row *r, size_t n);
/* "compute", "graphics", "mps" or "compute+graphics"... for GP_PROC_* bits ("-" when none). */
const char *gp_monitor_process_type_text(uint32_t types);

#endif
