/* Unit tests of the core pieces the analyses rely on: the merge sort (order and stability), the
 * radix sort of key/value pairs, interval lists (union by HTA's grouping rule, intersection) and
 * the descriptive statistics. Each is checked against a plain reference written here (qsort with a
 * tie-break, a coverage grid, textbook formulas) on many generated inputs: sorted, reversed, a few
 * long runs, many equal keys, random; sizes around the merge sort's run length and the radix
 * sort's cut-over. numpy's documented percentiles give the fixed expectations. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/ivls.h"
#include "core/msort.h"
#include "core/radix.h"
#include "core/stats.h"
#include "core/util.h"

/* xorshift64*: deterministic inputs, one seed per case. */
static uint64_t rnd(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 2685821657736338717ull;
}

typedef struct item {
    int64_t key;
    size_t seq; /* position before sorting: stability is checked on it */
} item;

static int cmp_item_key(const item *a, const item *b)
{
    return (a->key > b->key) - (a->key < b->key);
}
GP__DEFINE_MERGE_SORT(sort_items, item, cmp_item_key)

/* The reference: qsort with the original position as tie-break is a stable order by definition. */
static int cmp_item_ref(const void *pa, const void *pb)
{
    const item *a = pa, *b = pb;
    if (a->key != b->key)
        return (a->key > b->key) - (a->key < b->key);
    return (a->seq > b->seq) - (a->seq < b->seq);
}

enum shape { SORTED, REVERSED, RUNS, FEW_KEYS, RANDOM, N_SHAPES };

static int64_t gen_key(enum shape sh, size_t i, size_t n, uint64_t *s)
{
    switch (sh) {
    case SORTED:
        return (int64_t)i;
    case REVERSED:
        return (int64_t)(n - i);
    case RUNS: /* four ascending runs that overlap, as concatenated traces do */
        return (int64_t)((i % (n / 4 + 1)) * 3 + (i / (n / 4 + 1)));
    case FEW_KEYS:
        return (int64_t)(rnd(s) % 5);
    default:
        return (int64_t)(rnd(s) % 1000000) - 500000;
    }
}

static const size_t sizes[] = {0, 1, 2, 3, 31, 32, 33, 63, 64, 65, 100, 257, 1000, 4099, 20000};

static void merge_sort_is_sorted_and_stable(void **state)
{
    (void)state;
    for (size_t z = 0; z < sizeof sizes / sizeof *sizes; z++) {
        size_t n = sizes[z];
        for (int sh = 0; sh < N_SHAPES; sh++) {
            uint64_t seed = 0x9e3779b97f4a7c15ull ^ (n * 31 + (size_t)sh);
            item *a = malloc((n ? n : 1) * sizeof *a);
            item *ref = malloc((n ? n : 1) * sizeof *ref);
            assert_non_null(a);
            assert_non_null(ref);
            for (size_t i = 0; i < n; i++) {
                a[i].key = gen_key((enum shape)sh, i, n, &seed);
                a[i].seq = i;
            }
            memcpy(ref, a, n * sizeof *a);
            qsort(ref, n, sizeof *ref, cmp_item_ref);
            assert_true(sort_items(a, n));
            for (size_t i = 0; i < n; i++) {
                if (a[i].key != ref[i].key || a[i].seq != ref[i].seq)
                    fail_msg(
                        "n=%zu shape=%d: position %zu holds (%lld, #%zu), expected (%lld, #%zu)", n,
                        sh, i, (long long)a[i].key, a[i].seq, (long long)ref[i].key, ref[i].seq);
            }
            free(a);
            free(ref);
        }
    }
}

typedef struct kv {
    uint64_t k, v;
} kv;

static int cmp_kv_ref(const void *pa, const void *pb)
{
    const kv *a = pa, *b = pb;
    if (a->k != b->k)
        return a->k > b->k ? 1 : -1;
    return (a->v > b->v) - (a->v < b->v);
}

