/* Kernel classification: user rules (POSIX extended regexes) first, then the built-in rules of the
 * mode. HTA's rules are Python re.match patterns, i.e. anchored at the start of the name; they are
 * written here with an explicit ^ on every alternative so that POSIX regexec (which searches)
 * behaves the same. */
#include <pthread.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/util.h"
#include "analyze/analyze_internal.h"

/* HTA (facebookresearch/HolisticTraceAnalysis @ f4d0062c, hta/utils/utils.py), checked in order. */
static const char HTA_COMM[] = "^nccl.*|^hip|^hccl|^.*ncclKernel.*";
static const char HTA_MEMORY[] = "^(hip)?Memcpy|^(hip)?Memset|^dma";
static const char HTA_NON_COMPUTE[] = "^nccl|^.*Memcpy|^.*Memset|^.*dma|^.*Sync|^Stream Wait "
                                      "Event|^cuda.*LaunchKernel|^hip";

/* gpuprof's defaults: every NCCL/RCCL/HCCL/MSCCL kernel generation and the symmetric-memory
 * (multimem, one/two-shot) all-reduce kernels of recent PyTorch are communication; hip* is not. */
static const char DEF_COMM[] = "^nccl|^rccl|^hccl|^msccl|nccl(dev)?kernel|multimem_|all_?reduce_"
                               "kernel|one_shot_all_reduce|two_shot_all_reduce|reduce_scatter_"
                               "kernel|all_gather_kernel|all_to_all_kernel|cross_device_reduce";
static const char DEF_MEMORY[] = "^(memcpy|memset)|^dma|^cuda ?mem(cpy|set)";

struct gp__classifier {
    bool hta;
    regex_t *user;
    gp_kernel_type *user_type;
    size_t n_user;
    regex_t comm, memory, non_compute;
    bool compiled;
};

const char *gp_kernel_type_name(gp_kernel_type t)
{
    static const char *const names[] = {[GP_KT_COMPUTATION] = "COMPUTATION",
                                        [GP_KT_COMMUNICATION] = "COMMUNICATION",
                                        [GP_KT_MEMORY] = "MEMORY",
                                        [GP_KT_OTHER] = "OTHER"};
    return GP_NAME_OF(names, t, "UNKNOWN");
}

gp_status gp_kernel_type_parse(const char *s, gp_kernel_type *out)
{
    static const gp__named names[] = {{"computation", GP_KT_COMPUTATION},
                                      {"compute", GP_KT_COMPUTATION},
                                      {"comp", GP_KT_COMPUTATION},
                                      {"communication", GP_KT_COMMUNICATION},
                                      {"comm", GP_KT_COMMUNICATION},
                                      {"memory", GP_KT_MEMORY},
                                      {"mem", GP_KT_MEMORY},
                                      {"other", GP_KT_OTHER}};
    int v = GP_VALUE_OF_NOCASE(names, s, GP_KT_COUNT);
    if (v == GP_KT_COUNT)
        return GP_EINVAL;
    *out = (gp_kernel_type)v;
    return GP_OK;
}

void gp__classifier_free(gp__classifier *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n_user; i++)
        regfree(&c->user[i]);
    free(c->user);
    free(c->user_type);
    if (c->compiled) {
        regfree(&c->comm);
        regfree(&c->memory);
        regfree(&c->non_compute);
    }
    free(c);
}

gp_status gp__classifier_new(const gp_analyze_opts *o, gp__classifier **out, gp_error *err)
{
    gp__classifier *c = calloc(1, sizeof(*c));
    if (!c)
        return GP_ENOMEM;
    c->hta = o->hta;
    int flags = REG_EXTENDED | REG_NOSUB | (o->hta ? 0 : REG_ICASE);
    if (regcomp(&c->comm, o->hta ? HTA_COMM : DEF_COMM, flags) != 0)
        goto enomem;
    if (regcomp(&c->memory, o->hta ? HTA_MEMORY : DEF_MEMORY, flags) != 0) {
        regfree(&c->comm);
        goto enomem;
    }
    if (regcomp(&c->non_compute, HTA_NON_COMPUTE, REG_EXTENDED | REG_NOSUB) != 0) {
        regfree(&c->comm);
        regfree(&c->memory);
        goto enomem;
    }
    c->compiled = true;
    if (o->n_rules) {
        c->user = calloc(o->n_rules, sizeof(*c->user));
        c->user_type = calloc(o->n_rules, sizeof(*c->user_type));
        if (!c->user || !c->user_type)
            goto enomem;
        for (size_t i = 0; i < o->n_rules; i++) {
            int rc = regcomp(&c->user[i], o->rules[i].regex, REG_EXTENDED | REG_NOSUB);
            if (rc != 0) {
                char msg[200];
                regerror(rc, &c->user[i], msg, sizeof(msg));
                gp_error_set(err, GP_EINVAL, "classification rule %zu: bad regex '%s': %s", i + 1,
                             o->rules[i].regex, msg);
                gp__classifier_free(c);
                return GP_EINVAL;
            }
            c->user_type[i] = o->rules[i].type;
            c->n_user++;
        }
    }
    *out = c;
    return GP_OK;
enomem:
    gp__classifier_free(c);
    return GP_ENOMEM;
}

static bool matches(const regex_t *re, const char *name)
{
    return regexec(re, name, 0, NULL, 0) == 0;
}

gp_kernel_type gp__classify(const gp__classifier *c, const char *name, gp_event_kind kind)
{
    for (size_t i = 0; i < c->n_user; i++)
        if (matches(&c->user[i], name))
            return c->user_type[i];
    if (c->hta) {
        if (matches(&c->comm, name))
            return GP_KT_COMMUNICATION;
        if (matches(&c->memory, name))
            return GP_KT_MEMORY;
        if (!matches(&c->non_compute, name))
            return GP_KT_COMPUTATION;
        return GP_KT_OTHER;
    }
    switch (kind) {
    case GP_EV_MEMCPY:
    case GP_EV_MEMSET:
        return GP_KT_MEMORY;
    case GP_EV_KERNEL:
        break;
    default:
        return GP_KT_OTHER;
    }
    if (matches(&c->comm, name))
        return GP_KT_COMMUNICATION;
    if (matches(&c->memory, name))
        return GP_KT_MEMORY;
    return GP_KT_COMPUTATION;
}

/* The built-in classifiers (default and HTA rules), compiled once for the process: compiling the
 * rules on every call made this function cost a regcomp per name (a caller looping over 300,000
 * kernels took 35 s). Never freed; glibc's regexec may share a compiled pattern across threads. */
static gp__classifier *builtin[2];
static pthread_once_t builtin_once = PTHREAD_ONCE_INIT;

static void builtin_init(void)
{
    for (int hta = 0; hta < 2; hta++) {
        gp_analyze_opts o;
        gp_analyze_opts_init(&o);
        o.hta = hta;
        if (gp__classifier_new(&o, &builtin[hta], NULL) != GP_OK)
            builtin[hta] = NULL;
    }
}

gp_kernel_type gp_classify_name(const char *name, gp_event_kind kind, bool hta)
{
    pthread_once(&builtin_once, builtin_init);
    const gp__classifier *c = builtin[hta ? 1 : 0];
    return c ? gp__classify(c, name ? name : "", kind) : GP_KT_COUNT;
}
