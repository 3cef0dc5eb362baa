/* NVTX v3 injection: fills the CORE and CORE2 function-table slots of each NVTX copy that
 * initialises with handlers recording into the global profiler. Push/pop become nested ranges of
 * the calling thread; start/end ranges (which may end on another thread) are kept in a small
 * table until their end. Names are interned (NVTX strings may be temporary). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>

#include "core/imap.h"
#include "produce/profiler/profiler_internal.h"

typedef struct open_span {
    const char *name;
    uint64_t t0;
    int64_t tid;
} open_span;

static gp__mutex g_lock = GP_MUTEX_INIT;
static gp__imap g_open GP_GUARDED_BY(g_lock); /* range id -> index into g_spans */
static open_span *g_spans GP_GUARDED_BY(g_lock);
static size_t g_n_spans GP_GUARDED_BY(g_lock), g_cap_spans GP_GUARDED_BY(g_lock);
static _Atomic uint64_t g_next_id = 1;
static _Atomic int g_inits;

static const char *attr_name(gp_profiler *p, const nvtxEventAttributes_t *a)
{
    if (!a)
        return "(null)";
    switch (a->messageType) {
    case NVTX_MESSAGE_TYPE_ASCII:
        return a->message.ascii ? gp_profiler_intern(p, a->message.ascii) : "(null)";
    case NVTX_MESSAGE_TYPE_REGISTERED:
        /* our nvtxDomainRegisterStringA returns the interned string itself */
        return a->message.registered ? (const char *)a->message.registered : "(null)";
    case NVTX_MESSAGE_TYPE_UNICODE:
        return "(unicode name)";
    default:
        return "(unnamed)";
    }
}

static int NVTX_API push_a(const char *msg)
{
    gp_profiler *p = gp_profiler_global();
    if (p)
        gp_range_begin(p, gp_profiler_intern(p, msg ? msg : "(null)"), NULL);
    return 0;
}

static int NVTX_API push_ex(const nvtxEventAttributes_t *a)
{
    gp_profiler *p = gp_profiler_global();
    if (p)
        gp_range_begin(p, attr_name(p, a), NULL);
    return 0;
}

static int NVTX_API pop(void)
{
    gp_range_end(gp_profiler_global());
    return 0;
}

static nvtxRangeId_t start_named(const char *name)
{
    gp_profiler *p = gp_profiler_global();
    if (!p || !gp_profiler_enabled(p))
        return 0;
    nvtxRangeId_t id = atomic_fetch_add(&g_next_id, 1);
    open_span sp = {name, gp__prof_now(p), (int64_t)syscall(SYS_gettid)};
    gp__mutex_lock(&g_lock);
    size_t idx = g_n_spans;
    open_span *slot = NULL;
    if (g_open.n_slots || gp__imap_init(&g_open, 64) == GP_OK)
        slot = GP_PUSH(g_spans, g_n_spans, g_cap_spans);
    if (slot && gp__imap_put(&g_open, (int64_t)id, idx) == GP_OK)
        *slot = sp;
    else
        id = 0;
    gp__mutex_unlock(&g_lock);
    return id;
}

static nvtxRangeId_t NVTX_API start_a(const char *msg)
{
    gp_profiler *p = gp_profiler_global();
    return p ? start_named(gp_profiler_intern(p, msg ? msg : "(null)")) : 0;
}

static nvtxRangeId_t NVTX_API start_ex(const nvtxEventAttributes_t *a)
{
    gp_profiler *p = gp_profiler_global();
    return p ? start_named(attr_name(p, a)) : 0;
}

static void NVTX_API range_end(nvtxRangeId_t id)
{
    gp_profiler *p = gp_profiler_global();
    if (!p || id == 0)
        return;
    uint64_t t1 = gp__prof_now(p);
    uint64_t idx;
    open_span sp = {0};
    bool found = false;
    gp__mutex_lock(&g_lock);
    if (g_open.n_slots && gp__imap_get(&g_open, (int64_t)id, &idx) && idx < g_n_spans &&
        g_spans[idx].name) {
        sp = g_spans[idx];
        g_spans[idx].name = NULL; /* slot freed; the table is compacted when all are closed */
        found = true;
        bool any = false;
        for (size_t i = 0; i < g_n_spans && !any; i++)
            any = g_spans[i].name != NULL;
        if (!any) {
            g_n_spans = 0;
            gp__imap_free(&g_open);
            memset(&g_open, 0, sizeof(g_open));
        }
    }
    gp__mutex_unlock(&g_lock);
    if (found)
        gp__prof_add_span(p, sp.name, sp.t0, t1, sp.tid);
}

