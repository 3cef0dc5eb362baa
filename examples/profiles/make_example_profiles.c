/* Writes two small in-process-profiler-style profiles (Chrome JSON, ranges as complete events with
 * cat "range") of a toy training loop, for the gpuprof diff CI example:
 *   base.json     40 iterations: data_load, forward, backward, optimizer_step, legacy_sync
 *   current.json  40 iterations: backward +15 % (a regression), data_load -30 % (an improvement),
 *                 grad_clip added, legacy_sync removed, forward and optimizer_step unchanged.
 * Durations carry seeded log-normal noise (log-sd 0.05), so the output is the same on every run.
 * usage: make_example_profiles OUTDIR */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "gpuprof/trace.h"

static unsigned long long rng_state;

static double uniform01(void)
{
    /* splitmix64 */
    unsigned long long z = (rng_state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
    return ((double)(z >> 11) + 0.5) / 9007199254740992.0;
}

static double noise(void)
{
    double u1 = uniform01(), u2 = uniform01();
    return exp(0.05 * sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2));
}

typedef struct step {
    const char *name;
    double base_us, cur_us; /* median duration; 0 = absent on that side */
} step;

static const step steps[] = {
    {"data_load", 800, 560}, {"forward", 2500, 2500},      {"backward", 4000, 4600},
    {"grad_clip", 0, 150},   {"optimizer_step", 600, 600}, {"legacy_sync", 120, 0},
};

static int add_range(gp_trace *t, uint32_t track, const char *name, gp_ns ts, gp_ns dur,
                     const char *args)
{
    gp_event ev = {0};
    if (gp_trace_intern(t, name, strlen(name), &ev.name) != GP_OK)
        return -1;
    ev.kind = GP_EV_RANGE;
    ev.ts = ts;
    ev.dur = dur;
    ev.track = track;
    if (args && gp_trace_add_args(t, args, strlen(args), &ev.extra) != GP_OK)
        return -1;
    return gp_trace_add_event(t, &ev) == GP_OK ? 0 : -1;
}

static int write_profile(const char *dir, const char *file, int current, unsigned long long seed)
{
    rng_state = seed;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    gp_trace *t = NULL;
    uint32_t track;
    if (gp_trace_create("gpuprof example profile", &t) != GP_OK ||
        gp_trace_track(t, GP_TRACK_CPU_THREAD, 4242, 4242, &track) != GP_OK)
        return -1;
    gp_ns clock = 1000000000;
    for (int it = 0; it < 40; it++) {
        gp_ns step_start = clock;
        for (size_t s = 0; s < sizeof steps / sizeof steps[0]; s++) {
            double us = current ? steps[s].cur_us : steps[s].base_us;
            if (us <= 0)
                continue;
            gp_ns dur = (gp_ns)llround(us * 1000.0 * noise());
            if (add_range(t, track, steps[s].name, clock, dur, NULL) != 0)
                return -1;
            clock += dur + 2000;
        }
        char args[96];
        snprintf(args, sizeof args, "{\"iteration\":%d,\"mem_peak_bytes\":%lld}", it,
                 (long long)(current ? 1610612736LL : 1476395008LL) + 4096LL * it);
        if (add_range(t, track, "train_step", step_start, clock - step_start, args) != 0)
            return -1;
        clock += 10000;
    }
    gp_error err = {0};
    if (gp_trace_finish(t) != GP_OK || gp_trace_write_chrome(t, path, &err) != GP_OK) {
        fprintf(stderr, "make_example_profiles: %s\n", err.msg);
        gp_trace_free(t);
        return -1;
    }
    gp_trace_free(t);
    printf("wrote %s\n", path);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: make_example_profiles OUTDIR\n");
        return 2;
    }
    if (write_profile(argv[1], "base.json", 0, 11) != 0 ||
        write_profile(argv[1], "current.json", 1, 12) != 0)
        return 1;
    return 0;
}
