/* The words of a finding, composed once for every renderer (text, JSON, CSV, the dashboard,
 * advise, diff) from what the analysis stored: the rule id, its variant, the metrics in base
 * units and the objects it names (gpuprof/analyze.h). The analysis writes no English and no
 * units; nothing here computes a figure, it only formats the stored ones. */
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "core/util.h"
#include "render/render_internal.h"
#include "gpuprof/summary.h"

void gp__metric_value(const gp_evidence *e, char *buf, size_t cap)
{
    double v = e->value;
    if (isnan(v)) {
        snprintf(buf, cap, "n/a");
        return;
    }
    switch (e->unit) {
    case GP_FU_NS:
        gp__fmt_dur(buf, cap, gp__ns_of_double(v));
        break;
    case GP_FU_BYTES:
        gp__fmt_bytes(buf, cap, v);
        break;
    case GP_FU_BYTES_PER_S:
        snprintf(buf, cap, "%.2f GB/s", v / GP_GB_PER_S);
        break;
    case GP_FU_FLOP_PER_S:
        snprintf(buf, cap, "%.1f TFLOP/s", v / 1e12);
        break;
    case GP_FU_RATIO:
        snprintf(buf, cap, "%.1f %%", 100.0 * v);
        break;
    default:
        snprintf(buf, cap, v == floor(v) && fabs(v) < 1e15 ? "%.0f" : "%.4g", v);
        break;
    }
}

/* The value of metric name as text ("n/a" when absent). */
static const char *mtext(const gp_finding *f, const char *name, char *buf, size_t cap)
{
    for (size_t i = 0; i < f->n_evidence; i++)
        if (strcmp(f->evidence[i].name, name) == 0) {
            gp__metric_value(&f->evidence[i], buf, cap);
            return buf;
        }
    snprintf(buf, cap, "n/a");
    return buf;
}

static double mval(const gp_finding *f, const char *name)
{
    double v = NAN;
    gp_finding_metric(f, name, &v);
    return v;
}

static const char *obj(const gp_finding *f, gp_object_kind k)
{
    const char *s = gp_finding_object_of(f, k);
    return s ? s : "";
}

/* A CPython built-in frame as Python writes it, "<built-in method astype of numpy.ndarray object
 * at 0x7f..>" or "<built-in function array>", in words: "numpy.ndarray.astype (built-in)",
 * "array (built-in)" (the generic shortening would leave "<...>"). False for other names. */
static bool builtin_name(const char *s, char *buf, size_t cap)
{
    const char *m = "<built-in method ", *fn = "<built-in function ";
    if (strncmp(s, m, strlen(m)) == 0) {
        const char *meth = s + strlen(m), *of = strstr(meth, " of "), *obj = of ? of + 4 : NULL;
        const char *end = obj ? strstr(obj, " object at ") : NULL;
        if (!end)
            end = obj ? strchr(obj, '>') : NULL;
        if (!of || !end)
            return false;
        snprintf(buf, cap, "%.*s.%.*s (built-in)", (int)(end - obj), obj, (int)(of - meth), meth);
        return true;
    }
    if (strncmp(s, fn, strlen(fn)) == 0) {
        const char *name = s + strlen(fn), *end = strchr(name, '>');
        if (!end)
            return false;
        snprintf(buf, cap, "%.*s (built-in)", (int)(end - name), name);
        return true;
    }
    return false;
}

/* The collectives' straggler (findings_straggler.c): how often it arrived last and where, the
 * wait it caused, then what it was doing instead (its path's largest class and top event, its
 * GPU's largest idle cause). */
