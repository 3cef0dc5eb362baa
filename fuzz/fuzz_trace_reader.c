/* libFuzzer target for the Kineto/Chrome trace reader. The first input byte picks how many bytes
 * the reader receives per read (so chunk-boundary restarts are fuzzed too); the rest is the trace.
 * A successful read is also written back and re-read, and must round-trip, unless the trace held
 * ill-formed UTF-8: the writer then writes U+FFFD for it (#21 item 8), and only the re-read is
 * checked. Every input is also read with the scanner's scalar level (io/json_scan.h) after the
 * SIMD one (SSE2 or AVX2, by the low bit of the first byte): the same status, an equal model or the
 * same message. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json_writer.h"
#include "gpuprof/trace.h"
#include "io/json_scan.h"
#include "io/reader_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    size_t piece = data[0] < 128 ? 0 : (size_t)(data[0] - 127);
    gp_read_opts o;
    gp_read_opts_init(&o);
    o.quiet = true;
    gp_trace *t = NULL, *sc = NULL;
    gp_error err, esc;
    gp__json_simd_set(data[0] & 1 ? GP__JSON_SIMD_SSE2 : GP__JSON_SIMD_AVX2);
    gp_status st =
        gp__trace_read_buffer_pieces((const char *)data + 1, size - 1, "fuzz", &o, piece, &t, &err);
    gp__json_simd_set(GP__JSON_SIMD_SCALAR);
    gp_status ss = gp__trace_read_buffer_pieces((const char *)data + 1, size - 1, "fuzz", &o, piece,
                                                &sc, &esc);
    gp__json_simd_set(-1);
    if (st != ss || (st != GP_OK && strcmp(err.msg, esc.msg) != 0)) {
        fprintf(stderr, "SIMD and scalar reads differ: %d %s / %d %s\n", st, st ? err.msg : "", ss,
                ss ? esc.msg : "");
        abort();
    }
    if (st == GP_OK) {
        gp_error why = {0};
        if (!gp_trace_equal(t, sc, &why)) {
            fprintf(stderr, "SIMD and scalar models differ: %s\n", why.msg);
            abort();
        }
    }
    gp_trace_free(sc);
    if (st != GP_OK)
        return 0;
    char *text = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&text, &len);
    uint64_t replaced = gp__json_utf8_replaced();
    if (fp && gp_trace_write_chrome_stream(t, fp, &err) == GP_OK) {
        fclose(fp);
        fp = NULL;
        gp_trace *back = NULL;
        if (gp_trace_read_buffer(text, len, "fuzz-rt", &o, &back, &err) != GP_OK) {
            fprintf(stderr, "re-read of written trace failed: %s\n", err.msg);
            abort();
        }
        gp_error why = {0};
        if (gp__json_utf8_replaced() == replaced && !gp_trace_equal(t, back, &why)) {
            fprintf(stderr, "round trip differs: %s\n", why.msg);
            abort();
        }
        gp_trace_free(back);
    }
    if (fp)
        fclose(fp);
    free(text);
    gp_trace_free(t);
    return 0;
}
