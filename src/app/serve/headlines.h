/* The index's headline figures of each trace or job (span, GPU busy, ranks, device, compiled
 * regions: gp__job_headline), cached per entry: computed once per name, size and modification
 * time, not per request. */
#ifndef GP_APP_SERVE_HEADLINES_H
#define GP_APP_SERVE_HEADLINES_H

#include "app/serve/serve.h"

typedef struct gp__headlines gp__headlines;

/* A new, empty cache; NULL when out of memory. */
gp__headlines *gp__headlines_new(void);
void gp__headlines_free(gp__headlines *h);

/* Sets v[i].head (and has_head) of the n listed trace and job entries of dir: from the cache when
 * the entry's name, size and time match; else reads it (as the views do) when it is at most
 * max_bytes, at most `budget` reads per call (the rest show no figures until a later call).
 * Thread-safe; the reads run outside the cache's lock. */
void gp__headlines_fill(gp__headlines *h, const gp__serve_dir *dir, gp__serve_entry *v, size_t n,
                        size_t budget, uint64_t max_bytes);

#endif
