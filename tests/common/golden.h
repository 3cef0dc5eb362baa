/* Golden-file comparison for tests (header-only; include after <cmocka.h>). A test renders into
 * memory and calls gp_test_golden("module/golden/name", text, len): the text must equal the file
 * $GP_SOURCE_DIR/tests/<rel>; with GP_UPDATE_GOLDEN set the file is written first (then read the
 * diff). Skips without GP_SOURCE_DIR. */
#ifndef GP_TESTS_GOLDEN_H
#define GP_TESTS_GOLDEN_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The whole file at path (malloc'd, NUL-terminated) and its length, or NULL. */
static inline char *gp_test_read_file(const char *path, size_t *len)
{
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return NULL;
    char *buf = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        if (n + 4096 + 1 > cap) {
            cap = cap ? cap * 2 : 8192;
            char *p = realloc(buf, cap);
            if (!p)
                break;
            buf = p;
        }
        size_t got = fread(buf + n, 1, cap - n - 1, fp);
        n += got;
        if (got == 0)
            break;
    }
    fclose(fp);
    if (buf)
        buf[n] = '\0';
    *len = n;
    return buf;
}

static inline void gp_test_golden(const char *rel, const char *got, size_t len)
{
    const char *src = getenv("GP_SOURCE_DIR");
    if (!src)
        skip();
    char path[4096];
    snprintf(path, sizeof path, "%s/tests/%s", src, rel);
    if (getenv("GP_UPDATE_GOLDEN")) {
        FILE *out = fopen(path, "wb");
        assert_non_null(out);
        assert_int_equal(fwrite(got, 1, len, out), len);
        fclose(out);
    }
    size_t glen = 0;
    char *want = gp_test_read_file(path, &glen);
    if (!want)
        fail_msg("missing golden file %s (run with GP_UPDATE_GOLDEN=1)", path);
    if (glen != len || memcmp(want, got, len) != 0)
        fail_msg("%s differs from the golden file (GP_UPDATE_GOLDEN=1 to accept)", rel);
    free(want);
}

#endif
