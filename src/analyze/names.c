/* Readable short forms of long (demangled C++) names for fixed-width tables, and the normalised
 * form gpuprof diff matches names by. Mangled names ("_Z...", as some ROCm and vLLM traces write
 * kernel names) are demangled first (core/demangle.h); the trace and the data outputs (JSON, CSV)
 * keep the name as written. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuprof/diff.h"
#include "gpuprof/summary.h"

#include "core/msort.h"
#include "core/util.h"
#include "core/demangle.h"

static void copy_trunc(const char *s, size_t len, char *out, size_t cap)
{
    if (cap == 0)
        return;
    if (len >= cap)
        len = cap - 1;
    memcpy(out, s, len);
    out[len] = '\0';
}

/* Elides the middle of s[0..len) to fit width characters: "head...tail". */
static void elide(const char *s, size_t len, size_t width, char *out, size_t cap)
{
    if (len <= width || width < 8) {
        copy_trunc(s, len <= width ? len : width, out, cap);
        return;
    }
    size_t tail = (width - 3) / 2, head = width - 3 - tail;
    char tmp[1024];
    if (head + tail + 4 > sizeof tmp) {
        copy_trunc(s, width, out, cap);
        return;
    }
    memcpy(tmp, s, head);
    memcpy(tmp + head, "...", 3);
    memcpy(tmp + head + 3, s + len - tail, tail);
    copy_trunc(tmp, head + 3 + tail, out, cap);
}

static void shorten(const char *name, size_t width, char *out, size_t cap);

void gp_shorten_name(const char *name, size_t width, char *out, size_t cap)
{
    char *dem = gp__demangle(name);
    shorten(dem ? dem : name, width, out, cap);
    free(dem);
}

static void shorten(const char *name, size_t width, char *out, size_t cap)
{
    size_t len = strlen(name);
    if (len <= width) {
        copy_trunc(name, len, out, cap);
        return;
    }
    /* Only C++-looking names are simplified: a template or scope before the first '(', or no space
     * there (a function name). "Memcpy HtoD (Pageable -> Device)" is just elided. */
    const char *paren = strchr(name, '(');
    bool cxx = false;
    if (strstr(name, "::") || strchr(name, '<')) {
        cxx = true;
    } else if (paren) {
        cxx = true;
        for (const char *q = name; q < paren; q++)
            if (*q == ' ')
                cxx = false;
    }
    if (!cxx) {
        elide(name, len, width, out, cap);
        return;
    }
    /* 1. Drop "(anonymous namespace)", template arguments and the argument list. */
    char buf[1024];
    size_t n = 0;
    int angle = 0;
    for (size_t i = 0; i < len && n + 6 < sizeof buf; i++) {
        char c = name[i];
        if (c == '(' && strncmp(name + i, "(anonymous namespace)", 21) == 0) {
            i += 20;
            if (angle == 0) {
                memcpy(buf + n, "{anon}", 6);
                n += 6;
            }
            continue;
        }
        if (angle == 0 && c == '(' && n > 0)
            break; /* argument list: the rest is parameters (and maybe qualifiers) */
        if (c == '<') {
            if (angle++ == 0) {
                memcpy(buf + n, "<...>", 5);
                n += 5;
            }
            continue;
        }
        if (c == '>' && angle > 0) {
            angle--;
            continue;
        }
        if (angle == 0)
            buf[n++] = c;
    }
    while (n > 0 && buf[n - 1] == ' ')
        n--;
    buf[n] = '\0';
    /* 2. Drop the return type: keep the last space-separated token. */
    const char *start = buf;
    for (const char *p = buf; *p; p++)
        if (*p == ' ')
            start = p + 1;
    /* 3. Keep at most the last two scopes. */
    const char *scopes[3] = {start, NULL, NULL};
    int found = 0;
    for (const char *p = start + strlen(start); p > start + 1; p--) {
        if (p[-1] == ':' && p[-2] == ':') {
            scopes[++found] = p;
            p--;
            if (found == 2)
                break;
        }
    }
    const char *keep = found == 2 ? scopes[2] : start; /* scopes[2]: last-but-one component */
    size_t klen = strlen(keep);
    if (klen == 0) {
        elide(name, len, width, out, cap);
        return;
    }
    elide(keep, klen, width, out, cap);
}

