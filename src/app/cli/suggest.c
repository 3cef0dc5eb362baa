/* The suggestion after an unknown command ("did you mean `analyze --hta`?"): the nearest of the
 * command names and of the words users of the tools gpuprof replaces type first
 * (../shared/seeds: their commands, classes and verbs), by edit distance. */
#include <ctype.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "app/cli/cli.h"
#include "core/util.h"

/* What users type, and the gpuprof command line that does it. */
static const struct {
    const char *word, *cmd;
} aliases[] = {
    {"dashboard", "report"},
    {"html", "report"},
    {"compare", "diff"},
    {"regression", "diff --fail-on-regression"},
    {"regressions", "diff --fail-on-regression"},
    {"stats", "summary"},
    {"statistics", "summary"},
    {"bottlenecks", "summary"},
    {"kernels", "ops --by kernel"},
    {"kernel", "ops --by kernel"},
    {"operators", "ops"},
    {"optimize", "advise"},
    {"optimizer", "advise"},
    {"suggest", "advise"},
    {"suggestions", "advise"},
    {"holistic", "analyze --hta"},
    {"breakdown", "analyze --hta"},
    {"temporal", "analyze --hta"},
    {"idle", "analyze --hta"},
    {"overlap", "analyze --hta"},
    {"analysis", "analyze"},
    {"hta-analysis", "analyze --hta"},
    {"health", "monitor --health"},
    {"status", "monitor"},
    {"watch", "top"},
    {"nvidia-smi", "top"},
    {"smi", "top"},
    {"metrics", "exporter"},
    {"prometheus", "exporter"},
    {"server", "serve"},
    {"export", "convert"},
    {"chrome", "convert"},
    {"perfetto", "convert"},
    {"tlparse", "compile"},
    {"graph-breaks", "compile"},
    {"flamegraph", "flame"},
    {"flame-graph", "flame"},
    {"tensorboard", "timeline"},
    {"cupti", "trace"},
    {"nsys", "trace"},
    {"run", "profile"},
    {"record", "profile"},
    {"torch", "profile"},
    {"mem", "memory"},
    {"peak", "memory"},
    {"leak", "monitor"},
};

/* Optimal string alignment distance (Levenshtein with adjacent transpositions), case-folded,
 * capped at 32 bytes of each word (longer words are not close to any command). */
static size_t distance(const char *a, const char *b)
{
    size_t n = GP_MIN(strlen(a), 32), m = GP_MIN(strlen(b), 32);
    size_t d[33][33];
    for (size_t i = 0; i <= n; i++)
        d[i][0] = i;
    for (size_t j = 0; j <= m; j++)
        d[0][j] = j;
    for (size_t i = 1; i <= n; i++)
        for (size_t j = 1; j <= m; j++) {
            size_t cost = tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]);
            size_t v = GP_MIN(d[i - 1][j] + 1, d[i][j - 1] + 1);
            v = GP_MIN(v, d[i - 1][j - 1] + cost);
            if (i > 1 && j > 1 &&
                tolower((unsigned char)a[i - 1]) == tolower((unsigned char)b[j - 2]) &&
                tolower((unsigned char)a[i - 2]) == tolower((unsigned char)b[j - 1]))
                v = GP_MIN(v, d[i - 2][j - 2] + 1);
            d[i][j] = v;
        }
    return d[n][m];
}

/* Keeps cand (suggesting cmd) in *best when it is closer to word than what is there. */
static void consider(const char *word, const char *cand, const char *cmd, size_t *best_d,
                     const char **best)
{
    size_t d = distance(word, cand);
    size_t wl = strlen(word), cl = strlen(cand);
    /* a prefix of at least 3 letters ("prof", "anal") counts as close */
    if (wl >= 3 && wl < cl && strncasecmp(word, cand, wl) == 0)
        d = GP_MIN(d, 1);
    if (d < *best_d) {
        *best_d = d;
        *best = cmd;
    }
}

const char *gp__cli_suggest(const char *word, const char *const *names, size_t n)
{
    size_t best_d = SIZE_MAX;
    const char *best = NULL;
    for (size_t i = 0; i < n; i++)
        consider(word, names[i], names[i], &best_d, &best);
    for (size_t i = 0; i < GP_ARRAY_LEN(aliases); i++)
        consider(word, aliases[i].word, aliases[i].cmd, &best_d, &best);
    size_t limit = strlen(word) <= 4 ? 1 : strlen(word) <= 8 ? 2 : 3;
    return best_d <= limit ? best : NULL;
}