static void straggler_title(const gp_finding *f, char *buf, size_t cap)
{
    char a[48], b[48], c[48], d[48];
    size_t n = (size_t)snprintf(buf, cap, "Arrived last at %s of %s collectives",
                                mtext(f, "arrived_last", a, sizeof a),
                                mtext(f, "collectives", b, sizeof b));
    size_t named = 0;
    for (size_t i = 0; i < f->n_objects && n < cap; i++)
        if (f->objects[i].kind == GP_OBJ_COLLECTIVE)
            n += (size_t)snprintf(buf + n, cap - n, "%s%s", named++ ? ", " : " (",
                                  f->objects[i].name);
    if (named && n < cap)
        n += (size_t)snprintf(buf + n, cap - n, ")");
    if (n < cap)
        n += (size_t)snprintf(buf + n, cap - n, "; the others waited %s for it",
                              mtext(f, "caused_wait", c, sizeof c));
    if (!isnan(mval(f, "caused_wait_per_step")) && n < cap)
        n += (size_t)snprintf(buf + n, cap - n, " (%s per step)",
                              mtext(f, "caused_wait_per_step", d, sizeof d));
    const char *top = NULL;
    for (size_t i = 0; i < f->n_objects && !top; i++)
        if (f->objects[i].kind != GP_OBJ_COLLECTIVE) /* the path's top event comes first */
            top = f->objects[i].name;
    for (size_t i = 0; i < f->n_evidence && n < cap; i++) {
        const gp_evidence *e = &f->evidence[i];
        size_t len = strlen(e->name);
        gp__metric_value(e, a, sizeof a);
        if (strncmp(e->name, "critical_path_", 14) == 0) {
            char name[64] = "";
            if (top)
                gp_shorten_name(top, 48, name, sizeof name);
            n += (size_t)snprintf(buf + n, cap - n, "; its critical path is %s %s%s%s%s", a,
                                  e->name + 14, top ? " (top: " : "", name, top ? ")" : "");
        } else if (strncmp(e->name, "idle_", 5) == 0 && len > 11 &&
                   strcmp(e->name + len - 6, "_share") == 0) {
            n += (size_t)snprintf(buf + n, cap - n, "; its GPU idles %s in %.*s", a,
                                  (int)(len - 11), e->name + 5);
        }
    }
}

/* The object of a cause finding: its first object, with its Python frame. */
static void top_object(const gp_finding *f, char *buf, size_t cap)
{
    buf[0] = '\0';
    if (f->n_objects == 0)
        return;
    const gp_finding_object *o = &f->objects[0];
    char name[64];
    if (!builtin_name(o->name, name, sizeof name))
        gp_shorten_name(o->name, 48, name, sizeof name);
    if (o->frame[0] && strcmp(o->frame, o->name) != 0)
        snprintf(buf, cap, ": top %s in %.80s", name, o->frame);
    else
        snprintf(buf, cap, ": top %s", name);
}

/* The title of a finding of one of the critical path's dominant-cause rules; words: its class. */
static void title_cause(const gp_finding *f, const char *words, char *buf, size_t cap)
{
    char a[48], b[48], c[48], o[160];
    top_object(f, o, sizeof o);
    snprintf(buf, cap, "%s holds %s of the critical path (%s over %s step%s)%s", words,
             mtext(f, "class_share", a, sizeof a), mtext(f, "class_time", b, sizeof b),
             mtext(f, "steps", c, sizeof c), mval(f, "steps") == 1 ? "" : "s", o);
}

static void title_launch_bound(const gp_finding *f, const char *words, char *buf, size_t cap)
{
    char a[48];
    (void)words;
    snprintf(buf, cap, "GPU idle %s of the time, mostly waiting for the host to launch work",
             mtext(f, "idle_share", a, sizeof a));
}

static void title_small_kernels(const gp_finding *f, const char *words, char *buf, size_t cap)
{
    char a[48], b[48], c[48];
    (void)words;
    snprintf(buf, cap, "%s of %s kernels run for less than %s",
             mtext(f, "small_kernels_share", a, sizeof a), mtext(f, "kernels", b, sizeof b),
             mtext(f, "small_kernel_limit", c, sizeof c));
}

static void title_low_overlap(const gp_finding *f, const char *words, char *buf, size_t cap)
{
    char a[48];
    (void)words;
    snprintf(buf, cap, "Only %s of communication overlaps computation",
             mtext(f, "overlap_share", a, sizeof a));
}

static void title_copy_heavy(const gp_finding *f, const char *words, char *buf, size_t cap)
{
    char a[48];
    (void)words;
    snprintf(buf, cap, "Memory copies take %s of the GPU span%s",
             mtext(f, "memcpy_share", a, sizeof a),
             mval(f, "pageable_copies") > 0 ? ", some from pageable host memory" : "");
}

static void title_frequent_sync(const gp_finding *f, const char *words, char *buf, size_t cap)
{
    char a[48], b[48];
    (void)words;
    snprintf(buf, cap, "%s synchronisations block for %s of the trace",
             mtext(f, "syncs", a, sizeof a), mtext(f, "sync_share_of_span", b, sizeof b));
}

