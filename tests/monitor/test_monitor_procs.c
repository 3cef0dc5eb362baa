/* The monitor's process rows and gpuprof top's renderer, on the FAKE NVML driver
 * (tests/fakes/nvml: tests our code, not a GPU). Host figures come from a fake /proc tree
 * (tests/monitor/top/proc, GP_PROC_ROOT) whose values are worked out by hand in the comments, and
 * once from the real /proc for this test's own process. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gpuprof/serve.h"
#include "monitor/monitor_test_util.h"
#include "render/top.h"

static char proc_root[2048];

static const gp_process_row *find_row(const gp_process_row *r, size_t n, uint32_t pid)
{
    for (size_t i = 0; i < n; i++)
        if (r[i].p.pid == pid)
            return &r[i];
    return NULL;
}

static void fake_nvml_process_rows_carry_nvml_and_proc_figures(void **state)
{
    (void)state;
    snprintf(proc_root, sizeof proc_root, "%s/tests/monitor/top/proc", getenv("GP_SOURCE_DIR"));
    setenv("GP_PROC_ROOT", proc_root, 1);
    gp_monitor_config cfg;
    gp_monitor_config_init(&cfg);
    cfg.level = GP_LEVEL_DETAILED; /* per-process SM% */
    gp_monitor *m = open_scenario("top8.txt", &cfg);
    step(m, 1);
    gp_host_procs *hp = NULL;
    assert_int_equal(gp_host_procs_create(&hp), GP_OK);
    gp_process_row rows[32];
    size_t n = 0;
    assert_int_equal(gp_monitor_process_rows(m, hp, rows, 32, &n), GP_OK);
    assert_int_equal(n, 8); /* the scenario's 8 processes; GPU 7 is lost and lists none */
    for (size_t i = 1; i < n; i++)
        assert_true(rows[i - 1].gpu <= rows[i].gpu); /* GPU order */
    const gp_process_row *r = find_row(rows, n, 4242);
    assert_non_null(r);
    assert_int_equal(r->gpu, 0);
    assert_int_equal(r->p.types, GP_PROC_COMPUTE);
    assert_int_equal(r->p.mem_bytes, 42949672960LL);
    assert_int_equal(r->p.sm_util, 93);
    assert_string_equal(r->host.user, "root"); /* Uid 0 */
    assert_string_equal(r->host.command, "python train.py --epochs 10");
    /* utime 120 + stime 30 = 1.5 s of CPU; started at tick 100 = 1 s, uptime 11 s: 15 % */
    long hz = sysconf(_SC_CLK_TCK);
    assert_true(fabs(r->host.cpu_percent - 100.0 * (150.0 / hz) / (11.0 - 100.0 / hz)) < 1e-9);
    assert_int_equal(r->host.rss_bytes, 2560LL * sysconf(_SC_PAGESIZE));
    r = find_row(rows, n, 4343);
    assert_non_null(r);
    assert_int_equal(r->p.types, GP_PROC_GRAPHICS);
    assert_int_equal(r->p.sm_util, -1);           /* no per-process utilization for it: unknown */
    assert_string_equal(r->host.user, "4000000"); /* a uid without a login name */
    assert_string_equal(r->host.command, "/usr/lib/xorg/Xorg :0");
    r = find_row(rows, n, 1001); /* not in the fake /proc: every host figure unknown, never 0 */
    assert_non_null(r);
    assert_string_equal(r->host.user, "");
    assert_string_equal(r->host.command, "");
    assert_true(isnan(r->host.cpu_percent));
    assert_int_equal(r->host.rss_bytes, -1);
    /* max bounds the copy */
    assert_int_equal(gp_monitor_process_rows(m, NULL, rows, 3, &n), GP_OK);
    assert_int_equal(n, 3);
    assert_true(isnan(rows[0].host.cpu_percent)); /* hp NULL: no host figures asked */
    /* the exporter carries the per-process SM% where NVML gives it, and nothing where it does not
     */
    char *text = NULL;
    size_t len = 0;
    assert_int_equal(gp_prometheus_render(m, "h", &text, &len), GP_OK);
    assert_non_null(strstr(text, "# TYPE gpuprof_gpu_process_sm_utilization_percent gauge\n"));
    const char *l = strstr(text, "gpuprof_gpu_process_sm_utilization_percent{gpu=\"0\"");
    assert_non_null(l);
    assert_non_null(strstr(l, ",pid=\"4242\"} 93\n"));
    assert_null(strstr(text, "sm_utilization_percent{gpu=\"2\"")); /* pid 1003: none */
    assert_non_null(strstr(text, ",pid=\"1003\"} 4294967296\n"));  /* its memory is there */
    free(text);
    gp_host_procs_free(hp);
    gp_monitor_close(m);
    unsetenv("GP_PROC_ROOT");
}

