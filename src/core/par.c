/* See par.h. */
#include "core/par.h"

#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#define MAX_THREADS 16

typedef struct par_job {
    atomic_size_t next;
    size_t n;
    void (*fn)(void *ctx, size_t i);
    void *ctx;
} par_job;

static void *worker(void *arg)
{
    par_job *j = arg;
    for (;;) {
        size_t i = atomic_fetch_add(&j->next, 1);
        if (i >= j->n)
            return NULL;
        j->fn(j->ctx, i);
    }
}

void gp__par_for(size_t n, int threads, void (*fn)(void *ctx, size_t i), void *ctx)
{
    par_job j = {.n = n, .fn = fn, .ctx = ctx};
    atomic_init(&j.next, 0);
    if (threads > MAX_THREADS)
        threads = MAX_THREADS;
    if ((size_t)threads > n)
        threads = (int)n;
    pthread_t th[MAX_THREADS];
    int started = 0;
    for (int k = 1; k < threads; k++) {
        if (pthread_create(&th[started], NULL, worker, &j) != 0)
            break; /* fewer helpers: the caller takes their share */
        started++;
    }
    worker(&j);
    for (int k = 0; k < started; k++)
        pthread_join(th[k], NULL);
}

int gp__par_threads(int requested, int max)
{
    if (requested > 0)
        return requested < max ? requested : max;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    if (cpus < 1)
        cpus = 1;
    return cpus < max ? (int)cpus : max;
}