static void title_low_occupancy(const gp_finding *f, const char *words, char *buf, size_t cap)
{
    char a[48], name[64];
    (void)words;
    gp_shorten_name(obj(f, GP_OBJ_KERNEL), 48, name, sizeof name);
    snprintf(buf, cap, "Hot kernel %s runs at %s occupancy", name,
             mtext(f, "occupancy", a, sizeof a));
}

static void title_memory_peak(const gp_finding *f, const char *words, char *buf, size_t cap)
{
    char a[48], b[48];
    (void)words;
    snprintf(buf, cap, "Allocated memory on device %s peaks at %s of its capacity",
             mtext(f, "device", a, sizeof a), mtext(f, "peak_share", b, sizeof b));
}

/* The straggler: from the collectives (variant 0), else from medians of per-rank totals (its
 * first two metrics; the rule id when it has fewer). */
static void title_straggler(const gp_finding *f, const char *words, char *buf, size_t cap)
{
    char a[48], b[48];
    (void)words;
    if (f->variant == 0) {
        straggler_title(f, buf, cap);
    } else if (f->n_evidence >= 2) {
        gp__metric_value(&f->evidence[0], a, sizeof a);
        gp__metric_value(&f->evidence[1], b, sizeof b);
        snprintf(buf, cap,
                 "Out of step with the other ranks (no trusted collectives: medians of per-rank "
                 "totals): %s %s against a median of %s",
                 f->evidence[0].name, a, b);
    } else {
        snprintf(buf, cap, "%s", f->rule);
    }
}

static void title_op_below_roofline(const gp_finding *f, const char *words, char *buf, size_t cap)
{
    char a[48];
    (void)words;
    const char *mod = obj(f, GP_OBJ_MODULE), *line = obj(f, GP_OBJ_LINE);
    snprintf(buf, cap, "%s %s %s at %s of peak%s%s%s%s%s", obj(f, GP_OBJ_OP), obj(f, GP_OBJ_SHAPES),
             obj(f, GP_OBJ_DTYPE), mtext(f, "roofline_share", a, sizeof a),
             *mod || *line ? " (" : "", mod, *mod && *line ? ", " : "", line,
             *mod || *line ? ")" : "");
}

static void title_unfused_attention(const gp_finding *f, const char *words, char *buf, size_t cap)
{
    char a[48], b[48];
    (void)words;
    snprintf(buf, cap,
             "Unfused attention (%s -> softmax -> matmul on %s %s) takes %s of the GPU work "
             "sum in %s "
             "calls",
             obj(f, GP_OBJ_OP), obj(f, GP_OBJ_SHAPES), obj(f, GP_OBJ_DTYPE),
             mtext(f, "share_of_gpu_work_sum", a, sizeof a), mtext(f, "calls", b, sizeof b));
}

static void title_fp32_gemm(const gp_finding *f, const char *words, char *buf, size_t cap)
{
    char a[48], b[48];
    (void)words;
    snprintf(buf, cap,
             "fp32 GEMMs take %s of the GPU work sum on a GPU whose TF32 tensor cores run %s "
             "(top: %s "
             "%s)",
             mtext(f, "share_of_gpu_work_sum", a, sizeof a), mtext(f, "peak_tf32", b, sizeof b),
             obj(f, GP_OBJ_OP), obj(f, GP_OBJ_SHAPES));
}

static void title_sync_in_step(const gp_finding *f, const char *words, char *buf, size_t cap)
{
    char a[48], b[48], c[48];
    (void)words;
    const gp_finding_object *s = f->n_objects ? &f->objects[0] : NULL;
    snprintf(buf, cap, "%s host synchronisations inside %s steps block for %s%s%s%s%s%s",
             mtext(f, "syncs", a, sizeof a), mtext(f, "steps", b, sizeof b),
             mtext(f, "sync_time", c, sizeof c), s ? " (top: " : "", s ? s->name : "",
             s && s->frame[0] ? " at " : "", s ? s->frame : "", s ? ")" : "");
}

static void title_routing_to_cpu(const gp_finding *f, const char *words, char *buf, size_t cap)
{
    char a[48];
    (void)words;
    snprintf(buf, cap, "%.64s runs on the GPU but averages %s per call", obj(f, GP_OBJ_OP),
             mtext(f, "mean", a, sizeof a));
}

