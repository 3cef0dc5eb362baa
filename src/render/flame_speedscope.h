/* Private to the flame renderer (flame_render.c, flame_speedscope.c): the evented profiles of a
 * speedscope file. */
#ifndef GP_RENDER_FLAME_SPEEDSCOPE_H
#define GP_RENDER_FLAME_SPEEDSCOPE_H

#include <stddef.h>

#include "core/json_writer.h"
#include "gpuprof/report.h"

/* Writes the frames of e (NULL: none) as elements of the file's shared "frames" array: {name,
 * file, line}, file and line where known. */
void gp__speedscope_frames(gp__jw *w, const gp_flame_evented *e);
/* Writes the evented profiles of e (NULL: none) as elements of the "profiles" array; frame
 * numbers are offset by frame_base (the frames written before e's). */
void gp__speedscope_profiles(gp__jw *w, const gp_flame_evented *e, size_t frame_base);

#endif