static void radix_sort_kv_is_sorted_and_stable(void **state)
{
    (void)state;
    for (size_t z = 0; z < sizeof sizes / sizeof *sizes; z++) {
        size_t n = sizes[z];
        for (int sh = 0; sh < N_SHAPES + 1; sh++) {
            uint64_t seed = 0xdeadbeefcafef00dull ^ (n * 17 + (size_t)sh);
            uint64_t *keys = malloc((n ? n : 1) * sizeof *keys);
            uint64_t *vals = malloc((n ? n : 1) * sizeof *vals);
            kv *ref = malloc((n ? n : 1) * sizeof *ref);
            assert_non_null(keys);
            assert_non_null(vals);
            assert_non_null(ref);
            for (size_t i = 0; i < n; i++) {
                /* The extra shape uses the whole 64-bit range: every radix digit matters. */
                keys[i] = sh == N_SHAPES
                              ? rnd(&seed)
                              : (uint64_t)(gen_key((enum shape)sh, i, n, &seed) + 500000);
                vals[i] = i;
                ref[i].k = keys[i];
                ref[i].v = i;
            }
            qsort(ref, n, sizeof *ref, cmp_kv_ref);
            assert_int_equal(gp__radix_sort_kv(keys, vals, n), GP_OK);
            for (size_t i = 0; i < n; i++) {
                if (keys[i] != ref[i].k || vals[i] != ref[i].v)
                    fail_msg("n=%zu shape=%d: position %zu holds (%llu, #%llu), expected "
                             "(%llu, #%llu)",
                             n, sh, i, (unsigned long long)keys[i], (unsigned long long)vals[i],
                             (unsigned long long)ref[i].k, (unsigned long long)ref[i].v);
            }
            free(keys);
            free(vals);
            free(ref);
        }
    }
}

/* Keys in k ascending runs (the analyses push correlation ids a track at a time), for run counts
 * around the sort's merge limit (16: merged; 17 and more: radix), runs of unequal lengths whose
 * keys overlap and repeat (ties across runs and inside one), small keys and runs that cross 2^63
 * (an unsigned comparison): the order of a stable sort each time. A merge that took the later run
 * first on a tie, or compared signed keys, fails it. */
static void radix_sort_kv_merges_runs_stably(void **state)
{
    (void)state;
    const size_t run_counts[] = {1, 2, 3, 15, 16, 17, 40};
    for (size_t c = 0; c < sizeof run_counts / sizeof *run_counts; c++)
        for (int big = 0; big < 2; big++) {
            size_t k = run_counts[c], n = 0, cap = k * 200 + 1;
            uint64_t seed = 0x5eed0000ull + c * 2 + (uint64_t)big;
            uint64_t *keys = malloc(cap * sizeof *keys), *vals = malloc(cap * sizeof *vals);
            kv *ref = malloc(cap * sizeof *ref);
            assert_non_null(keys);
            assert_non_null(vals);
            assert_non_null(ref);
            for (size_t r = 0; r < k; r++) {
                size_t len = 1 + rnd(&seed) % 199;
                uint64_t key =
                    (big ? 0x7fffffffffffff00ull : 0) + rnd(&seed) % 512; /* big: runs cross 2^63 */
                for (size_t i = 0; i < len; i++, n++) {
                    key += rnd(&seed) % 3; /* steps of 0: ties inside the run */
                    keys[n] = key;
                    vals[n] = n;
                    ref[n] = (kv){key, n};
                }
            }
            qsort(ref, n, sizeof *ref, cmp_kv_ref);
            assert_int_equal(gp__radix_sort_kv(keys, vals, n), GP_OK);
            for (size_t i = 0; i < n; i++)
                if (keys[i] != ref[i].k || vals[i] != ref[i].v)
                    fail_msg("%zu runs (big %d), n=%zu: position %zu holds (%llu, #%llu), "
                             "expected (%llu, #%llu)",
                             k, big, n, i, (unsigned long long)keys[i], (unsigned long long)vals[i],
                             (unsigned long long)ref[i].k, (unsigned long long)ref[i].v);
            free(keys);
            free(vals);
            free(ref);
        }
}

/* Coverage of [s, e) intervals on a grid of unit cells: the reference union and intersection. */
#define GRID 400