static void title_routing_to_gpu(const gp_finding *f, const char *words, char *buf, size_t cap)
{
    char a[48], b[48];
    (void)words;
    snprintf(buf, cap, "%.64s runs on the CPU for %s per call and moves %s", obj(f, GP_OBJ_OP),
             mtext(f, "mean", a, sizeof a), mtext(f, "memory", b, sizeof b));
}

static void title_batching(const gp_finding *f, const char *words, char *buf, size_t cap)
{
    char a[48];
    (void)words;
    snprintf(buf, cap, "%.64s is called %s times in a row", obj(f, GP_OBJ_OP),
             mtext(f, "calls_in_a_row", a, sizeof a));
}

static void title_caching(const gp_finding *f, const char *words, char *buf, size_t cap)
{
    char a[48], b[48];
    (void)words;
    snprintf(buf, cap, "%.64s: %s small calls of %s on average", obj(f, GP_OBJ_OP),
             mtext(f, "calls", a, sizeof a), mtext(f, "mean", b, sizeof b));
}

static void title_memory_heavy_op(const gp_finding *f, const char *words, char *buf, size_t cap)
{
    char a[48];
    (void)words;
    snprintf(buf, cap, "%.64s allocates or moves %s in one call", obj(f, GP_OBJ_OP),
             mtext(f, "memory", a, sizeof a));
}

static void title_gpu_underutilized(const gp_finding *f, const char *words, char *buf, size_t cap)
{
    char a[48];
    (void)words;
    snprintf(buf, cap, "GPU ops cover %s of the profile's span: the GPU is mostly idle",
             mtext(f, "gpu_utilization", a, sizeof a));
}

/* rule -> the formatter of its title (words: passed to it; the class of a cause rule). */
static const struct {
    const char *rule;
    void (*format)(const gp_finding *f, const char *words, char *buf, size_t cap);
    const char *words;
} titles[] = {
    {"critical_path_cpu_bound", title_cause, "CPU/Python work"},
    {"critical_path_data_loading", title_cause, "Data loading"},
    {"critical_path_gpu_compute_bound", title_cause, "GPU compute"},
    {"critical_path_gpu_communication_bound", title_cause, "Communication"},
    {"critical_path_gpu_kernel_kernel_overhead", title_cause, "Idle time between kernels"},
    {"critical_path_gpu_kernel_launch_overhead", title_cause, "Kernel launch overhead"},
    {"critical_path_sync", title_cause, "Waiting on host synchronisations"},
    {"launch_bound", title_launch_bound, NULL},
    {"small_kernels", title_small_kernels, NULL},
    {"low_overlap", title_low_overlap, NULL},
    {"copy_heavy", title_copy_heavy, NULL},
    {"frequent_sync", title_frequent_sync, NULL},
    {"low_occupancy", title_low_occupancy, NULL},
    {"memory_peak", title_memory_peak, NULL},
    {"straggler", title_straggler, NULL},
    {"op_below_roofline", title_op_below_roofline, NULL},
    {"unfused_attention", title_unfused_attention, NULL},
    {"fp32_gemm", title_fp32_gemm, NULL},
    {"sync_in_step", title_sync_in_step, NULL},
    {"routing_to_cpu", title_routing_to_cpu, NULL},
    {"routing_to_gpu", title_routing_to_gpu, NULL},
    {"batching", title_batching, NULL},
    {"caching", title_caching, NULL},
    {"memory_heavy_op", title_memory_heavy_op, NULL},
    {"gpu_underutilized", title_gpu_underutilized, NULL},
};

/* The title of f: its rule's formatter (titles[]), the rule id itself for an unknown rule. */
void gp__finding_title(const gp_finding *f, char *buf, size_t cap)
{
    for (size_t i = 0; i < sizeof titles / sizeof *titles; i++)
        if (strcmp(f->rule, titles[i].rule) == 0) {
            titles[i].format(f, titles[i].words, buf, cap);
            return;
        }
    snprintf(buf, cap, "%s", f->rule);
}

