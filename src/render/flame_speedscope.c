/* The evented profiles of a speedscope file (gp_flame_evented, built by analyze/flame_events.c):
 * their frames after the sampled profile's, then one "evented" profile per CPU thread and GPU
 * stream, as speedscope's file format has them (../shared/reference/visual-formats.md). */
#include "render/flame_speedscope.h"

void gp__speedscope_frames(gp__jw *w, const gp_flame_evented *e)
{
    for (size_t i = 0; e && i < e->n_frames; i++) {
        const gp_ss_frame *f = &e->frames[i];
        gp__jw_obj_begin(w);
        gp__jw_kv_str(w, "name", f->name);
        if (f->file) {
            gp__jw_kv_str(w, "file", f->file);
            gp__jw_kv_int(w, "line", f->line);
        }
        gp__jw_obj_end(w);
    }
}

void gp__speedscope_profiles(gp__jw *w, const gp_flame_evented *e, size_t frame_base)
{
    for (size_t i = 0; e && i < e->n_profiles; i++) {
        const gp_ss_profile *p = &e->profiles[i];
        gp__jw_obj_begin(w);
        gp__jw_kv_str(w, "type", "evented");
        gp__jw_kv_str(w, "name", p->name);
        gp__jw_kv_str(w, "unit", "nanoseconds");
        gp__jw_kv_int(w, "startValue", p->start);
        gp__jw_kv_int(w, "endValue", p->end);
        gp__jw_key(w, "events");
        gp__jw_arr_begin(w);
        for (size_t k = 0; k < p->n_events; k++) {
            gp__jw_obj_begin(w);
            gp__jw_kv_str(w, "type", p->events[k].open ? "O" : "C");
            gp__jw_kv_int(w, "at", p->events[k].at);
            gp__jw_kv_int(w, "frame", (int64_t)(frame_base + p->events[k].frame));
            gp__jw_obj_end(w);
        }
        gp__jw_arr_end(w);
        gp__jw_obj_end(w);
    }
}
