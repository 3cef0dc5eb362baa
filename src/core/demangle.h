/* C++ names as people read them: Itanium C++ ABI symbols ("_ZN5aiter...") demangled with
 * libiberty's demangler (the one c++filt and gdb use). Kernel names arrive mangled from CUPTI and
 * in some ROCm and vLLM traces; the trace keeps what the producer wrote, and the tracer and the
 * short display forms (gp_shorten_name) demangle. Internal (gp__ prefix); not installed. */
#ifndef GP_CORE_DEMANGLE_H
#define GP_CORE_DEMANGLE_H

#include <stdbool.h>

/* True when name looks like an Itanium C++ ABI symbol: it starts with "_Z". */
static inline bool gp__is_mangled(const char *name)
{
    return name && name[0] == '_' && name[1] == 'Z';
}

/* The demangled form of name with its parameter list, malloc'd (the caller frees it), or NULL
 * when name is not a mangled C++ symbol, does not demangle (truncated names, as Kineto writes
 * some long ones, do not) or memory ran out. Thread-safe; nesting is bounded by libiberty's
 * recursion limit, so a hostile name costs time linear in its length, not the stack. */
char *gp__demangle(const char *name);

#endif
