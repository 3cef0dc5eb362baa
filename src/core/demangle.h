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

/* Longest name demangled (bytes) and longest text produced: bounds on the stack and on the work
 * a hostile name can ask for (demangle.c). Real kernel names reach 1,700 bytes. */
#define GP__DEMANGLE_MAX_IN 4096
#define GP__DEMANGLE_MAX_OUT 65536

/* The demangled form of name with its parameter list, malloc'd (the caller frees it), or NULL
 * when name is not a mangled C++ symbol, does not demangle (a name cut short does not), is
 * longer than GP__DEMANGLE_MAX_IN, would demangle to more than GP__DEMANGLE_MAX_OUT bytes (back-
 * references can double the text per level), or memory ran out. Thread-safe, no global state. */
char *gp__demangle(const char *name);

#endif