/* ---- unique short names for a set ------------------------------------------------------------ */

/* The long form a colliding name is shown from: the name without a leading "void " return type
 * and without a trailing argument list "(...)" (or "(...) const"). */
static void long_form(const char *name, const char **s, size_t *len)
{
    size_t n = strlen(name);
    if (strncmp(name, "void ", 5) == 0 && n > 5) {
        name += 5;
        n -= 5;
    }
    size_t end = n;
    if (end >= 6 && strcmp(name + end - 6, " const") == 0)
        end -= 6;
    if (end > 0 && name[end - 1] == ')') {
        int depth = 0;
        for (size_t i = end; i-- > 0;) {
            if (name[i] == ')')
                depth++;
            else if (name[i] == '(' && --depth == 0) {
                if (i > 0)
                    n = i;
                break;
            }
        }
    }
    *s = name;
    *len = n;
}

static size_t common_prefix(const char *a, size_t na, const char *b, size_t nb)
{
    size_t i = 0;
    while (i < na && i < nb && a[i] == b[i])
        i++;
    return i;
}

/* Shows s[0..len) in width characters keeping the byte at p (where s first differs from every
 * other name of its group) and what follows: the usual "head...tail" elision when p falls inside
 * the head or the tail, else "head...window..." with the window starting just before p. */
static void elide_keeping(const char *s, size_t len, size_t p, size_t width, char *out, size_t cap)
{
    if (len <= width || width < 16) {
        elide(s, len, width, out, cap);
        return;
    }
    size_t tail = (width - 3) / 2, head = width - 3 - tail;
    if (p < head || p >= len - tail) {
        elide(s, len, width, out, cap);
        return;
    }
    char tmp[1024];
    if (width + 1 > sizeof tmp) {
        elide(s, len, width, out, cap);
        return;
    }
    /* the head: the name from its last scope (before any template argument list) up to its '<',
     * at most two fifths of the width */
    size_t base = 0;
    for (size_t i = 0; i + 1 < p && s[i] != '<' && s[i] != '('; i++)
        if (s[i] == ':' && s[i + 1] == ':')
            base = i + 2;
    size_t stop = base;
    while (stop < p && s[stop] != '<')
        stop++;
    head = stop - base + 1;
    if (head > width * 2 / 5)
        head = width * 2 / 5;
    size_t room = width - head - 3; /* for the window and its trailing "..." */
    size_t from = p;
    /* back up to the start of the identifier holding p, by at most a third of the room */
    for (size_t k = 0; from > base + head && k < room / 3; k++, from--) {
        char c = s[from - 1];
        if (!(c == '_' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
              (c >= 'A' && c <= 'Z')))
            break;
    }
    size_t n = 0;
    memcpy(tmp, s + base, head);
    n = head;
    memcpy(tmp + n, "...", 3);
    n += 3;
    if (len - from <= room) {
        from = len - room; /* the window reaches the end: fill the room from the end */
        memcpy(tmp + n, s + from, room);
        n += room;
    } else {
        memcpy(tmp + n, s + from, room - 3);
        n += room - 3;
        memcpy(tmp + n, "...", 3);
        n += 3;
    }
    copy_trunc(tmp, n, out, cap);
}

typedef struct name_ix {
    const char *key; /* the short form being compared */
    size_t i;
} name_ix;

/* Orders ix[0..n) so that entries of equal short forms (out + k * cap) are adjacent, each run in
 * input order (runs in the order of their first entry), with a hash table of the short forms:
 * linear, where a sort compared strings n log n times on scattered memory. Only the runs matter:
 * each is handled on its own. */