static void cover(const gp__ivl *v, size_t n, unsigned char *grid)
{
    memset(grid, 0, GRID);
    for (size_t i = 0; i < n; i++)
        for (int64_t x = v[i].s; x < v[i].e; x++)
            grid[x] = 1;
}

static int64_t grid_count(const unsigned char *a, const unsigned char *b)
{
    int64_t c = 0;
    for (int x = 0; x < GRID; x++)
        c += a[x] && (!b || b[x]);
    return c;
}

static void random_list(gp__ivls *l, size_t n, int64_t max_len, uint64_t *s)
{
    for (size_t i = 0; i < n; i++) {
        int64_t a = (int64_t)(rnd(s) % (GRID - max_len));
        int64_t len = (int64_t)(rnd(s) % (uint64_t)(max_len + 1)); /* 0-length intervals too */
        assert_int_equal(gp__ivls_push(l, a, a + len), GP_OK);
    }
}

/* qsort reference for interval sorting: by start, then by position (e - s - 1 here). */
static int cmp_ivl_ref(const void *pa, const void *pb)
{
    const gp__ivl *a = pa, *b = pb;
    if (a->s != b->s)
        return a->s < b->s ? -1 : 1;
    return (a->e - a->s > b->e - b->s) - (a->e - a->s < b->e - b->s);
}

/* gp__ivls_sort is a stable sort by start, both ways it sorts: lists of at most 64 ascending
 * runs (one per track, as the analyses push them) are merged, longer ones radix-sorted. Each
 * interval's length is its position + 1, so the reference (qsort by start, then position) is
 * the stable order; starts repeat often (ties). */
static void interval_sort_is_stable_by_runs(void **state)
{
    (void)state;
    size_t runs_of[] = {1, 2, 3, 7, 63, 64, 65, 200};
    for (size_t c = 0; c < sizeof runs_of / sizeof *runs_of; c++) {
        uint64_t seed = 0xfeedull + c;
        gp__ivls l = {0};
        size_t n = 0;
        for (size_t r = 0; r < runs_of[c]; r++) {
            int64_t at = (int64_t)(rnd(&seed) % 50);
            size_t len = 1 + (size_t)(rnd(&seed) % 300);
            for (size_t i = 0; i < len; i++, n++) {
                at += (int64_t)(rnd(&seed) % 3); /* ascending, with ties */
                assert_int_equal(gp__ivls_push(&l, at, at + 1 + (int64_t)n), GP_OK);
            }
        }
        gp__ivl *ref = malloc(n * sizeof(*ref));
        assert_non_null(ref);
        memcpy(ref, l.v, n * sizeof(*ref));
        qsort(ref, n, sizeof(*ref), cmp_ivl_ref);
        assert_int_equal(gp__ivls_sort(&l), GP_OK);
        assert_int_equal(l.n, n);
        for (size_t i = 0; i < n; i++)
            if (l.v[i].s != ref[i].s || l.v[i].e != ref[i].e)
                fail_msg("%zu runs: interval %zu is [%lld, %lld), want [%lld, %lld)", runs_of[c], i,
                         (long long)l.v[i].s, (long long)l.v[i].e, (long long)ref[i].s,
                         (long long)ref[i].e);
        free(ref);
        gp__ivls_free(&l);
    }
}

