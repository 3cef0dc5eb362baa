/* Flame graph geometry: which frames a picture of a given width draws, and where. Computed in
 * analyze (analyze/flame.c) from the tree; the SVG and HTML writers of render/ only draw it. */
#ifndef GP_ANALYZE_FLAME_LAYOUT_H
#define GP_ANALYZE_FLAME_LAYOUT_H
#include <stddef.h>
#include <stdint.h>
#include "gpuprof/report.h"

/* A drawn flame frame: tree node index and its geometry at full (unzoomed) width. */
typedef struct gp__flame_px {
    uint32_t node;
    uint32_t parent;  /* index into the drawn array (the root is its own parent) */
    double x, w;      /* px */
    int row;          /* 0 = top row of the picture */
    size_t label_len; /* bytes of the name that fit in the frame (0 = no label) */
    int ellipsis;     /* 1 when the label is cut and ".." follows */
} gp__flame_px;

/* Lays out the tree for a picture width px wide (with 10 px side margins): frames at least
 * min_px wide are drawn, the root at the bottom row. *out is malloc'd (caller frees); *rows
 * receives the number of rows. */
gp_status gp__flame_layout_px(const gp_flame_tree *t, int width, double min_px, gp__flame_px **out,
                              size_t *n_out, int *rows) GP_WARN_UNUSED;

#endif
