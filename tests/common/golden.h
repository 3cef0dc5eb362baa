/* Golden-file comparison for tests: GP_UPDATE_GOLDEN=1 rewrites the file, otherwise the output
 * must equal it byte for byte. Paths are relative to $GP_SOURCE_DIR (default "."). Needs cmocka
 * (include after <cmocka.h>). */
#ifndef GP_TESTS_GOLDEN_H
#define GP_TESTS_GOLDEN_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The whole file at path (NUL-terminated, *len bytes), or NULL. The caller frees it. */
static inline char *gp_test_slurp(const char *path, size_t *len)
{
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return NULL;
    fseek(fp, 0, SEEK_END);
    long n = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    char *buf = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (buf && fread(buf, 1, (size_t)n, fp) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(fp);
    if (buf) {
        buf[n] = '\0';
        *len = (size_t)n;
    }
    return buf;
}

/* Compares got[0..got_len) with the golden file $GP_SOURCE_DIR/rel (or rewrites it). */
static inline void gp_test_check_golden(const char *rel, const char *got, size_t got_len)
{
    const char *src = getenv("GP_SOURCE_DIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", src ? src : ".", rel);
    if (getenv("GP_UPDATE_GOLDEN")) {
        FILE *fp = fopen(path, "wb");
        assert_non_null(fp);
        assert_int_equal(fwrite(got, 1, got_len, fp), got_len);
        fclose(fp);
        return;
    }
    size_t len = 0;
    char *want = gp_test_slurp(path, &len);
    if (!want)
        fail_msg("missing golden file %s (run with GP_UPDATE_GOLDEN=1)", path);
    if (len != got_len || memcmp(want, got, len) != 0) {
        size_t i = 0;
        while (i < len && i < got_len && want[i] == got[i])
            i++;
        fail_msg("%s differs at byte %zu", path, i);
    }
    free(want);
}

#endif