static gp_status group_by_short(name_ix *ix, size_t n, char *out, size_t cap)
{
    size_t slots = 16;
    while (slots < 2 * n)
        slots *= 2;
    size_t *slot = malloc(slots * sizeof *slot); /* a run's number + 1, or 0 */
    size_t *first = malloc(n * sizeof *first), *last = malloc(n * sizeof *last);
    size_t *next = malloc(n * sizeof *next); /* the next entry of k's run, or n */
    gp_status st = GP_ENOMEM;
    if (!slot || !first || !last || !next)
        goto done;
    memset(slot, 0, slots * sizeof *slot);
    size_t runs = 0;
    for (size_t k = 0; k < n; k++) {
        const char *key = out + k * cap;
        size_t h = (size_t)gp__hash_bytes(key, strlen(key)) & (slots - 1);
        while (slot[h] && strcmp(out + first[slot[h] - 1] * cap, key) != 0)
            h = (h + 1) & (slots - 1);
        next[k] = n;
        if (!slot[h]) {
            slot[h] = ++runs;
            first[runs - 1] = k;
        } else {
            next[last[slot[h] - 1]] = k;
        }
        last[slot[h] - 1] = k;
    }
    size_t o = 0;
    for (size_t r = 0; r < runs; r++)
        for (size_t k = first[r]; k < n; k = next[k])
            ix[o++] = (name_ix){out + k * cap, k};
    st = GP_OK;
done:
    free(slot);
    free(first);
    free(last);
    free(next);
    return st;
}

/* One entry of a run of equal short forms: its identity (the name, "" for NULL), the text it is
 * shown from, the long form of that text, and its place in the run. */
typedef struct run_ent {
    const char *id;
    const char *shown;
    const char *ls; /* long_form(shown) */
    size_t ll;
    size_t pos; /* index into ix */
    size_t p;   /* where it first differs from every other name of the run */
    bool same_long;
} run_ent;

typedef run_ent *run_ent_ptr;

static int cmp_by_id(const void *pa, const void *pb)
{
    const run_ent *a = pa, *b = pb;
    int c = strcmp(a->id, b->id);
    return c ? c : (a->pos > b->pos) - (a->pos < b->pos);
}

static int cmp_bytes(const char *a, size_t na, const char *b, size_t nb)
{
    int c = memcmp(a, b, na < nb ? na : nb);
    return c ? c : (na > nb) - (na < nb);
}

static int cmp_by_long(const void *pa, const void *pb)
{
    const run_ent *a = *(const run_ent_ptr *)pa, *b = *(const run_ent_ptr *)pb;
    return cmp_bytes(a->ls, a->ll, b->ls, b->ll);
}

static int cmp_by_shown(const void *pa, const void *pb)
{
    const run_ent *a = *(const run_ent_ptr *)pa, *b = *(const run_ent_ptr *)pb;
    return strcmp(a->shown, b->shown);
}

/* For each of the d distinct names at u[0..d) (sorted by long form): p, the longest prefix of its
 * long form shared with another name's, and same_long, whether another name has the same long
 * form. The longest common prefix of a string with any other of a sorted set is the one with a
 * neighbour, so this is linear after the sort (it was a scan of the whole run per entry). */
static void prefixes_long(run_ent_ptr *u, size_t d)
{
    for (size_t j = 0; j < d; j++) {
        u[j]->p = 0;
        u[j]->same_long = false;
    }
    for (size_t j = 0; j + 1 < d; j++) {
        run_ent *x = u[j], *y = u[j + 1];
        size_t c = common_prefix(x->ls, x->ll, y->ls, y->ll);
        if (c == x->ll && c == y->ll)
            x->same_long = y->same_long = true; /* differ only in what long_form dropped */
        if (c > x->p)
            x->p = c;
        if (c > y->p)
            y->p = c;
    }
}

/* The same on the full shown text, for the names whose long form another name shares (u sorted
 * by shown text): p is then a position in shown. */
static void prefixes_full(run_ent_ptr *u, size_t d)
{
    size_t prev = 0; /* common prefix with the previous name */
    for (size_t j = 0; j < d; j++) {
        size_t next = 0;
        if (j + 1 < d)
            next = common_prefix(u[j]->shown, strlen(u[j]->shown), u[j + 1]->shown,
                                 strlen(u[j + 1]->shown));
        if (u[j]->same_long)
            u[j]->p = prev > next ? prev : next;
        prev = next;
    }
}

/* Step 1 for the run ix[a..b) of equal short forms (e[0..b-a) and u: scratch of b-a each): when
 * it holds different names, shows each from its long form, keeping the part that tells it from
 * the most similar other name of the run. Entries of one name get one short form. */
