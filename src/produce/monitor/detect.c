/* Pure detectors over samples: the memory-leak trend detector and the bottleneck classifier. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/stats.h"
#include "core/units.h"
#include "core/util.h"
#include "gpuprof/monitor.h"

void gp_leak_params_init(gp_leak_params *p)
{
    p->window_s = 30 * 60;
    p->warmup_s = 2 * 60;
    p->min_slope_mb_per_h = 50;
    p->min_r2 = 0.8;
    p->min_duration_s = 10 * 60;
    p->spike_mb = 256;
    p->spike_max_s = 60;
}

gp_status gp_leak_detector_init(gp_leak_detector *d, const gp_leak_params *p)
{
    if (!(p->window_s > 0) || !(p->warmup_s >= 0) || !(p->min_slope_mb_per_h > 0) ||
        !(p->min_r2 >= 0 && p->min_r2 <= 1) || !(p->min_duration_s > 0) || !(p->spike_mb > 0) ||
        !(p->spike_max_s > 0))
        return GP_EINVAL;
    memset(d, 0, sizeof *d);
    d->p = *p;
    d->bucket_w_ns = p->window_s * 1e9 / GP_LEAK_BUCKETS;
    return GP_OK;
}

static uint32_t newest(const gp_leak_detector *d)
{
    return (d->head + d->count - 1) % GP_LEAK_BUCKETS;
}

static void bucket_add(gp_leak_detector *d, gp_ns ts, double sum, uint32_t n)
{
    if (d->count == 0 || (double)(ts - d->b_start[newest(d)]) >= d->bucket_w_ns) {
        if (d->count == GP_LEAK_BUCKETS) {
            d->head = (d->head + 1) % GP_LEAK_BUCKETS;
            d->count--;
        }
        d->count++;
        uint32_t i = newest(d);
        d->b_start[i] = ts;
        d->b_sum[i] = 0;
        d->b_n[i] = 0;
    }
    uint32_t i = newest(d);
    d->b_sum[i] += sum;
    d->b_n[i] += n;
}

/* Baseline for spike detection: mean of the newest bucket (or the one before when it is empty). */
static bool baseline(const gp_leak_detector *d, double *out)
{
    for (uint32_t k = 0; k < d->count && k < 2; k++) {
        uint32_t i = (d->head + d->count - 1 - k) % GP_LEAK_BUCKETS;
        if (d->b_n[i]) {
            *out = d->b_sum[i] / d->b_n[i];
            return true;
        }
    }
    return false;
}

bool gp_leak_detector_add(gp_leak_detector *d, gp_ns ts, double used, double total)
{
    d->spike_pending_event = false;
    if (!d->started) {
        d->started = true;
        d->first_ts = ts;
    }
    d->total_bytes = total;
    d->last_value = used;
    if ((double)(ts - d->first_ts) < d->p.warmup_s * 1e9)
        return false;
    double base = 0, thr = d->p.spike_mb * GP_MIB;
    bool have_base = baseline(d, &base);
    if (d->in_excursion) {
        if (used < base + thr / 2) {
            d->in_excursion = false;
            if ((double)(ts - d->exc_start) <= d->p.spike_max_s * 1e9) {
                d->spikes++;
                d->last_spike_mb = (d->exc_peak - base) / GP_MIB;
                d->spike_pending_event = true;
            } else { /* it came back after a long time: keep its samples */
                bucket_add(d, d->exc_start, d->exc_sum, d->exc_n);
            }
            bucket_add(d, ts, used, 1);
            return d->spike_pending_event;
        }
        if ((double)(ts - d->exc_start) > d->p.spike_max_s * 1e9) {
            /* a level shift, not a spike: its samples belong to the trend */
            d->in_excursion = false;
            bucket_add(d, d->exc_start, d->exc_sum, d->exc_n);
            bucket_add(d, ts, used, 1);
            return false;
        }
        d->exc_sum += used;
        d->exc_n++;
        if (used > d->exc_peak)
            d->exc_peak = used;
        return false;
    }
    if (have_base && used > base + thr) {
        d->in_excursion = true;
        d->exc_start = ts;
        d->exc_sum = used;
        d->exc_n = 1;
        d->exc_peak = used;
        return false;
    }
    bucket_add(d, ts, used, 1);
    return false;
}