static void interval_union_and_intersection_match_coverage(void **state)
{
    (void)state;
    unsigned char ga[GRID], gb[GRID];
    for (int round = 0; round < 300; round++) {
        uint64_t seed = 0x1234567ull + (uint64_t)round * 7919;
        gp__ivls a = {0}, b = {0};
        size_t na = (size_t)(rnd(&seed) % 40), nb = (size_t)(rnd(&seed) % 40);
        int64_t max_len = 1 + (int64_t)(rnd(&seed) % 60);
        random_list(&a, na, max_len, &seed);
        random_list(&b, nb, max_len, &seed);
        cover(a.v, a.n, ga);
        cover(b.v, b.n, gb);
        assert_int_equal(gp__ivls_sort(&a), GP_OK);
        assert_int_equal(gp__ivls_sort(&b), GP_OK);
        for (size_t i = 1; i < a.n; i++)
            assert_true(a.v[i - 1].s <= a.v[i].s);
        int64_t ua = gp__ivls_union_sorted(&a), ub = gp__ivls_union_sorted(&b);
        if (ua != grid_count(ga, NULL))
            fail_msg("round %d: union %lld, coverage %lld", round, (long long)ua,
                     (long long)grid_count(ga, NULL));
        assert_int_equal(ub, grid_count(gb, NULL));
        /* The union is sorted, disjoint, and covers the same cells. */
        for (size_t i = 1; i < a.n; i++)
            assert_true(a.v[i - 1].e < a.v[i].s);
        unsigned char gu[GRID];
        cover(a.v, a.n, gu);
        assert_memory_equal(gu, ga, GRID);
        int64_t x = gp__ivls_intersect(&a, &b);
        if (x != grid_count(ga, gb))
            fail_msg("round %d: intersection %lld, coverage %lld", round, (long long)x,
                     (long long)grid_count(ga, gb));
        assert_int_equal(gp__ivls_intersect(&b, &a), x);
        gp__ivls_free(&a);
        gp__ivls_free(&b);
    }
}

static void interval_union_follows_the_grouping_rule(void **state)
{
    (void)state;
    /* Touching intervals join one group; a later interval inside an earlier long one adds
     * nothing; a gap starts a new group. */
    gp__ivls l = {0};
    const int64_t iv[][2] = {{0, 10}, {2, 4}, {10, 15}, {20, 25}, {21, 22}, {30, 30}};
    for (size_t i = 0; i < sizeof iv / sizeof *iv; i++)
        assert_int_equal(gp__ivls_push(&l, iv[i][0], iv[i][1]), GP_OK);
    assert_int_equal(gp__ivls_union_sorted(&l), 20);
    assert_true(l.n >= 2);
    assert_int_equal(l.v[0].s, 0);
    assert_int_equal(l.v[0].e, 15);
    assert_int_equal(l.v[1].s, 20);
    assert_int_equal(l.v[1].e, 25);
    gp__ivls_free(&l);
}

static void stats_match_numpy_definitions(void **state)
{
    (void)state;
    /* numpy.percentile([1, 2, 3, 4], [50, 95, 99]) = 2.5, 3.85, 3.97; np.std = 1.118034. */
    int64_t v[] = {4, 1, 3, 2};
    gp__stats st;
    gp__stats_compute(v, 4, &st);
    assert_int_equal(st.n, 4);
    assert_int_equal(st.total, 10);
    assert_int_equal(st.min, 1);
    assert_int_equal(st.max, 4);
    assert_float_equal(st.mean, 2.5, 1e-12);
    assert_float_equal(st.stddev, 1.118033988749895, 1e-9);
    assert_float_equal(st.p50, 2.5, 1e-12);
    assert_float_equal(st.p95, 3.85, 1e-9);
    assert_float_equal(st.p99, 3.97, 1e-9);
    for (int i = 0; i < 4; i++)
        assert_int_equal(v[i], i + 1); /* sorted in place */

    gp__stats_compute(v, 0, &st);
    assert_int_equal(st.n, 0);
    assert_int_equal(st.total, 0);
    assert_float_equal(st.p99, 0.0, 0.0);

    int64_t one = 7;
    gp__stats_compute(&one, 1, &st);
    assert_float_equal(st.p50, 7.0, 0.0);
    assert_float_equal(st.stddev, 0.0, 0.0);

    double d[] = {5.0, 1.0, 3.0};
    assert_float_equal(gp__median_d(d, 3), 3.0, 0.0);
    double e[] = {4.0, 1.0, 3.0, 2.0};
    assert_float_equal(gp__median_d(e, 4), 2.5, 0.0);
    assert_float_equal(gp__median_d(e, 0), 0.0, 0.0);
}

static int cmp_i64_ref(const void *pa, const void *pb)
{
    int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
    return (a > b) - (a < b);
}