static void distinguish_run(const char *const *names, const char *const *shown, name_ix *ix,
                            size_t a, size_t b, size_t width, char *out, size_t cap, run_ent *e,
                            run_ent_ptr *u)
{
    size_t m = b - a;
    for (size_t k = 0; k < m; k++) {
        size_t i = ix[a + k].i;
        e[k] = (run_ent){
            .id = names[i] ? names[i] : "", .shown = shown[i] ? shown[i] : "", .pos = a + k};
    }
    gp__msort(e, m, sizeof *e, cmp_by_id);
    size_t d = 0; /* distinct names: the first entry of each */
    for (size_t k = 0; k < m; k++)
        if (k == 0 || strcmp(e[k].id, e[k - 1].id) != 0) {
            long_form(e[k].shown, &e[k].ls, &e[k].ll);
            u[d++] = &e[k];
        }
    if (d < 2)
        return;
    gp__msort(u, d, sizeof *u, cmp_by_long);
    prefixes_long(u, d);
    gp__msort(u, d, sizeof *u, cmp_by_shown);
    prefixes_full(u, d);
    /* each entry takes its name's first entry's form (written into a scratch: out of this entry
     * is still a sort key of the run) */
    run_ent *first = NULL;
    char tmp[1024];
    for (size_t k = 0; k < m; k++) {
        if (k == 0 || strcmp(e[k].id, e[k - 1].id) != 0) {
            first = &e[k];
            const char *sk = first->same_long ? first->shown : first->ls;
            size_t lk = first->same_long ? strlen(first->shown) : first->ll;
            elide_keeping(sk, lk, first->p, width, tmp, sizeof tmp < cap ? sizeof tmp : cap);
        }
        snprintf(out + ix[e[k].pos].i * cap, cap, "%s", tmp);
    }
}

/* Step 2 for the run ix[a..b) of equal short forms, in input order: the first entry of each
 * further distinct name gets a suffix "#2", "#3"... (the run's first name keeps its form) and the
 * later entries of a name copy its first entry's form (e and first_of: scratch of b-a each). */
static void number_run(const char *const *names, name_ix *ix, size_t a, size_t b, size_t width,
                       char *out, size_t cap, run_ent *e, size_t *first_of)
{
    size_t m = b - a;
    for (size_t k = 0; k < m; k++) {
        size_t i = ix[a + k].i;
        e[k] = (run_ent){.id = names[i] ? names[i] : "", .pos = a + k};
    }
    gp__msort(e, m, sizeof *e, cmp_by_id); /* by name, then by place: a name's first entry first */
    for (size_t k = 0; k < m; k++) {
        bool first = k == 0 || strcmp(e[k].id, e[k - 1].id) != 0;
        e[k].p = first ? e[k].pos : e[k - 1].p; /* p: the place of the name's first entry */
    }
    for (size_t k = 0; k < m; k++)
        first_of[e[k].pos - a] = e[k].p;
    int num = 1;
    for (size_t k = a + 1; k < b; k++) {
        char *dst = out + ix[k].i * cap;
        if (first_of[k - a] != k) {
            memmove(dst, out + ix[first_of[k - a]].i * cap, cap); /* same name: same short form */
            continue;
        }
        char suf[24];
        int sl = snprintf(suf, sizeof suf, "#%d", ++num);
        size_t keep = strlen(dst);
        if (keep + (size_t)sl > width)
            keep = width > (size_t)sl ? width - (size_t)sl : 0;
        if (keep + (size_t)sl + 1 > cap)
            keep = cap > (size_t)sl + 1 ? cap - (size_t)sl - 1 : 0;
        memcpy(dst + keep, suf, (size_t)sl + 1 <= cap - keep ? (size_t)sl + 1 : cap - keep);
        dst[cap - 1] = '\0';
    }
}

/* The end of the run of equal short forms that starts at ix[a]. */
static size_t run_end(const name_ix *ix, size_t a, size_t n)
{
    size_t b = a + 1;
    while (b < n && strcmp(ix[b].key, ix[a].key) == 0)
        b++;
    return b;
}

/* gp_shorten_names_unique, shown[k] being the text of names[k] (its demangled form, or itself):
 * short forms are made from shown, and names tell which entries are the same name (two names
 * that demangle alike still get different short forms). O(n log n) comparisons of names. */
