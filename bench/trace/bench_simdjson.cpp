// simdjson's on-demand parser touching the fields gpuprof's reader keeps, as the reference for
// issue 37's "one-thread ingest against the best JSON parsers" ratio. Bench only: built when CMake
// finds simdjson (Debian's libsimdjson-dev), never linked into the product.
//
// For each element of traceEvents: ph, cat, name, pid, tid (numbers or strings), ts, dur (numbers),
// id, and every member of args (numbers read as int64 or double, strings read, anything else
// skipped). It builds no model: a checksum of what it read keeps the compiler from dropping the
// work. The whole file is loaded first (simdjson parses a padded buffer in memory), timed apart.
// Also prints the CPU time of gp_trace_read on the same file (one thread, the model built), measured
// in the same run, and the ratio.
//
// Usage: bench_simdjson TRACE.json [repetitions (default 5)]
#include <simdjson.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string_view>
#include <vector>

extern "C" {
#include "gpuprof/trace.h"
}

using namespace simdjson;

// Seconds on clock c.
static double now(clockid_t c)
{
    timespec ts;
    clock_gettime(c, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

// The median of v (the mean of the two middle values for an even count).
static double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// A number or a string value: folded into the checksum.
static uint64_t touch_value(ondemand::value v)
{
    ondemand::json_type t;
    if (v.type().get(t))
        return 0;
    if (t == ondemand::json_type::number) {
        ondemand::number_type nt;
        if (v.get_number_type().get(nt))
            return 0;
        if (nt == ondemand::number_type::signed_integer) {
            int64_t i = 0;
            if (v.get_int64().get(i))
                return 0;
            return (uint64_t)i;
        }
        double d = 0;
        if (v.get_double().get(d))
            return 0;
        return (uint64_t)(int64_t)d;
    }
    if (t == ondemand::json_type::string) {
        std::string_view s;
        if (!v.get_string().get(s))
            return s.size() + (s.empty() ? 0 : (unsigned char)s[0]);
    }
    return 1; // skipped (objects, arrays, literals)
}

// Every element of traceEvents, the fields above touched: a checksum; the count in *events.
static uint64_t parse(ondemand::parser &parser, padded_string &json, size_t *events)
{
    uint64_t sum = 0;
    size_t n = 0;
    ondemand::document doc = parser.iterate(json);
    ondemand::array evs = doc["traceEvents"].get_array();
    for (ondemand::object ev : evs) {
        for (ondemand::field f : ev) {
            std::string_view k = f.unescaped_key();
            ondemand::value v = f.value();
            if (k == "args") {
                ondemand::object args;
                if (v.get_object().get(args))
                    continue;
                for (ondemand::field a : args) {
                    sum += a.unescaped_key().value().size();
                    sum += touch_value(a.value());
                }
            } else if (k == "ph" || k == "cat" || k == "name" || k == "pid" || k == "tid" ||
                       k == "ts" || k == "dur" || k == "id") {
                sum += touch_value(v);
            } // other members are skipped by the iteration
        }
        n++;
    }
    *events = n;
    return sum;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_simdjson TRACE.json [repetitions]\n");
        return 2;
    }
    int reps = argc > 2 ? atoi(argv[2]) : 5;
    if (reps < 1 || reps > 100)
        reps = 5;
    std::vector<double> lw, lc, pw, pc, gw, gc;
    size_t bytes = 0, events = 0;
    uint64_t sum = 0;
    ondemand::parser parser;
    gp_read_opts o;
    gp_read_opts_init(&o);
    o.quiet = true;
    o.threads = 1;
    for (int r = 0; r < reps; r++) {
        double w0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_PROCESS_CPUTIME_ID);
        padded_string json;
        if (padded_string::load(argv[1]).get(json)) {
            fprintf(stderr, "cannot load %s\n", argv[1]);
            return 2;
        }
        lw.push_back(now(CLOCK_MONOTONIC) - w0);
        lc.push_back(now(CLOCK_PROCESS_CPUTIME_ID) - c0);
        bytes = json.size();
        w0 = now(CLOCK_MONOTONIC);
        c0 = now(CLOCK_PROCESS_CPUTIME_ID);
        try {
            sum += parse(parser, json, &events);
        } catch (simdjson_error &e) {
            fprintf(stderr, "simdjson: %s\n", e.what());
            return 2;
        }
        pw.push_back(now(CLOCK_MONOTONIC) - w0);
        pc.push_back(now(CLOCK_PROCESS_CPUTIME_ID) - c0);
        gp_trace *t = NULL;
        gp_error err;
        w0 = now(CLOCK_MONOTONIC);
        c0 = now(CLOCK_PROCESS_CPUTIME_ID);
        if (gp_trace_read(argv[1], &o, &t, &err) != GP_OK) {
            fprintf(stderr, "%s\n", err.msg);
            return 2;
        }
        gw.push_back(now(CLOCK_MONOTONIC) - w0);
        gc.push_back(now(CLOCK_PROCESS_CPUTIME_ID) - c0);
        gp_trace_free(t);
    }
    double mb = (double)bytes / 1e6;
    double mlc = median(lc), mpc = median(pc), mgc = median(gc);
    printf("input            %s, %.1f MB, %zu events, %d repetitions (medians, CPU time)\n",
           argv[1], mb, events, reps);
    printf("simdjson %d.%d (%s): load %.3f s, on-demand parse %.3f s = %.0f MB/s, load + parse "
           "%.0f MB/s  (checksum %llu)\n",
           SIMDJSON_VERSION_MAJOR, SIMDJSON_VERSION_MINOR, simdjson::get_active_implementation()->name().c_str(), mlc, mpc,
           mb / mpc, mb / (mlc + mpc), (unsigned long long)(sum & 0xffff));
    printf("gpuprof one thread, model built: %.3f s = %.0f MB/s  (wall %.3f s)\n", mgc, mb / mgc,
           median(gw));
    printf("ratio gpuprof / simdjson parse  %.2fx   gpuprof / simdjson load + parse  %.2fx\n",
           mgc / mpc, mgc / (mlc + mpc));
    return 0;
}
