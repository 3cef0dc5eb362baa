/* Unit tests for outputs (issue #21): files that never clobber (src/core/atomic_file.c, items 1
 * and 10: what is at the target decides how it is written; temporary files do not outlive a signal
 * nor a killed writer), and JSON that stays valid UTF-8 (src/core/json_writer.c, item 8). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/atomic_file.h"
#include "core/json_writer.h"

static char dir[64];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/gp-test-outputs.XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* Names in dir containing ".tmp." */
static int count_tmp(void)
{
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL)
        n += strstr(e->d_name, ".tmp.") != NULL;
    if (d)
        closedir(d);
    return n;
}

static void slurp(const char *path, char *buf, size_t cap)
{
    FILE *fp = fopen(path, "rb");
    assert_non_null(fp);
    size_t n = fread(buf, 1, cap - 1, fp);
    buf[n] = '\0';
    fclose(fp);
}

/* A symbolic link is written through: its target replaced atomically, the link kept. A dangling
 * link creates its target. */
static void symlink_is_followed(void **state)
{
    (void)state;
    char target[128], link[128], buf[64];
    gp_error err = {0};
    snprintf(target, sizeof target, "%s/real.json", dir);
    snprintf(link, sizeof link, "%s/link.json", dir);
    assert_int_equal(symlink("real.json", link), 0); /* relative, dangling */
    assert_int_equal(gp__write_file_atomic(link, "one", 3, &err), GP_OK);
    struct stat st;
    assert_int_equal(lstat(link, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    slurp(target, buf, sizeof buf);
    assert_string_equal(buf, "one");
    assert_int_equal(chmod(target, 0600), 0);
    assert_int_equal(gp__write_file_atomic(link, "two", 3, &err), GP_OK);
    assert_int_equal(lstat(link, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    slurp(target, buf, sizeof buf);
    assert_string_equal(buf, "two");
    assert_int_equal(stat(target, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600); /* the replaced file keeps its mode */
    assert_int_equal(count_tmp(), 0);
    /* A loop is an error, not a hang. */
    char a[128], b[128];
    snprintf(a, sizeof a, "%s/a", dir);
    snprintf(b, sizeof b, "%s/b", dir);
    assert_int_equal(symlink("b", a), 0);
    assert_int_equal(symlink("a", b), 0);
    assert_int_equal(gp__write_file_atomic(a, "x", 1, &err), GP_EINVAL);
    assert_non_null(strstr(err.msg, "cannot follow the link"));
}

/* A FIFO is written into, never renamed over. */
static void fifo_is_written_into(void **state)
{
    (void)state;
    char fifo[128];
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        gp_error err = {0};
        _exit(gp__write_file_atomic(fifo, "through the pipe", 16, &err) == GP_OK ? 0 : 1);
    }
    char buf[64];
    slurp(fifo, buf, sizeof buf);
    int status = 0;
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    assert_string_equal(buf, "through the pipe");
    struct stat st;
    assert_int_equal(lstat(fifo, &st), 0);
    assert_true(S_ISFIFO(st.st_mode));
    assert_int_equal(count_tmp(), 0);
}

/* A character device stays a device (/dev/null written into, as root would otherwise replace it);
 * a directory is refused. */
static void device_and_directory(void **state)
{
    (void)state;
    gp_error err = {0};
    gp__afile f;
    assert_int_equal(gp__afile_open(&f, "/dev/null", &err), GP_OK);
    assert_int_equal(f.mode, GP__AFILE_DIRECT);
    fputs("discarded", f.fp);
    assert_int_equal(gp__afile_commit(&f, &err), GP_OK);
    struct stat st;
    assert_int_equal(stat("/dev/null", &st), 0);
    assert_true(S_ISCHR(st.st_mode));
    assert_int_equal(gp__afile_open(&f, dir, &err), GP_EINVAL);
    assert_non_null(strstr(err.msg, "is a directory"));
    assert_int_equal(gp__afile_open(&f, "-", &err), GP_OK);
    assert_int_equal(f.mode, GP__AFILE_STDOUT);
    assert_ptr_equal(f.fp, stdout);
    assert_int_equal(gp__afile_commit(&f, &err), GP_OK);
}

/* A temporary file nobody holds (a writer killed with -9) is removed by the next open of the same
 * target; one a live writer holds (locked) is kept; other names are never touched. */
static void stale_tmp_removed(void **state)
{
    (void)state;
    char out[128], stale[160], other[160], live[160];
    snprintf(out, sizeof out, "%s/out.json", dir);
    snprintf(stale, sizeof stale, "%s.tmp.abcd1234", out);
    snprintf(other, sizeof other, "%s.tmp.notours", out);
    snprintf(live, sizeof live, "%s.tmp.live0000", out);
    FILE *fp = fopen(stale, "w");
    fclose(fp);
    fp = fopen(other, "w");
    fclose(fp);
    int held = open(live, O_CREAT | O_WRONLY, 0600);
    assert_true(held >= 0);
    assert_int_equal(flock(held, LOCK_EX), 0);
    gp_error err = {0};
    assert_int_equal(gp__write_file_atomic(out, "x", 1, &err), GP_OK);
    assert_int_equal(access(stale, F_OK), -1);
    assert_int_equal(access(other, F_OK), 0);
    assert_int_equal(access(live, F_OK), 0);
    close(held);
    unlink(other);
    unlink(live);
    unlink(out);
}

/* On SIGTERM (and SIGINT, SIGHUP) the temporary file goes, and the process still dies of the
 * signal. */
static void signal_removes_tmp(void **state)
{
    (void)state;
    static const int sigs[] = {SIGTERM, SIGINT, SIGHUP};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        char out[128];
        snprintf(out, sizeof out, "%s/sig%zu.json", dir, i);
        pid_t child = fork();
        assert_true(child >= 0);
        if (child == 0) {
            gp__afile_cleanup_on_signals();
            gp_error err = {0};
            gp__afile f;
            if (gp__afile_open(&f, out, &err) != GP_OK)
                _exit(3);
            fputs("partial", f.fp);
            fflush(f.fp);
            raise(sigs[i]);
            _exit(4); /* not reached */
        }
        int status = 0;
        assert_int_equal(waitpid(child, &status, 0), child);
        assert_true(WIFSIGNALED(status));
        assert_int_equal(WTERMSIG(status), sigs[i]);
        assert_int_equal(count_tmp(), 0);
        assert_int_equal(access(out, F_OK), -1);
    }
}

/* Ill-formed UTF-8 becomes U+FFFD, one per maximal subpart, and is counted; well-formed text
 * (2-, 3- and 4-byte forms) passes unchanged. */
static void json_invalid_utf8_replaced(void **state)
{
    (void)state;
    static const struct {
        const char *in, *out;
        int replaced;
    } cases[] = {
        {"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
         0},
        {"a\xff"
         "b",
         "a\xef\xbf\xbd"
         "b",
         1},
        {"\xc3(", "\xef\xbf\xbd(", 1},                               /* cut 2-byte form */
        {"\xe2\x82", "\xef\xbf\xbd", 1},                             /* cut at the end */
        {"\xc0\xaf", "\xef\xbf\xbd\xef\xbf\xbd", 2},                 /* overlong '/' */
        {"\xed\xa0\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd", 3}, /* a surrogate */
        {"\xf4\x90\x80\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd",
         4},                                       /* > U+10FFFF */
        {"\xf0\x9f\x98\"", "\xef\xbf\xbd\\\"", 1}, /* cut, then an escaped quote */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint64_t before = gp__json_utf8_replaced();
        gp__buf b = {0};
        assert_int_equal(gp__json_escape(&b, cases[i].in, strlen(cases[i].in), false), GP_OK);
        assert_string_equal(b.data, cases[i].out);
        assert_int_equal(gp__json_utf8_replaced() - before, (uint64_t)cases[i].replaced);
        gp__buf_free(&b);
    }
    /* Raw JSON text inserted whole gets the same treatment. */
    gp__jw w;
    gp__jw_init(&w, NULL);
    gp__jw_arr_begin(&w);
    const char *raw = "{\"k\":\"x\xfe\"}";
    gp__jw_raw(&w, raw, strlen(raw));
    gp__jw_arr_end(&w);
    size_t len = 0;
    char *text = gp__jw_take(&w, &len);
    assert_string_equal(text, "[{\"k\":\"x\xef\xbf\xbd\"}]");
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(symlink_is_followed),  cmocka_unit_test(fifo_is_written_into),
        cmocka_unit_test(device_and_directory), cmocka_unit_test(stale_tmp_removed),
        cmocka_unit_test(signal_removes_tmp),   cmocka_unit_test(json_invalid_utf8_replaced),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