static void stats_agree_with_a_reference_on_generated_samples(void **state)
{
    (void)state;
    for (size_t z = 0; z < sizeof sizes / sizeof *sizes; z++) {
        size_t n = sizes[z];
        for (int sh = 0; sh < N_SHAPES; sh++) {
            uint64_t seed = 0xabcdef12345ull ^ (n * 13 + (size_t)sh);
            int64_t *v = malloc((n ? n : 1) * sizeof *v), *ref = malloc((n ? n : 1) * sizeof *v);
            assert_non_null(v);
            assert_non_null(ref);
            for (size_t i = 0; i < n; i++)
                v[i] = ref[i] = gen_key((enum shape)sh, i, n, &seed) * 1000;
            qsort(ref, n, sizeof *ref, cmp_i64_ref);
            gp__stats st;
            gp__stats_compute(v, n, &st);
            assert_memory_equal(v, ref,
                                n * sizeof *v); /* gp__stats_compute sorts (radix for large n) */
            if (n == 0) {
                free(v);
                free(ref);
                continue;
            }
            long double sum = 0, sq = 0;
            for (size_t i = 0; i < n; i++)
                sum += ref[i];
            long double mean = sum / n;
            for (size_t i = 0; i < n; i++)
                sq += (ref[i] - mean) * (ref[i] - mean);
            assert_int_equal(st.total, (int64_t)sum);
            assert_int_equal(st.min, ref[0]);
            assert_int_equal(st.max, ref[n - 1]);
            assert_float_equal(st.mean, (double)mean,
                               1e-6 * (1 + (double)(mean < 0 ? -mean : mean)));
            assert_float_equal(st.stddev, sqrt((double)(sq / n)), 1e-6 * (1 + st.stddev));
            const double qs[] = {0.5, 0.95, 0.99};
            const double got[] = {st.p50, st.p95, st.p99};
            for (int k = 0; k < 3; k++) {
                double h = (double)(n - 1) * qs[k];
                size_t lo = (size_t)h;
                double want = lo + 1 < n
                                  ? ref[lo] + (h - (double)lo) * (double)(ref[lo + 1] - ref[lo])
                                  : (double)ref[lo];
                assert_float_equal(got[k], want, 1e-6 * (1 + (want < 0 ? -want : want)));
                assert_float_equal(gp__quantile_sorted(ref, n, qs[k]), want,
                                   1e-6 * (1 + (want < 0 ? -want : want)));
            }
            free(v);
            free(ref);
        }
    }
}

/* Quantiles of samples a hostile trace can hold (any two int64, neighbours whose difference
 * passes INT64_MAX) interpolate in double; the helpers the analyses use at the int64 limits
 * saturate: a double of 2^63 or more (a saturated INT64_MAX sum as a double) to ns, a product,
 * a rounded-up division (UBSan aborts the sanitizer build on an overflow). */