static int NVTX_API d_push(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
    (void)d;
    return push_ex(a);
}

static int NVTX_API d_pop(nvtxDomainHandle_t d)
{
    (void)d;
    return pop();
}

static nvtxRangeId_t NVTX_API d_start(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
    (void)d;
    return start_ex(a);
}

static void NVTX_API d_end(nvtxDomainHandle_t d, nvtxRangeId_t id)
{
    (void)d;
    range_end(id);
}

static nvtxStringHandle_t NVTX_API d_register_a(nvtxDomainHandle_t d, const char *s)
{
    (void)d;
    return (nvtxStringHandle_t)gp_profiler_intern(gp_profiler_global(), s ? s : "(null)");
}

static nvtxDomainHandle_t NVTX_API d_create_a(const char *name)
{
    /* Any non-null handle: ranges of every domain go to the same profiler. */
    return (nvtxDomainHandle_t)gp_profiler_intern(gp_profiler_global(), name ? name : "domain");
}

static void set_slot(NvtxFunctionTable table, unsigned size, unsigned cbid, NvtxFunctionPointer f)
{
    if (table && cbid <= size && table[cbid])
        *table[cbid] = f;
}

int gp_nvtx_initialize(const void *(*get_export_table)(uint32_t id))
{
    if (!get_export_table)
        return 0;
    const NvtxExportTableCallbacks *cb =
        (const NvtxExportTableCallbacks *)get_export_table(NVTX_ETID_CALLBACKS);
    if (!cb || cb->struct_size < sizeof(*cb) || !cb->GetModuleFunctionTable)
        return 0;
    if (!gp_profiler_global())
        return 0;
    NvtxFunctionTable core = NULL, core2 = NULL;
    unsigned n_core = 0, n_core2 = 0;
    if (cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &core, &n_core)) {
        set_slot(core, n_core, NVTX_CBID_CORE_RangePushA, (NvtxFunctionPointer)push_a);
        set_slot(core, n_core, NVTX_CBID_CORE_RangePushEx, (NvtxFunctionPointer)push_ex);
        set_slot(core, n_core, NVTX_CBID_CORE_RangePop, (NvtxFunctionPointer)pop);
        set_slot(core, n_core, NVTX_CBID_CORE_RangeStartA, (NvtxFunctionPointer)start_a);
        set_slot(core, n_core, NVTX_CBID_CORE_RangeStartEx, (NvtxFunctionPointer)start_ex);
        set_slot(core, n_core, NVTX_CBID_CORE_RangeEnd, (NvtxFunctionPointer)range_end);
    }
    if (cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &core2, &n_core2)) {
        set_slot(core2, n_core2, NVTX_CBID_CORE2_DomainRangePushEx, (NvtxFunctionPointer)d_push);
        set_slot(core2, n_core2, NVTX_CBID_CORE2_DomainRangePop, (NvtxFunctionPointer)d_pop);
        set_slot(core2, n_core2, NVTX_CBID_CORE2_DomainRangeStartEx, (NvtxFunctionPointer)d_start);
        set_slot(core2, n_core2, NVTX_CBID_CORE2_DomainRangeEnd, (NvtxFunctionPointer)d_end);
        set_slot(core2, n_core2, NVTX_CBID_CORE2_DomainRegisterStringA,
                 (NvtxFunctionPointer)d_register_a);
        set_slot(core2, n_core2, NVTX_CBID_CORE2_DomainCreateA, (NvtxFunctionPointer)d_create_a);
    }
    atomic_fetch_add(&g_inits, 1);
    return 1;
}

int gp__nvtx_init_count(void)
{
    return atomic_load(&g_inits);
}
