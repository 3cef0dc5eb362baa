/* C++ symbol demangling (see demangle.h) by libiberty, linked statically (libiberty-dev).
 * No demangler of our own: the Itanium ABI grammar is large and still grows (std::bfloat16_t,
 * "DF16b", which GCC 12's __cxa_demangle does not know, is in today's ROCm kernel names). */
#include "core/demangle.h"

#include <demangle.h>
#include <stdlib.h>

char *gp__demangle(const char *name)
{
    if (!gp__is_mangled(name))
        return NULL;
    return cplus_demangle_v3(name, DMGL_PARAMS | DMGL_ANSI);
}
