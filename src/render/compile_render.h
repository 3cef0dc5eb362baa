/* Internals shared by the renderers of `gpuprof compile` (compile_text.c, compile_json.c,
 * compile_html.c). */
#ifndef GP_RENDER_COMPILE_RENDER_H
#define GP_RENDER_COMPILE_RENDER_H

#include <stddef.h>
#include <stdint.h>

/* The compile report's styles (assets/compile.css, embedded at build time). */
extern const char gp__asset_compile_css[];

/* The last component of a path ("" for NULL). */
const char *gp__compile_base(const char *path);
/* A count of compilation_metrics into buf: the number, or "-" when absent (< 0). */
void gp__compile_count(char *buf, size_t cap, int64_t v);

#endif
