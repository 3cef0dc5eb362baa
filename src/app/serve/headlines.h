/* The index's headline figures of each trace or job (span, GPU busy, ranks, device, compiled
 * regions: gp__job_headline), cached per entry: computed once per name, size and modification
 * time by a worker thread of their own, never in a request (an index request answers at once
 * with the figures known so far and queues the others). */
#ifndef GP_APP_SERVE_HEADLINES_H
#define GP_APP_SERVE_HEADLINES_H

#include "app/serve/serve.h"

typedef struct gp__headlines gp__headlines;

/* A cache of the entries of dir (which must outlive it) whose worker reads traces and jobs of at
 * most max_bytes; NULL when out of memory or the thread cannot start. */
gp__headlines *gp__headlines_new(const gp__serve_dir *dir, uint64_t max_bytes);
/* Stops the worker (after the read it is doing) and frees the cache. NULL: nothing. */
void gp__headlines_free(gp__headlines *h);

/* Sets v[i].head and has_head of the n listed trace and job entries whose figures are known for
 * their name, size and time; queues the others for the worker. Thread-safe, never reads. */
void gp__headlines_fill(gp__headlines *h, gp__serve_entry *v, size_t n);
/* A number that changes each time the worker learns an entry's figures (0 for NULL): a page
 * built from gp__headlines_fill is current while it stays the same. */
uint64_t gp__headlines_version(gp__headlines *h);

#endif