void gp_leak_detector_eval(const gp_leak_detector *d, gp_leak_result *out)
{
    memset(out, 0, sizeof *out);
    out->time_to_full_s = -1;
    out->spikes = d->spikes;
    out->last_spike_mb = d->last_spike_mb;
    double x[GP_LEAK_BUCKETS], y[GP_LEAK_BUCKETS];
    size_t n = 0;
    for (uint32_t k = 0; k < d->count; k++) {
        uint32_t i = (d->head + k) % GP_LEAK_BUCKETS;
        if (!d->b_n[i])
            continue;
        x[n] = (double)(d->b_start[i] - d->first_ts) / 1e9 + d->bucket_w_ns / 2e9;
        y[n] = d->b_sum[i] / d->b_n[i] / GP_MIB;
        n++;
    }
    if (n == 0)
        return;
    out->last_mb = y[n - 1];
    out->window_s = x[n - 1] - x[0];
    if (n < 8 || out->window_s < d->p.min_duration_s)
        return;
    out->ready = true;

    /* Theil-Sen: the median of the slopes of every pair. */
    double slopes[GP_LEAK_BUCKETS * (GP_LEAK_BUCKETS - 1) / 2];
    size_t ns = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++)
            if (x[j] > x[i])
                slopes[ns++] = (y[j] - y[i]) / (x[j] - x[i]);
    double slope = ns ? gp__median_d(slopes, ns) : 0; /* MiB/s */
    double resid[GP_LEAK_BUCKETS];
    for (size_t i = 0; i < n; i++)
        resid[i] = y[i] - slope * x[i];
    double icept = gp__median_d(resid, n);
    double ymean = 0;
    for (size_t i = 0; i < n; i++)
        ymean += y[i];
    ymean /= (double)n;
    double ss_res = 0, ss_tot = 0;
    for (size_t i = 0; i < n; i++) {
        double e = y[i] - (icept + slope * x[i]);
        ss_res += e * e;
        ss_tot += (y[i] - ymean) * (y[i] - ymean);
    }
    out->r2 = ss_tot > 0 ? 1 - ss_res / ss_tot : 0;
    if (out->r2 < 0)
        out->r2 = 0;
    out->slope_mb_per_h = slope * 3600;

    /* Least squares over the newer half: a rise that has stopped is not a leak. */
    size_t h = n / 2;
    double mx = 0, my = 0;
    for (size_t i = h; i < n; i++) {
        mx += x[i];
        my += y[i];
    }
    mx /= (double)(n - h);
    my /= (double)(n - h);
    double sxy = 0, sxx = 0;
    for (size_t i = h; i < n; i++) {
        sxy += (x[i] - mx) * (y[i] - my);
        sxx += (x[i] - mx) * (x[i] - mx);
    }
    out->recent_slope_mb_per_h = sxx > 0 ? sxy / sxx * 3600 : 0;

    /* the newer half must still rise at least half as fast as the whole window: a rise that
     * has levelled off (a caching allocator warming up) is not a leak */
    out->leak = out->slope_mb_per_h >= d->p.min_slope_mb_per_h && out->r2 >= d->p.min_r2 &&
                out->recent_slope_mb_per_h >= 0.5 * out->slope_mb_per_h;
    if (out->leak && d->total_bytes > 0) {
        double left_mb = d->total_bytes / GP_MIB - out->last_mb;
        out->time_to_full_s = left_mb > 0 ? left_mb / slope : 0;
    }
}

/* ---- bottlenecks ------------------------------------------------------------------------ */

const char *gp_bottleneck_name(gp_bottleneck_kind k)
{
    /* In enum order (gpuprof/monitor.h). */
    static const char *const names[] = {
        "none",    "idle",  "compute_bound", "memory_bandwidth_bound", "memory_capacity",
        "thermal", "power", "unknown"};
    _Static_assert(GP_ARRAY_LEN(names) == GP_BN_UNKNOWN + 1, "one name per gp_bottleneck_kind");
    return GP_NAME_OF(names, k, "?");
}

#define THERMAL_BITS (GP_THROTTLE_SW_THERMAL | GP_THROTTLE_HW_THERMAL | GP_THROTTLE_HW_SLOWDOWN)
#define POWER_BITS (GP_THROTTLE_SW_POWER_CAP | GP_THROTTLE_POWER_BRAKE)

