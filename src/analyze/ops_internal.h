/* Internal interface of `gpuprof ops` (analyze layer): the performance model (ops_model.c) and the
 * device peak table (ops_peak.c) used by the attribution (ops.c). Formulas: docs/ops.md; internals:
 * docs/internals/ops.md. */
#ifndef GP_ANALYZE_OPS_INTERNAL_H
#define GP_ANALYZE_OPS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/group_table.h"
#include "core/strtab.h"
#include "gpuprof/ops.h"

/* One instance's model: what it computes and moves. */
typedef struct gp__op_model {
    gp_op_category cat;
    gp_op_dtype dtype; /* the dtype whose peak applies (fp32 convolutions: tf32, see docs) */
    double flops;
    double bytes;
    /* a framework op modelled by name (vllm::...): its rates are over the union of its subtree's
     * GPU work (TraceLens's kernel time of such ops), not over the subtree's summed durations */
    bool over_busy;
    /* the op launched a memcpy between host and device (or peers): no roof (docs/ops.md) */
    bool host_copy;
} gp__op_model;

/* The labels of rows without a launching op. */
#define GP__NO_LAUNCH "(no launch event)"
#define GP__OUTSIDE_OP "(launched outside any op)"
#define GP__OUTSIDE_ROW " (outside any op)"

/* rows[0, n) into out[0, n) in the order of sort (ops.h, gp_ops_sort; ties by GPU time, key,
 * shapes, rank, start). GP_ENOMEM. */
gp_status gp__ops_sort_rows(const gp_ops_row *rows, size_t n, gp_ops_sort sort, gp_ops_row *out);
/* Pointers to rows[0, n) into out[0, n) in time order: by start, then longer CPU time first, ties
 * in the order of gp__ops_sort_rows by sort (so the rows sorted by sort and then stably by time,
 * in one sort). GP_ENOMEM. */
gp_status gp__ops_rows_by_time(const gp_ops_row *rows, size_t n, gp_ops_sort sort,
                               const gp_ops_row **out);

/* A map from a tuple of four trace string ids to a value: what the walk computes once per distinct
 * name and shapes of a trace rather than once per op instance (the model of op name + shapes, the
 * row of name + shapes; issue 37). Open addressing; zeroed = empty. */
typedef struct gp__idmap {
    uint32_t (*slots)[5]; /* key[4] and value + 1 (0: empty slot) */
    size_t n, n_slots;    /* n_slots: a power of two or 0 */
} gp__idmap;

/* True and *val when key is in m. */
bool gp__idmap_get(const gp__idmap *m, const uint32_t key[4], uint32_t *val);
/* Adds key -> val (key not in m; val < UINT32_MAX). GP_ENOMEM. */
gp_status gp__idmap_put(gp__idmap *m, const uint32_t key[4], uint32_t val) GP_WARN_UNUSED;
/* Empties m (a new trace: its string ids mean other texts), keeping its slots. */
void gp__idmap_clear(gp__idmap *m);
void gp__idmap_free(gp__idmap *m);

/* The models of one trace's distinct (name, shapes) of gp__op_model_compute, a pure function of
 * them: instances repeat their layer's shapes, so the walk parses each set once (issue 37). */
typedef struct gp__op_model_memo {
    gp__idmap ids; /* (name, dims, types, concrete) string ids -> index in ents */
    struct gp__op_model_ent *ents;
    size_t n, cap;
} gp__op_model_memo;

/* gp__op_model_compute of op `name` of trace t (family cat, which its name decides) with shapes
 * sh, from the memo when computed before. Out of memory: the answer still, and *oom set. */
bool gp__op_model_memo_compute(gp__op_model_memo *mm, const gp_trace *t, gp_strid name,
                               gp_op_category cat, const gp_op_shapes *sh, gp__op_model *out,
                               bool *oom);
/* Forgets the models (a new trace: its string ids mean other texts). */
void gp__op_model_memo_clear(gp__op_model_memo *mm);
void gp__op_model_memo_free(gp__op_model_memo *mm);

/* The private part of a gp_ops: the texts rows point to. */
typedef struct gp__ops_priv {
    gp__group_table tab; /* copies of the row keys */
    gp__strtab strs;     /* launcher lists */
    gp_ops_row *inst;    /* gp__ops_compute_kept: the modeled instances, in walk order */
    size_t n_inst;
} gp__ops_priv;

/* By kernel: "aten::mm, aten::addmm (+12 launches by others)" (launchers[0, 3), the NULL ones
 * absent; more: the further launches) interned in strs; NULL when out of memory. */
const char *gp__ops_launcher_text(gp__strtab *strs, const char *const launchers[3], uint64_t more);

/* What a python_function frame named s is: 1 an nn.Module, 2 a source line outside torch, 3
 * neither. */
uint8_t gp__py_class(const char *s);