static void stats_and_conversions_at_int64_limits(void **state)
{
    (void)state;
    const int64_t v[] = {-INT64_MAX, INT64_MAX};
    assert_true(gp__quantile_sorted(v, 2, 0.5) == 0.0);
    assert_true(gp__quantile_sorted(v, 2, 0.25) == -0x1p62);
    assert_true(gp__quantile_sorted(v, 2, 1.0) == 0x1p63);
    int64_t w[] = {INT64_MAX, INT64_MIN};
    gp__stats st;
    gp__stats_compute(w, 2, &st);
    assert_int_equal(st.min, INT64_MIN);
    assert_int_equal(st.max, INT64_MAX);
    assert_true(st.p50 == 0.0);
    assert_float_equal(st.p95, 0.9 * 0x1p63, 1e4);
    assert_int_equal(gp__ns_of_double(0x1p63), INT64_MAX);
    assert_int_equal(gp__ns_of_double((double)INT64_MAX), INT64_MAX);
    assert_int_equal(gp__ns_of_double(1e300), INT64_MAX);
    assert_int_equal(gp__ns_of_double(HUGE_VAL), INT64_MAX);
    assert_int_equal(gp__ns_of_double(-0x1p63), INT64_MIN);
    assert_int_equal(gp__ns_of_double(-1e300), INT64_MIN);
    assert_int_equal(gp__ns_of_double(NAN), 0);
    assert_int_equal(gp__ns_of_double(0x1p62 + 0.5), (int64_t)1 << 62);
    assert_int_equal(gp__ns_of_double(1.9), 1); /* truncates as a cast */
    assert_int_equal(gp__ns_of_double(-1.9), -1);
    assert_int_equal(gp__sat_mul(INT64_MAX / 2 + 1, 2), INT64_MAX);
    assert_int_equal(gp__sat_mul(INT64_MAX / 2 + 1, -2), INT64_MIN);
    assert_int_equal(gp__sat_mul(-3, -INT64_MAX), INT64_MAX);
    assert_int_equal(gp__sat_mul(3, 7), 21);
    assert_int_equal(gp__ceil_div(INT64_MAX, 600), INT64_MAX / 600 + 1);
    assert_int_equal(gp__ceil_div(1200, 600), 2);
    assert_int_equal(gp__ceil_div(1201, 600), 3);
    assert_int_equal(gp__ceil_div(0, 600), 0);
}

/* gp__msort, the qsort drop-in, with and without its buffer: sorted by key, ties in input order
 * (checked against the index each element carries), on sizes around the insertion cut-off and
 * inputs with many ties, sorted and reversed runs. */
typedef struct tie_rec {
    int32_t key;
    uint32_t index;
    char pad[5]; /* an odd element size */
} tie_rec;

static int cmp_tie_key(const void *a, const void *b)
{
    const tie_rec *x = a, *y = b;
    return (x->key > y->key) - (x->key < y->key);
}

static void generic_stable_sort_keeps_ties_in_order(void **state)
{
    (void)state;
    size_t lens[] = {0, 1, 2, 3, 15, 16, 17, 33, 100, 1000, 4097};
    uint64_t x = 12345;
    for (size_t si = 0; si < sizeof lens / sizeof lens[0]; si++) {
        size_t n = lens[si];
        tie_rec *a = calloc(n + 1, sizeof *a), *b = calloc(n + 1, sizeof *b);
        assert_non_null(a);
        assert_non_null(b);
        for (int shape = 0; shape < 4; shape++) {
            for (size_t i = 0; i < n; i++) {
                x = x * 6364136223846793005ULL + 1442695040888963407ULL;
                int32_t r = (int32_t)(x >> 59); /* 32 distinct keys: many ties */
                a[i].key = shape == 0   ? r
                           : shape == 1 ? (int32_t)(i / 7)
                           : shape == 2 ? -(int32_t)(i / 3)
                                        : 0;
                a[i].index = (uint32_t)i;
            }
            memcpy(b, a, n * sizeof *a);
            gp__msort(a, n, sizeof *a, cmp_tie_key);
            gp__msort_in_place(b, n, sizeof *b, cmp_tie_key);
            for (size_t i = 1; i < n; i++) {
                assert_true(a[i - 1].key < a[i].key ||
                            (a[i - 1].key == a[i].key && a[i - 1].index < a[i].index));
                assert_true(b[i - 1].key < b[i].key ||
                            (b[i - 1].key == b[i].key && b[i - 1].index < b[i].index));
            }
        }
        free(a);
        free(b);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(merge_sort_is_sorted_and_stable),
        cmocka_unit_test(generic_stable_sort_keeps_ties_in_order),
        cmocka_unit_test(radix_sort_kv_is_sorted_and_stable),
        cmocka_unit_test(radix_sort_kv_merges_runs_stably),
        cmocka_unit_test(interval_sort_is_stable_by_runs),
        cmocka_unit_test(interval_union_and_intersection_match_coverage),
        cmocka_unit_test(interval_union_follows_the_grouping_rule),
        cmocka_unit_test(stats_match_numpy_definitions),
        cmocka_unit_test(stats_agree_with_a_reference_on_generated_samples),
        cmocka_unit_test(stats_and_conversions_at_int64_limits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