void gp_bottleneck_classify(const gp_gpu_sample *s, size_t n, gp_bottleneck *out)
{
    memset(out, 0, sizeof *out);
    out->kind = GP_BN_UNKNOWN;
    out->samples = (uint32_t)n;
    out->util_gpu_mean = out->util_mem_mean = out->mem_used_ratio = NAN;
    out->temp_max = out->power_ratio = NAN;
    if (n == 0)
        return;
    double ug = 0, um = 0, pr = 0, tmax = -INFINITY, slowdown = NAN;
    size_t nug = 0, num = 0, npr = 0, nthr = 0, thermal = 0, power = 0, idle = 0;
    for (size_t i = 0; i < n; i++) {
        const gp_gpu_sample *x = &s[i];
        if (gp_sample_has(x, GP_M_UTIL_GPU)) {
            ug += x->v[GP_M_UTIL_GPU];
            idle += x->v[GP_M_UTIL_GPU] < 10;
            nug++;
        }
        if (gp_sample_has(x, GP_M_UTIL_MEM)) {
            um += x->v[GP_M_UTIL_MEM];
            num++;
        }
        if (gp_sample_has(x, GP_M_POWER) && gp_sample_has(x, GP_M_POWER_LIMIT) &&
            x->v[GP_M_POWER_LIMIT] > 0) {
            pr += x->v[GP_M_POWER] / x->v[GP_M_POWER_LIMIT];
            npr++;
        }
        if (gp_sample_has(x, GP_M_THROTTLE)) {
            uint64_t bits = (uint64_t)x->v[GP_M_THROTTLE];
            thermal += (bits & THERMAL_BITS) != 0;
            power += (bits & POWER_BITS) != 0;
            nthr++;
        }
        if (gp_sample_has(x, GP_M_TEMP) && x->v[GP_M_TEMP] > tmax)
            tmax = x->v[GP_M_TEMP];
        if (gp_sample_has(x, GP_M_TEMP_SLOWDOWN))
            slowdown = x->v[GP_M_TEMP_SLOWDOWN];
        if (gp_sample_has(x, GP_M_MEM_USED) && gp_sample_has(x, GP_M_MEM_TOTAL) &&
            x->v[GP_M_MEM_TOTAL] > 0)
            out->mem_used_ratio = x->v[GP_M_MEM_USED] / x->v[GP_M_MEM_TOTAL];
    }
    if (nug)
        out->util_gpu_mean = ug / (double)nug;
    if (num)
        out->util_mem_mean = um / (double)num;
    if (npr)
        out->power_ratio = pr / (double)npr;
    if (tmax > -INFINITY)
        out->temp_max = tmax;
    if (nthr) {
        out->thermal_throttle_share = (double)thermal / (double)nthr;
        out->power_throttle_share = (double)power / (double)nthr;
    }
    bool hot = !isnan(slowdown) && !isnan(out->temp_max) && out->temp_max >= slowdown - 2;
    if (out->thermal_throttle_share >= 0.3 || hot) {
        out->kind = GP_BN_THERMAL;
        out->confidence =
            hot ? GP_MAX(out->thermal_throttle_share, 0.7) : out->thermal_throttle_share;
    } else if (out->power_throttle_share >= 0.3 || (npr && out->power_ratio >= 0.97)) {
        out->kind = GP_BN_POWER;
        out->confidence =
            GP_MAX(out->power_throttle_share, npr && out->power_ratio >= 0.97 ? 0.7 : 0);
    } else if (!isnan(out->mem_used_ratio) && out->mem_used_ratio >= 0.95) {
        out->kind = GP_BN_MEMORY_CAPACITY;
        out->confidence = out->mem_used_ratio;
    } else if (nug && out->util_gpu_mean < 10) {
        out->kind = GP_BN_IDLE;
        out->confidence = (double)idle / (double)nug;
    } else if (num && nug && out->util_mem_mean >= 60 &&
               out->util_mem_mean >= 0.75 * out->util_gpu_mean) {
        out->kind = GP_BN_MEMORY_BANDWIDTH;
        out->confidence = out->util_mem_mean / 100;
    } else if (nug && out->util_gpu_mean >= 80) {
        out->kind = GP_BN_COMPUTE;
        out->confidence = out->util_gpu_mean / 100;
    } else if (nug) {
        out->kind = GP_BN_NONE;
        out->confidence = 1 - out->util_gpu_mean / 100;
    }
}