/* False for a device-to-device memcpy ("Memcpy DtoD (Device -> Device)", ROCm's
 * "CopyDeviceToDevice"); every other memcpy crosses PCIe or NVLink (HtoD, DtoH, PtoP). */
bool gp__memcpy_is_dtod(const char *name);

/* gp_trace_op_shapes(t, ext), searched from *hint (where the last op's were, then past them): a
 * thread's ops open in External id order, so the search is mostly a step or two (gallop, then
 * binary search). *hint starts at 0 for each trace. */
const gp_op_shapes *gp__op_shapes_near(const gp_trace *t, int64_t ext, size_t *hint);

/* What ops cannot say (unlaunched or outside work, missing shapes, no peak), into ops->note. */
void gp__ops_write_notes(gp_ops *ops);

/* The model family of an operator name ("aten::addmm" -> GEMM); GP_OPCAT_NONE when the model
 * does not cover it. */
gp_op_category gp__op_category_of(const char *name);

/* Computes the model of op `name` (of family cat) from its record_shapes texts: dims is the Input
 * Dims JSON, types the Input type JSON, concrete the Concrete Inputs JSON (each may be NULL or "").
 * True on success; false when the shapes are missing, malformed or do not fit the operator (a
 * matrix product whose inner sizes differ, a convolution without its stride): then no model, never
 * a made-up count. */
bool gp__op_model_compute(const char *name, gp_op_category cat, const char *dims, const char *types,
                          const char *concrete, gp__op_model *out);

/* Roofline times of a model on a device, ns: *flop_ns = flops / peak of its dtype, *mem_ns =
 * bytes / bandwidth; returns max of the two, or -1 when the device's peak for it is unknown
 * (elementwise, normalisation, softmax and reductions of a dtype without a FLOP peak use the
 * memory time alone). */
double gp__op_roof_ns(const gp_device_peak *pk, const gp__op_model *m, double *flop_ns,
                      double *mem_ns);

/* The peak of trace t: the built-in table entry of its first device, then the overrides (> 0). */
void gp__ops_trace_peak(const gp_trace *t, double peak_tflops, double peak_tbps,
                        gp_device_peak *out);

/* What the attribution walk of gp_ops_compute tells a listener (the module flame graph,
 * analyze/flame.c), so that one walk and one module rule serve both. modules[0, n) are the string
 * ids (of trace t) of the python_function frames `nn.Module: X_N` open around the op, outermost
 * first; n = 0: no module. A callback returns false when it runs out of memory (the walk then fails
 * with GP_ENOMEM). */
typedef struct gp__ops_listener {
    void *ud;
    /* GPU work (name work, gp_event_kind work_kind) of duration dur: launched by the op named op
     * inside modules[0, n), or by no op (op NULL: no launch call, or a launch outside every op; n
     * is 0). */
    bool (*gpu)(void *ud, const gp_trace *t, const gp_strid *modules, size_t n, gp_ns dur,
                const char *op, gp_strid work, uint8_t work_kind);
    /* An op instance (named op) closed with self CPU time self_cpu inside modules[0, n). */
    bool (*op)(void *ud, const gp_trace *t, const gp_strid *modules, size_t n, gp_ns self_cpu,
               const char *op);
} gp__ops_listener;

/* The module name of a python_function frame named s[0, len) ("nn.Module: Linear_3"): without the
 * prefix "nn.Module: " ("Linear_3") and, with merge, without its instance number ("Linear");
 * *out_len receives its length. The one naming rule of ops --by module and flame --by module. */
const char *gp__module_name(const char *s, size_t len, bool merge, size_t *out_len);

/* gp_ops_compute, telling listener l (NULL: none) each attribution as the walk makes it. */
gp_status gp__ops_compute_with(const gp_trace *const *traces, size_t n, const gp_ops_opts *opts,
                               const gp__ops_listener *l, gp_ops **out);

/* gp_ops_compute by shape (opts->by; any other grouping: no instances kept) that also keeps the
 * modeled, attributed op instances (gp__ops_instances) from the same walk, so that a command
 * needing both tables walks the trace once (the findings' unfused-attention rule). */
gp_status gp__ops_compute_kept(const gp_trace *const *traces, size_t n, const gp_ops_opts *opts,
                               gp_ops **out) GP_WARN_UNUSED;

/* The instances kept by gp__ops_compute_kept, in walk order (rows as by instance: key, shapes,
 * types, module, line, ids, rank, ts and the figures); NULL and *n 0 when none were kept. They
 * live until gp_ops_free or gp__ops_drop_instances. */
const gp_ops_row *gp__ops_instances(const gp_ops *ops, size_t *n);

/* Frees the kept instances of ops (NULL: nothing) once no rule needs them. */
void gp__ops_drop_instances(gp_ops *ops);

#endif
