/* -finstrument-functions support: GCC/Clang call these hooks at the entry and exit of every
 * function of a module compiled with that flag. They record into the global profiler once
 * gp_profiler_instrument_functions(true) was called; names are resolved at flush (dladdr). This
 * file must never be compiled with -finstrument-functions itself (the attribute guards it). */
#include <stdatomic.h>

#include "produce/profiler/profiler_internal.h"

#define NO_INSTR __attribute__((no_instrument_function))

static _Atomic bool g_on;

NO_INSTR void gp_profiler_instrument_functions(bool on)
{
    if (on)
        (void)gp_profiler_global(); /* create it now, not inside the first hook */
    atomic_store(&g_on, on);
}

NO_INSTR void __cyg_profile_func_enter(void *fn, void *call_site);
NO_INSTR void __cyg_profile_func_exit(void *fn, void *call_site);

/* The profiler the hooks record into: the global one while they are on, else NULL. */
NO_INSTR static gp_profiler *hooked(void)
{
    return atomic_load_explicit(&g_on, memory_order_relaxed) ? gp_profiler_global() : NULL;
}

NO_INSTR void __cyg_profile_func_enter(void *fn, void *call_site)
{
    (void)call_site;
    gp_profiler *p = hooked();
    if (p)
        gp__range_begin_fn(p, fn);
}

NO_INSTR void __cyg_profile_func_exit(void *fn, void *call_site)
{
    (void)call_site;
    gp_profiler *p = hooked();
    if (p)
        gp__range_end_fn(p, fn);
}
