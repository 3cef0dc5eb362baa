/* C++ symbol demangling (see demangle.h) by libiberty, linked statically (libiberty-dev).
 * No demangler of our own: the Itanium ABI grammar is large and still grows (std::bfloat16_t,
 * "DF16b", which GCC 12's __cxa_demangle does not know, is in today's ROCm kernel names).
 *
 * Bounds. libiberty's printer expands back-references, so the text can double with each level of
 * a name: 199 bytes gave 3.4 MB and ~330 would need 14 GB. The callback interface allocates
 * nothing (its tables are arrays on the stack), so the text goes to our buffer and a longjmp ends
 * the printing once it passes GP__DEMANGLE_MAX_OUT. libiberty's own recursion limit also refuses
 * every name over 1,024 bytes (CUTLASS kernels run to 1,700), so it is off and the name's length
 * is bounded instead: GP__DEMANGLE_MAX_IN keeps the stack arrays (~64 bytes per name byte) and the
 * printer's nesting (at most one level per name byte) well inside a thread's stack. */
#include "core/demangle.h"

#include <demangle.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

typedef struct sink {
    char *buf;
    size_t len, cap;
    jmp_buf stop; /* taken when the text outgrows GP__DEMANGLE_MAX_OUT or memory runs out */
} sink;

static void put(const char *s, size_t n, void *opaque)
{
    sink *k = opaque;
    if (n > GP__DEMANGLE_MAX_OUT - k->len)
        longjmp(k->stop, 1);
    if (k->len + n + 1 > k->cap) {
        size_t cap = k->cap ? k->cap : 256;
        while (cap < k->len + n + 1)
            cap *= 2;
        char *b = realloc(k->buf, cap);
        if (!b)
            longjmp(k->stop, 1);
        k->buf = b;
        k->cap = cap;
    }
    memcpy(k->buf + k->len, s, n);
    k->len += n;
    k->buf[k->len] = '\0';
}

char *gp__demangle(const char *name)
{
    if (!gp__is_mangled(name) || strnlen(name, GP__DEMANGLE_MAX_IN + 1) > GP__DEMANGLE_MAX_IN)
        return NULL;
    /* volatile: read after a longjmp from inside the printer */
    sink k = {0};
    sink *volatile kp = &k;
    if (setjmp(k.stop) != 0) {
        free(kp->buf);
        return NULL;
    }
    if (!cplus_demangle_v3_callback(name, DMGL_PARAMS | DMGL_ANSI | DMGL_NO_RECURSE_LIMIT, put,
                                    kp) ||
        !kp->buf) {
        free(kp->buf);
        return NULL;
    }
    return kp->buf;
}