/* rule, variant -> suggestion. */
static const struct {
    const char *rule;
    uint8_t variant;
    const char *text;
} advice[] = {
    {"critical_path_data_loading", 0,
     "Data loading holds the step: raise DataLoader num_workers, set pin_memory=True and "
     "persistent_workers=True, raise prefetch_factor, or move the preprocessing named above out "
     "of the step (precompute it, or run it in the workers)."},
    {"critical_path_cpu_bound", 0,
     "Python/CPU work holds the step while the GPU waits; the frames above are where it goes. Move "
     "it off the step (precompute, vectorise, run it in DataLoader workers, or overlap it with GPU "
     "work), and profile those frames (py-spy, cProfile) if they are your code."},
    {"critical_path_sync", 0,
     "The step waits on host synchronisations at the call sites above: remove or defer each "
     "(.item(), .cpu(), .tolist(), printing tensors, torch.cuda.synchronize), keep values on the "
     "device, and use non_blocking copies and CUDA events."},
    {"critical_path_gpu_kernel_launch_overhead", 0,
     "The path is kernel launch overhead: capture the step in a CUDA graph (torch.compile "
     "mode=\"reduce-overhead\", torch.cuda.graphs) or fuse kernels with torch.compile so fewer "
     "launches remain."},
    {"critical_path_gpu_kernel_launch_overhead", 1,
     "Most kernels already run in graph replays, so the path waits for host work between them "
     "(scheduling, sampling, blocking copies, .item()). Overlap it with the next replay or move "
     "it off the critical path."},
    {"critical_path_gpu_kernel_kernel_overhead", 0,
     "Gaps between back-to-back kernels hold the path: fuse the small kernels (torch.compile, "
     "fused or foreach optimizers) or capture them in a CUDA graph."},
    {"critical_path_gpu_communication_bound", 0,
     "Communication holds the step: overlap it with computation (DDP/FSDP bucketing with "
     "bucket_cap_mb, backward/forward prefetch, async collectives on their own stream), use "
     "fewer, larger collectives, and check for a slow rank."},
    {"critical_path_gpu_compute_bound", 0,
     "GPU compute holds the step: the ops above are the largest, with their share of the "
     "roofline; raise their efficiency (bf16 or TF32, fused kernels such as "
     "scaled_dot_product_attention, torch.compile max-autotune). The pattern findings below say "
     "which."},
    {"launch_bound", 0,
     "The GPU waits for the CPU to enqueue work. Capture the step in a CUDA graph (torch.compile "
     "mode=\"reduce-overhead\", torch.cuda.graphs), fuse small kernels, and move host work (data "
     "loading, .item(), logging) off the critical path."},
    {"launch_bound", 1,
     "Most kernels already run in graph replays, so the GPU waits for host work between them "
     "(scheduling, sampling, blocking copies, .item()). Find it in the timeline's CPU rows during "
     "the gaps, then overlap it with the next replay or move it off the critical path."},
    {"small_kernels", 0,
     "Most kernels are tiny: fuse element-wise chains (torch.compile, fused or foreach "
     "optimizers), batch small operations together, or raise the batch size so each launch does "
     "more work."},
    {"low_overlap", 0,
     "Communication runs mostly alone. Overlap it with computation: DDP/FSDP gradient bucketing "
     "(bucket_cap_mb), backward/forward prefetch, async collectives on their own stream, and "
     "fewer, larger collectives."},
    {"copy_heavy", 0,
     "Pin host memory (DataLoader pin_memory=True, tensor.pin_memory()), copy with "
     "non_blocking=True on a side stream so copies overlap compute, and keep tensors resident on "
     "the GPU between steps."},
    {"frequent_sync", 0,
     "The host blocks on the GPU often (cudaStreamSynchronize, .item(), .cpu(), printing "
     "tensors). Keep values on the device, batch the reads, and use CUDA events or non_blocking "
     "copies instead of full synchronisations."},
    {"sync_in_step", 0,
     "Each call site above blocks the host inside the step. Keep one read per step at most "
     "(the loss, at the end), keep other values on the device, and replace the rest with "
     "non_blocking copies and CUDA events."},
    {"low_occupancy", 0,
     "Check the kernel's launch configuration, registers per thread and shared memory per block; "
     "try another tile size, a library kernel (cuBLAS/cuDNN heuristics) or torch.compile "
     "max-autotune."},
    {"memory_peak", 0,
     "Memory is close to exhaustion: activation checkpointing, smaller micro-batches, mixed "
     "precision, or sharding (FSDP/ZeRO); look at the op running at the peak."},
    {"straggler", 0,
     "The other ranks wait for this one at their collectives: look at what it does before "
     "them (its critical path and idle causes above), compare its input shard sizes, data "
     "loading and placement, and rebalance the work or overlap its tail with communication."},
    {"straggler", 1,
     "One rank is out of step with the others, and collectives make every rank wait for it: "
     "compare its input shard sizes, data loading, clocks and placement, and rebalance the "
     "work."},
    {"unfused_attention", 0,
     "Replace the matmul -> softmax -> matmul with torch.nn.functional.scaled_dot_product_attention"
     " (flash or cuDNN backend on this GPU): it never writes the score matrix to memory and runs "
     "the two products in one kernel."},
    {"fp32_gemm", 0,
     "These products run in fp32 on tensor-core hardware: allow TF32 "
     "(torch.set_float32_matmul_precision(\"high\")) or run them in bf16 (torch.autocast)."},
    {"op_below_roofline", 0,
     "This shape runs far below the compute roof: pad dimensions to multiples of 8/16 (64 suits "
     "most tiles), batch small products into one call, and try torch.compile max-autotune or "
     "cuBLASLt heuristics."},
    {"op_below_roofline", 1,
     "This shape is memory-bound and far from the bandwidth roof: fuse it with its neighbours "
     "(torch.compile), batch small products together, or keep operands in a layout the kernel "
     "reads contiguously."},
    {"op_below_roofline", 2,
     "This attention already runs a fused kernel, far below the compute roof: a newer kernel for "
     "this GPU (FlashAttention-3 on Hopper, CK or aiter on MI300) and more or longer sequences per "
     "call raise its utilisation."},
    {"op_below_roofline", 3,
     "This attention shape runs far below the compute roof: pick the flash or cuDNN backend "
     "(torch.nn.attention.sdpa_kernel) rather than the memory-efficient or math one, and batch "
     "more sequences per call."},
    {"op_below_roofline", 4,
     "This shape runs far below the compute roof: use bf16/fp16 (or TF32) instead of fp32, pad "
     "dimensions to multiples of 8/16 for tensor cores, and try torch.compile max-autotune or "
     "cuBLASLt heuristics."},
    {"routing_to_cpu", 0,
     "Run it on the CPU (or fuse it into a neighbouring GPU op): keep small inputs on the host, "
     "and measure both placements with gpuprof diff."},
    {"routing_to_gpu", 0,
     "Move it to the GPU (CuPy, torch on cuda, a CUDA kernel) and keep its data resident there so "
     "the copy is paid once."},
    {"batching", 0,
     "Batch the inputs and make one call (stack tensors, vectorise the loop, torch.vmap / foreach "
     "ops), or capture the sequence in a CUDA graph."},
    {"caching", 0,
     "Cache or memoise the results of repeated inputs (functools.lru_cache, a lookup table, "
     "precomputed constants), or hoist the call out of the loop."},
    {"memory_heavy_op", 0,
     "Process it in chunks, reuse preallocated buffers, use a smaller dtype (fp16/bf16), free "
     "intermediates early, or checkpoint activations."},
    {"gpu_underutilized", 0,
     "Increase parallelism: larger batches, independent work on several CUDA streams, overlap "
     "host work and copies with GPU work, asynchronous launches instead of waiting per op."},
};

