/* Private to the timeline model (timeline.c, timeline_cp.c). */
#ifndef GP_ANALYZE_TIMELINE_INTERNAL_H
#define GP_ANALYZE_TIMELINE_INTERNAL_H

#include "gpuprof/report.h"

/* timeline_cp.c: the critical path overlay of a laid-out timeline: runs the critical-path
 * analysis alone on each trace (default analysis options), sets the on_path flag of every path
 * event in the rows that hold its track, the legend per rank and the edges between drawn rows;
 * tl->critical_path true. GP_ENOMEM (tl keeps what was set; gp_timeline_free frees it). */
gp_status gp__timeline_critical_path(gp_timeline *tl) GP_WARN_UNUSED;

/* timeline_coll.c: with several traces, matches their collectives (gp_collectives_analyze, default
 * options) and sets the coll index of every member kernel in the row that draws it, and
 * tl->colls. A job whose collectives cannot be matched gets none. GP_ENOMEM. */
gp_status gp__timeline_collectives(gp_timeline *tl) GP_WARN_UNUSED;

#endif