static void write_file(const char *dir, const char *name, const char *text)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fputs(text, fp);
    fclose(fp);
}

static void host_cpu_percent_is_since_the_previous_read(void **state)
{
    (void)state;
    char dir[] = "/tmp/gp_top_proc_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char pdir[4096];
    snprintf(pdir, sizeof pdir, "%s/77", dir);
    assert_int_equal(mkdir(pdir, 0700), 0);
    write_file(dir, "uptime", "100.00 50.00\n");
    write_file(pdir, "status", "Uid:\t0\t0\t0\t0\n");
    write_file(pdir, "cmdline", "");
    const char *stat0 = "77 (a b) c) R 1 77 77 0 -1 0 0 0 0 0 100 100 0 0 20 0 1 0 0 1 10 0\n";
    write_file(pdir, "stat", stat0);
    setenv("GP_PROC_ROOT", dir, 1);
    gp_host_procs *hp = NULL;
    assert_int_equal(gp_host_procs_create(&hp), GP_OK);
    gp_host_process h;
    gp_host_process_read(hp, 77, 5 * SEC, &h);
    long hz = sysconf(_SC_CLK_TCK);
    /* first read: 200 ticks since the start (tick 0) over 100 s of uptime; a ")" in the name */
    assert_true(fabs(h.cpu_percent - 100.0 * (200.0 / hz) / 100.0) < 1e-9);
    assert_string_equal(h.command, ""); /* an empty cmdline (a kernel thread): unknown */
    /* 2 s later it used hz/2 more ticks (0.5 s): 25 % */
    char stat1[256];
    snprintf(stat1, sizeof stat1,
             "77 (a b) c) R 1 77 77 0 -1 0 0 0 0 0 %ld 100 0 0 20 0 1 0 0 1 10 0\n", 100 + hz / 2);
    write_file(pdir, "stat", stat1);
    gp_host_process_read(hp, 77, 7 * SEC, &h);
    assert_true(fabs(h.cpu_percent - 100.0 * ((double)(hz / 2) / hz) / 2.0) < 1e-9);
    gp_host_procs_free(hp);
    unsetenv("GP_PROC_ROOT");
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

static void host_figures_of_this_process_from_the_real_proc(void **state)
{
    (void)state;
    unsetenv("GP_PROC_ROOT");
    gp_host_process h;
    gp_host_process_read(NULL, (uint32_t)getpid(), gp_monitor_now(), &h);
    struct passwd *pw = getpwuid(getuid());
    if (pw)
        assert_string_equal(h.user, pw->pw_name);
    assert_non_null(strstr(h.command, "test_monitor_procs"));
    assert_true(h.rss_bytes > 0);
    assert_true(h.cpu_percent >= 0);
}

/* ---- the renderer's process order and filter --------------------------------------------- */

static gp_process_row mk(uint32_t gpu, uint32_t pid, const char *user, const char *cmd, double cpu,
                         int64_t mem)
{
    gp_process_row r = {.gpu = gpu};
    r.p = (gp_gpu_process){.pid = pid, .types = GP_PROC_COMPUTE, .mem_bytes = mem, .sm_util = -1};
    r.host = (gp_host_process){.cpu_percent = cpu, .rss_bytes = -1};
    snprintf(r.host.user, sizeof r.host.user, "%s", user);
    snprintf(r.host.command, sizeof r.host.command, "%s", cmd);
    return r;
}

static void top_rows_sort_and_filter(void **state)
{
    (void)state;
    gp_process_row p[4] = {mk(0, 10, "ann", "python train.py", 50, 100),
                           mk(1, 11, "bob", "Xorg", NAN, 300), mk(0, 12, "ann", "bash", 5, -1),
                           mk(1, 13, "cy", "python eval.py", 90, 200)};
    gp_top_frame f = {.procs = p, .n_procs = 4};
    gp_top_view v;
    gp_top_view_init(&v);
    size_t idx[8];
    /* default: GPU memory, largest first; unknown memory last */
    assert_int_equal(gp_top_rows(&f, &v, idx, 8), 4);
    assert_int_equal(p[idx[0]].p.pid, 11);
    assert_int_equal(p[idx[1]].p.pid, 13);
    assert_int_equal(p[idx[2]].p.pid, 10);
    assert_int_equal(p[idx[3]].p.pid, 12);
    /* CPU%, ascending: unknown still last */
    v.sort = GP_TOP_COL_CPU;
    v.ascending = true;
    assert_int_equal(gp_top_rows(&f, &v, idx, 8), 4);
    assert_int_equal(p[idx[0]].p.pid, 12);
    assert_int_equal(p[idx[2]].p.pid, 13);
    assert_int_equal(p[idx[3]].p.pid, 11);
    /* a case-blind text filter over the command and user; one GPU */
    snprintf(v.filter, sizeof v.filter, "PYTHON");
    assert_int_equal(gp_top_rows(&f, &v, idx, 8), 2);
    v.gpu = 1;
    assert_int_equal(gp_top_rows(&f, &v, idx, 8), 1);
    assert_int_equal(p[idx[0]].p.pid, 13);
    snprintf(v.filter, sizeof v.filter, "ann");
    assert_int_equal(gp_top_rows(&f, &v, idx, 8), 0);
}

static void top_small_screen_says_so_and_graph_gaps(void **state)
{
    (void)state;
    gp_top_screen scr;
    assert_int_equal(gp_top_screen_init(&scr, 30, 8), GP_OK);
    gp_top_frame f = {0};
    gp_top_view v;
    gp_top_view_init(&v);
    gp_top_draw(&scr, &f, &v);
    char *buf = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&buf, &len);
    gp_top_screen_write(&scr, fp);
    fclose(fp);
    assert_string_equal(buf, "terminal 30x8: top needs 40x10\n\n\n\n\n\n\n\n");
    free(buf);
    /* a graph: 0 % is blank, NaN a dot, 100 % full, control bytes never reach the grid */
    float v3[3] = {0, NAN, 100};
    gp_top_screen_clear(&scr);
    gp_top_graph(&scr, 0, 0, 4, 1, v3, 3);
    gp_top_put(&scr, 5, 0, -1, 0, "a\x1b[2Jb");
    fp = open_memstream(&buf, &len);
    gp_top_screen_write(&scr, fp);
    fclose(fp);
    assert_non_null(strstr(buf, "  ·█ a?[2Jb\n"));
    free(buf);
    gp_top_screen_free(&scr);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fake_nvml_process_rows_carry_nvml_and_proc_figures),
        cmocka_unit_test(host_cpu_percent_is_since_the_previous_read),
        cmocka_unit_test(host_figures_of_this_process_from_the_real_proc),
        cmocka_unit_test(top_rows_sort_and_filter),
        cmocka_unit_test(top_small_screen_says_so_and_graph_gaps),
    };
    return cmocka_run_group_tests_name("monitor_procs_fake_nvml", tests, NULL, NULL);
}