const char *gp__finding_advice(const gp_finding *f)
{
    const char *any = "";
    for (size_t i = 0; i < sizeof advice / sizeof *advice; i++)
        if (strcmp(advice[i].rule, f->rule) == 0) {
            if (advice[i].variant == f->variant)
                return advice[i].text;
            if (advice[i].variant == 0)
                any = advice[i].text;
        }
    return any;
}

const char *gp__finding_expected(const gp_finding *f)
{
    static const char *const m[][2] = {
        {"routing_to_cpu", "about 2x: sub-millisecond GPU work is mostly launch, copy and "
                           "synchronisation overhead"},
        {"routing_to_gpu", "about 5x for data-parallel array work (after the copy to the device)"},
        {"batching", "about 30 % of its time: one call's fixed cost instead of one per item"},
        {"caching", "about half its time when half of the calls repeat an earlier input"},
        {"memory_heavy_op", "lower peak memory (room for larger batches); time about the same"},
        {"gpu_underutilized", "the span shrinks toward the GPU work once it runs concurrently"},
    };
    for (size_t i = 0; i < sizeof m / sizeof *m; i++)
        if (strcmp(f->rule, m[i][0]) == 0)
            return m[i][1];
    return NULL;
}

void gp__finding_object_text(const gp_finding_object *o, char *buf, size_t cap)
{
    char t[48] = "";
    size_t n = (size_t)snprintf(buf, cap, "%s %s", gp_object_kind_name(o->kind), o->name);
    if (o->frame[0] && strcmp(o->frame, o->name) != 0 && n < cap)
        n += (size_t)snprintf(buf + n, cap - n, " at %s", o->frame);
    if (o->time > 0 && n < cap) {
        gp__fmt_dur(t, sizeof t, o->time);
        n += (size_t)snprintf(buf + n, cap - n, ", %s", t);
    }
    if (o->count > 0 && n < cap)
        n += (size_t)snprintf(buf + n, cap - n, ", %llu call%s", (unsigned long long)o->count,
                              o->count == 1 ? "" : "s");
    if (o->roof >= 0 && n < cap)
        snprintf(buf + n, cap - n, ", %.1f %% of roofline", 100.0 * o->roof);
}

