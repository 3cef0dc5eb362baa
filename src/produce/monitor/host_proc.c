/* Host figures of GPU processes from /proc (gp_host_process_read, gp_monitor_process_rows): the
 * user, command line, CPU% and RSS that NVML does not know. */
#include <math.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/util.h"
#include "gpuprof/monitor.h"

#define HP_SLOTS 1024

typedef struct hp_slot {
    uint32_t pid;        /* 0: free */
    uint64_t start;      /* start time in ticks: a reused pid is another process */
    uint64_t ticks;      /* utime + stime at the last read */
    gp_ns at;            /* when it was read */
    uint64_t last_touch; /* for replacement: the oldest-touched slot goes first */
    bool named;          /* user and command below were read (once per process) */
    char user[32];
    char command[256];
} hp_slot;

struct gp_host_procs {
    hp_slot slot[HP_SLOTS];
    uint64_t touch;
};

gp_status gp_host_procs_create(gp_host_procs **out)
{
    *out = calloc(1, sizeof **out);
    return *out ? GP_OK : GP_ENOMEM;
}

void gp_host_procs_free(gp_host_procs *hp)
{
    free(hp);
}

static const char *proc_root(void)
{
    const char *r = getenv("GP_PROC_ROOT");
    return r && r[0] ? r : "/proc";
}

/* Reads up to cap-1 bytes of root/pid/name (pid 0: root/name) into buf; the length, -1 when
 * unreadable. */
static long read_small(uint32_t pid, const char *name, char *buf, size_t cap)
{
    char path[512];
    if (pid)
        snprintf(path, sizeof path, "%s/%u/%s", proc_root(), pid, name);
    else
        snprintf(path, sizeof path, "%s/%s", proc_root(), name);
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return -1;
    size_t n = fread(buf, 1, cap - 1, fp);
    fclose(fp);
    buf[n] = 0;
    return (long)n;
}

/* The owner from the Uid: line of status. */
static void read_user(uint32_t pid, gp_host_process *out)
{
    char buf[4096];
    if (read_small(pid, "status", buf, sizeof buf) < 0)
        return;
    const char *u = strstr(buf, "\nUid:");
    unsigned long uid;
    if (!u || sscanf(u + 5, "%lu", &uid) != 1)
        return;
    struct passwd pw, *res = NULL;
    char pwbuf[1024];
    if (getpwuid_r((uid_t)uid, &pw, pwbuf, sizeof pwbuf, &res) == 0 && res)
        snprintf(out->user, sizeof out->user, "%s", res->pw_name);
    else
        snprintf(out->user, sizeof out->user, "%lu", uid);
}

static void read_command(uint32_t pid, gp_host_process *out)
{
    char buf[sizeof out->command];
    long n = read_small(pid, "cmdline", buf, sizeof buf);
    if (n <= 0)
        return;
    while (n > 0 && buf[n - 1] == 0)
        n--;
    for (long i = 0; i < n; i++)
        buf[i] = (buf[i] == 0 || buf[i] == '\n' || buf[i] == '\t') ? ' ' : buf[i];
    buf[n] = 0;
    snprintf(out->command, sizeof out->command, "%s", buf);
}

static hp_slot *find_slot(gp_host_procs *hp, uint32_t pid, uint64_t start)
{
    hp_slot *oldest = &hp->slot[0];
    for (size_t i = 0; i < HP_SLOTS; i++) {
        hp_slot *s = &hp->slot[i];
        if (s->pid == pid && s->start == start)
            return s;
        if (s->last_touch < oldest->last_touch)
            oldest = s;
    }
    *oldest = (hp_slot){.pid = pid, .start = start};
    return oldest;
}

/* CPU% and RSS from stat: utime (14), stime (15), starttime (22), rss pages (24). The process'
 * slot in hp (NULL without hp or when stat cannot be read). */
static hp_slot *read_stat(gp_host_procs *hp, uint32_t pid, gp_ns now, gp_host_process *out)
{
    char buf[2048];
    if (read_small(pid, "stat", buf, sizeof buf) < 0)
        return NULL;
    const char *p = strrchr(buf, ')');
    unsigned long long utime, stime, start;
    long long rss;
    if (!p || sscanf(p + 2,
                     "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %*d %*d %*d %*d %*d "
                     "%*d %llu %*u %lld",
                     &utime, &stime, &start, &rss) != 4)
        return NULL;
    long page = sysconf(_SC_PAGESIZE), hz = sysconf(_SC_CLK_TCK);
    out->rss_bytes = rss * (page > 0 ? page : 4096);
    if (hz <= 0)
        return NULL;
    uint64_t ticks = utime + stime;
    hp_slot *s = hp ? find_slot(hp, pid, start) : NULL;
    if (s && s->at && now > s->at && ticks >= s->ticks) {
        out->cpu_percent = 100.0 * (double)(ticks - s->ticks) / (double)hz / ((now - s->at) / 1e9);
    } else {
        char up[128];
        double uptime;
        /* the age in whole ticks at least: a process younger than one tick (uptime and the
         * start time are both in ticks) would otherwise have no CPU% at all */
        if (read_small(0, "uptime", up, sizeof up) > 0 && sscanf(up, "%lf", &uptime) == 1 &&
            uptime >= (double)start / (double)hz) {
            double age = GP_MAX(uptime - (double)start / (double)hz, 1.0 / (double)hz);
            out->cpu_percent = 100.0 * (double)ticks / (double)hz / age;
        }
    }
    if (s) {
        s->ticks = ticks;
        s->at = now;
        s->last_touch = ++hp->touch;
    }
    return s;
}

void gp_host_process_read(gp_host_procs *hp, uint32_t pid, gp_ns now, gp_host_process *out)
{
    *out = (gp_host_process){.cpu_percent = NAN, .rss_bytes = -1};
    if (pid == 0)
        return;
    hp_slot *s = read_stat(hp, pid, now, out);
    if (s && s->named) { /* the same process as before (pid and start time): names kept */
        memcpy(out->user, s->user, sizeof out->user);
        memcpy(out->command, s->command, sizeof out->command);
        return;
    }
    read_user(pid, out);
    read_command(pid, out);
    if (s && out->command[0]) {
        memcpy(s->user, out->user, sizeof s->user);
        memcpy(s->command, out->command, sizeof s->command);
        s->named = true;
    }
}

gp_status gp_monitor_process_rows(gp_monitor *mon, gp_host_procs *hp, gp_process_row *out,
                                  size_t max, size_t *n)
{
    *n = 0;
    gp_gpu_process buf[256];
    gp_ns now = gp_monitor_now();
    for (size_t g = 0; g < gp_monitor_device_count(mon) && *n < max; g++) {
        size_t k = 0;
        gp_status st = gp_monitor_processes(mon, g, buf, GP_ARRAY_LEN(buf), &k);
        if (st != GP_OK)
            return st;
        for (size_t i = 0; i < k && *n < max; i++) {
            gp_process_row *r = &out[(*n)++];
            r->gpu = (uint32_t)g;
            r->p = buf[i];
            if (hp)
                gp_host_process_read(hp, buf[i].pid, now, &r->host);
            else
                r->host = (gp_host_process){.cpu_percent = NAN, .rss_bytes = -1};
        }
    }
    return GP_OK;
}
