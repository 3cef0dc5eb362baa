/* Component attribution: a process-wide stack of named components (gp_component_begin/end). The
 * monitor reads the innermost one at every sample. */
#include <stdio.h>
#include <string.h>

#include "core/lock.h"
#include "gpuprof/monitor.h"

#define MAX_COMPONENTS 256
#define MAX_DEPTH 64

static gp__mutex comp_lock = GP_MUTEX_INIT;

static struct {
    char names[MAX_COMPONENTS][64];
    int32_t n_names;
    int32_t stack[MAX_DEPTH];
    int32_t depth;
} C GP_GUARDED_BY(comp_lock);

gp_status gp_component_begin(const char *name)
{
    if (!name || !*name)
        return GP_EINVAL;
    gp_status st = GP_OK;
    gp__mutex_lock(&comp_lock);
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
    gp__mutex_unlock(&comp_lock);
    return st;
}

gp_status gp_component_end(const char *name)
{
    if (!name || !*name)
        return GP_EINVAL;
    gp_status st = GP_ESTATE;
    gp__mutex_lock(&comp_lock);
    if (C.depth > 0 && strcmp(C.names[C.stack[C.depth - 1]], name) == 0) {
        C.depth--;
        st = GP_OK;
    }
    gp__mutex_unlock(&comp_lock);
    return st;
}

int32_t gp_component_current(void)
{
    gp__mutex_lock(&comp_lock);
    int32_t id = C.depth ? C.stack[C.depth - 1] : -1;
    gp__mutex_unlock(&comp_lock);
    return id;
}

const char *gp_component_name(int32_t id)
{
    gp__mutex_lock(&comp_lock);
    const char *s = id >= 0 && id < C.n_names ? C.names[id] : NULL;
    gp__mutex_unlock(&comp_lock);
    return s;
}

void gp_component_reset(void)
{
    gp__mutex_lock(&comp_lock);
    C.n_names = 0;
    C.depth = 0;
    gp__mutex_unlock(&comp_lock);
}
