/* Component attribution: a process-wide stack of named components (gp_component_begin/end). The
 * monitor reads the innermost one at every sample. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "gpuprof/monitor.h"

#define MAX_COMPONENTS 256
#define MAX_DEPTH 64

static struct {
    pthread_mutex_t lock;
    char names[MAX_COMPONENTS][64];
    int32_t n_names;
    int32_t stack[MAX_DEPTH];
    int32_t depth;
} C = {.lock = PTHREAD_MUTEX_INITIALIZER};

gp_status gp_component_begin(const char *name)
{
    if (!name || !*name)
        return GP_EINVAL;
    gp_status st = GP_OK;
    pthread_mutex_lock(&C.lock);
    int32_t id = -1;
    for (int32_t i = 0; i < C.n_names; i++)
        if (strncmp(C.names[i], name, sizeof C.names[i] - 1) == 0 &&
            strlen(name) < sizeof C.names[i]) {
            id = i;
            break;
        }
    if (id < 0) {
        if (C.n_names == MAX_COMPONENTS) {
            st = GP_ELIMIT;
            goto done;
        }
        id = C.n_names++;
        snprintf(C.names[id], sizeof C.names[id], "%s", name);
    }
    if (C.depth == MAX_DEPTH) {
        st = GP_ELIMIT;
        goto done;
    }
    C.stack[C.depth++] = id;
done:
    pthread_mutex_unlock(&C.lock);
    return st;
}

gp_status gp_component_end(const char *name)
{
    if (!name || !*name)
        return GP_EINVAL;
    gp_status st = GP_ESTATE;
    pthread_mutex_lock(&C.lock);
    if (C.depth > 0 && strcmp(C.names[C.stack[C.depth - 1]], name) == 0) {
        C.depth--;
        st = GP_OK;
    }
    pthread_mutex_unlock(&C.lock);
    return st;
}

int32_t gp_component_current(void)
{
    pthread_mutex_lock(&C.lock);
    int32_t id = C.depth ? C.stack[C.depth - 1] : -1;
    pthread_mutex_unlock(&C.lock);
    return id;
}

const char *gp_component_name(int32_t id)
{
    pthread_mutex_lock(&C.lock);
    const char *s = id >= 0 && id < C.n_names ? C.names[id] : NULL;
    pthread_mutex_unlock(&C.lock);
    return s;
}

void gp_component_reset(void)
{
    pthread_mutex_lock(&C.lock);
    C.n_names = 0;
    C.depth = 0;
    pthread_mutex_unlock(&C.lock);
}