static gp_status unique(const char *const *names, const char *const *shown, size_t n, size_t width,
                        char *out, size_t cap)
{
    if (width >= cap)
        width = cap - 1;
    name_ix *ix = malloc(n * sizeof *ix);
    run_ent *e = malloc(n * sizeof *e);
    run_ent_ptr *u = malloc(n * sizeof *u);
    size_t *first_of = malloc(n * sizeof *first_of);
    gp_status st = GP_ENOMEM;
    if (!ix || !e || !u || !first_of)
        goto done;
    for (size_t k = 0; k < n; k++)
        shorten(shown[k] ? shown[k] : "", width, out + k * cap, cap); /* already demangled */
    /* 1. Runs of equal short forms holding different names: shown from their long forms. */
    if ((st = group_by_short(ix, n, out, cap)) != GP_OK)
        goto done;
    for (size_t a = 0, b; a < n; a = b) {
        b = run_end(ix, a, n);
        if (b - a > 1)
            distinguish_run(names, shown, ix, a, b, width, out, cap, e, u);
    }
    /* 2. Whatever still collides gets a stable suffix in input order. */
    if ((st = group_by_short(ix, n, out, cap)) != GP_OK)
        goto done;
    for (size_t a = 0, b; a < n; a = b) {
        b = run_end(ix, a, n);
        if (b - a > 1)
            number_run(names, ix, a, b, width, out, cap, e, first_of);
    }
    st = GP_OK;
done:
    free(ix);
    free(e);
    free(u);
    free(first_of);
    return st;
}

/* ---- normalised names (gpuprof diff's matching) ------------------------------------------ */

/* Template arguments become "<...>", a trailing instance number "N" (gpuprof/diff.h). */
void gp_diff_normalize_name(const char *name, uint32_t flags, char *out, size_t cap)
{
    if (cap == 0)
        return;
    size_t o = 0, n = strlen(name);
    for (size_t i = 0; i < n && o + 1 < cap;) {
        if ((flags & GP_DIFF_NORM_TEMPLATES) && name[i] == '<') {
            /* Find the matching '>'; an unbalanced '<' (operator<) is copied as is. */
            size_t depth = 0, j = i;
            for (; j < n; j++) {
                if (name[j] == '<')
                    depth++;
                else if (name[j] == '>' && --depth == 0)
                    break;
            }
            if (j < n) {
                const char *rep = "<...>";
                for (size_t k = 0; rep[k] && o + 1 < cap; k++)
                    out[o++] = rep[k];
                i = j + 1;
                continue;
            }
        }
        out[o++] = name[i++];
    }
    out[o] = '\0';
    if ((flags & GP_DIFF_NORM_ARGS) && o > 1 && out[o - 1] == ')') {
        /* The balanced "(...)" that ends the name, when something precedes it. */
        size_t depth = 0, j = o;
        while (j-- > 0) {
            if (out[j] == ')')
                depth++;
            else if (out[j] == '(' && --depth == 0)
                break;
        }
        if (j != (size_t)-1 && j > 0 && j + 5 <= o) {
            memcpy(out + j, "(...)", 5);
            o = j + 5;
            out[o] = '\0';
        }
    }
    if (flags & GP_DIFF_NORM_NUMBERS) {
        size_t e = o;
        while (e > 0 && out[e - 1] >= '0' && out[e - 1] <= '9')
            e--;
        if (e < o && e > 0 && (out[e - 1] == '_' || out[e - 1] == '#')) {
            out[e] = 'N';
            out[e + 1] = '\0';
        }
    }
}

gp_status gp_shorten_names_unique(const char *const *names, size_t n, size_t width, char *out,
                                  size_t cap)
{
    if (n == 0)
        return GP_OK;
    if (cap == 0)
        return GP_EINVAL;
    size_t n_mangled = 0;
    for (size_t k = 0; k < n; k++)
        n_mangled += gp__is_mangled(names[k]);
    if (n_mangled == 0)
        return unique(names, names, n, width, out, cap);
    /* Short and long forms are made from the demangled text; identity stays the name's. */
    char **dem = calloc(n, sizeof *dem);
    const char **use = malloc(n * sizeof *use);
    gp_status st = GP_ENOMEM;
    if (dem && use) {
        for (size_t k = 0; k < n; k++) {
            dem[k] = gp__demangle(names[k]);
            use[k] = dem[k] ? dem[k] : names[k];
        }
        st = unique(names, use, n, width, out, cap);
        for (size_t k = 0; k < n; k++)
            free(dem[k]);
    }
    free(dem);
    free(use);
    return st;
}
