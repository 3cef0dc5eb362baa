/* Invariants of rendered pages, shared by the renderer fuzz targets (fuzz/fuzz_*_page.c and
 * fuzz_diff.c; #21 item 5). Every check aborts with a message on stderr, so libFuzzer keeps the
 * input as a crash. Not a target itself (the CMake glob builds fuzz_*.c only). */
#ifndef GP_FUZZ_PAGE_CHECK_H
#define GP_FUZZ_PAGE_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "gpuprof/trace.h"

/* Aborts with "fuzz invariant broken: <what>" when ok is false. */
void gp_fuzz_check(bool ok, const char *what);

/* text[0, len) is exactly one JSON document (optionally followed by blanks), parsed back with
 * jansson: valid UTF-8, no NaN/Inf, no raw control character, nothing after the value. */
void gp_fuzz_check_json(const char *text, size_t len, const char *what);

/* An HTML page or an SVG document that no input string can break out of: every tag is one the
 * renderers write, no event-handler attribute, attribute values quoted; every <script> element
 * is either embedded data (type="application/json": no '<' inside, so no "</script" or "<!--"
 * from the input, and it parses back with jansson) or one of our own scripts byte for byte (the
 * embedded JavaScript assets, the flame SVG's `var GP_FLAME = <JSON>;` prelude with its JSON
 * parsed back); <style> elements hold no '<' outside comments; an iframe's srcdoc is unescaped
 * and checked as a page of its own. '<' before anything but a letter, '/', '!' or '?' is text.
 * text[len] must be '\0' (messages quote from it). Unclosed or misnested elements are not looked
 * for: they cannot carry a script. */
void gp_fuzz_check_page(const char *text, size_t len, const char *what);

/* The renderer targets' input: an option byte, then one trace or two separated by the first NUL
 * byte, read quietly on one thread (op shapes kept). */
typedef struct gp_fuzz_input {
    gp_trace *t[2];
    size_t n; /* traces read: 1 or 2 */
    uint8_t flags;
} gp_fuzz_input;
/* Reads data into in. False (nothing to free) when the first trace, or the second after a NUL,
 * does not read. */
bool gp_fuzz_input_read(const uint8_t *data, size_t size, gp_fuzz_input *in);
void gp_fuzz_input_free(gp_fuzz_input *in);

/* Defines the libFuzzer entry point of a renderer target: reads the input (gp_fuzz_input_read)
 * and, when the traces read, calls fn(&in), then frees them. */
#define GP_FUZZ_TRACES_TARGET(fn)                                                                  \
    int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);                                  \
    int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)                                   \
    {                                                                                              \
        gp_fuzz_input in;                                                                          \
        if (gp_fuzz_input_read(data, size, &in)) {                                                 \
            fn(&in);                                                                               \
            gp_fuzz_input_free(&in);                                                               \
        }                                                                                          \
        return 0;                                                                                  \
    }

/* A memory stream for one rendering: open, render into fp, then close to get text/len. */
typedef struct gp_fuzz_mem {
    char *text;
    size_t len;
    FILE *fp;
} gp_fuzz_mem;
void gp_fuzz_mem_open(gp_fuzz_mem *m);
void gp_fuzz_mem_close(gp_fuzz_mem *m); /* text stays valid until gp_fuzz_mem_free */
void gp_fuzz_mem_free(gp_fuzz_mem *m);

#endif
