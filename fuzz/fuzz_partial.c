/* libFuzzer target for gp_partial_parse (the reader of `gpuprof analyze --partial` files,
 * docs/jobs.md) and what a merge does with a partial: the input is one partial result. When it
 * parses, it must merge with itself only as an error (two partials claiming one rank), serialize
 * back to bytes that parse again, and its analysis must render as text and JSON. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuprof/analyze.h"
#include "gpuprof/partial.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(bool ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "partial invariant broken: %s\n", what);
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gp_error err = {0};
    gp_partial *p = NULL;
    if (gp_partial_parse(data, size, "fuzz", &p, &err) != GP_OK) {
        check(err.msg[0] != '\0', "a refused partial says why");
        return 0;
    }
    check(gp_partial_n_ranks(p) > 0, "a parsed partial holds a rank");
    const gp_partial *twice[2] = {p, p};
    gp_partial *m = NULL;
    check(gp_partial_merge(twice, 2, &m, &err) == GP_EINVAL, "one rank twice is refused");
    unsigned char *buf = NULL;
    size_t len = 0;
    gp_partial *again = NULL;
    check(gp_partial_serialize(p, &buf, &len, &err) == GP_OK, "serializes");
    check(gp_partial_parse(buf, len, "again", &again, &err) == GP_OK, "its bytes parse again");
    gp_analysis *a = NULL;
    check(gp_partial_analysis(again, &a, &err) == GP_OK, "analyses");
    FILE *null = fopen("/dev/null", "w");
    if (null) {
        check(gp_analysis_render_text(a, GP_AT_ALL, null) == GP_OK, "text renders");
        check(gp_analysis_render_json(a, GP_AT_ALL, null) == GP_OK, "JSON renders");
        fclose(null);
    }
    gp_analysis_free(a);
    gp_partial_free(again);
    free(buf);
    gp_partial_free(p);
    return 0;
}