void gp__finding_evidence_text(const gp_finding *f, FILE *fp)
{
    for (size_t k = 0; k < f->n_evidence; k++) {
        char v[48];
        gp__metric_value(&f->evidence[k], v, sizeof v);
        fprintf(fp, "%s %s=%s", k ? "," : "", f->evidence[k].name, v);
    }
}

/* Dashboard phrases of metric keys: "%s" is the value. */
static const char *const phrases[][2] = {
    {"idle_share", "GPU idle %s of the time"},
    {"idle_time", "idle %s"},
    {"launch_idle", "%s of it while the host launched"},
    {"kernels", "%s kernels"},
    {"small_kernels_share", "%s of them small"},
    {"launch_cpu_p50", "a launch takes %s on the CPU (median)"},
    {"small_kernels", "%s small kernels"},
    {"small_kernel_limit", "shorter than %s"},
    {"small_kernels_time", "taking %s"},
    {"mean_gap", "mean gap between kernels %s"},
    {"overlap_share", "communication overlapped %s"},
    {"communication_time", "communication %s"},
    {"computation_time", "computation %s"},
    {"memcpy_time", "memory copies %s"},
    {"memcpy_share", "%s of the GPU span"},
    {"pageable_copies", "%s copies from pageable memory"},
    {"mean_bandwidth", "mean bandwidth %s"},
    {"syncs", "%s synchronisations"},
    {"sync_time", "taking %s"},
    {"sync_share_of_span", "%s of the span"},
    {"sync_share_of_step", "%s of the step time"},
    {"occupancy", "occupancy %s"},
    {"kernel_time", "kernels' summed time %s"},
    {"share_of_kernel_time", "%s of the kernels' summed time"},
    {"peak_allocated", "peak allocated %s"},
    {"capacity", "of %s capacity"},
    {"peak_share", "(%s)"},
    {"median", "median over ranks %s"},
    {"arrived_last", "arrived last at %s"},
    {"collectives", "of %s collectives"},
    {"caused_wait", "the others waited %s for it"},
    {"caused_wait_per_step", "%s per step"},
    {"class_time", "%s on the critical path"},
    {"class_share", "%s of it"},
    {"path_time", "path length %s"},
    {"steps", "over %s steps"},
    {"attention_time", "attention %s"},
    {"share_of_gpu_work_sum", "%s of the GPU work sum"},
    {"fused_estimate", "fused about %s"},
    {"score_bytes", "score matrix %s per call"},
    {"roofline_share", "%s of the roofline"},
};

const char *gp__metric_phrase(const char *name)
{
    for (size_t i = 0; i < sizeof phrases / sizeof *phrases; i++)
        if (strcmp(phrases[i][0], name) == 0)
            return phrases[i][1];
    return NULL;
}

void gp__finding_ranks_html(FILE *fp, const gp_finding *f, const char *id)
{
    if (f->n_ranks == 0)
        return;
    char who[256];
    gp_ranks_format(f->ranks, f->n_ranks, "\xe2\x80\x93", who, sizeof who);
    fputs(" <span class=\"gp-kind gp-ranks\"", fp);
    if (id)
        fprintf(fp, " id=\"%s\"", id);
    fputc('>', fp);
    gp__html_str(fp, who);
    if (f->n_ranks > 1)
        fprintf(fp, " (evidence: rank %d, the worst)", (int)f->rank);
    fputs("</span>", fp);
}
