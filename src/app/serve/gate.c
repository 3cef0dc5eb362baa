/* See http.h: the gate in front of libmicrohttpd. One thread accepts every connection and reads
 * (peeks at, without consuming) its request head until the head is whole, then hands the socket
 * to libmicrohttpd, which answers it on a thread of its own. So a slow client only ever holds a
 * pending socket here, never a thread or an answer slot, and the gate decides:
 *   - a head that cannot be HTTP/1.x (a garbage request line, %00 in the target): 400 at once;
 *   - no whole head within head_timeout_ms of accept(), however the bytes trickle in: 408;
 *   - a head over 16 KiB: 431;
 *   - pending connections per address and in all are capped by dropping the oldest pending
 *     one, so a client that sends its request promptly (a /healthz probe) always gets in;
 *   - requests being answered are capped in all and per address: beyond it, 503 at once.
 * Every reply closes its connection, so each request passes the gate. */
#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "app/serve/http.h"
#include "core/lock.h"
#include "core/util.h"
#include "render/serve_pages.h"

/* HELD_FACTOR: connections held (answering or sending) per answering slot, in all and per
 * address: clients that never read hold at most this many times the answering caps. */
enum { HEAD_CAP = 16384, MAX_IPS_ACTIVE = 256, HELD_FACTOR = 4 };

typedef struct pending_conn {
    int fd;
    struct sockaddr_in addr;
    int64_t since_ms;
} pending_conn;

typedef struct ip_count {
    uint32_t ip;
    unsigned n;    /* its requests being answered (the handler has not returned yet) */
    unsigned held; /* its connections libmicrohttpd holds: answering, or sending the answer */
} ip_count;

struct gp__http_server {
    struct MHD_Daemon *daemon;
    gp__http_handler handler;
    void *cls;
    gp__http_limits lim;
    int listen_fd, epoll_fd, wake_fd;
    uint16_t port;
    pthread_t thread;
    bool thread_started;
    /* the gate thread's own */
    pending_conn *pending;
    size_t n_pending;
    char head[HEAD_CAP];
    /* requests being answered, counted by libmicrohttpd's callbacks; guarded by lock (clang 14
     * cannot name a sibling member in GP_GUARDED_BY in C: the functions say GP_REQUIRES) */
    gp__mutex lock;
    unsigned n_active, n_held;
    ip_count active_ip[MAX_IPS_ACTIVE];
    size_t n_active_ip;
};

void gp__http_limits_init(gp__http_limits *l)
{
    l->pending = 512;
    l->pending_per_ip = 32;
    l->active = 64;
    l->active_per_ip = 16;
    l->head_timeout_ms = 10000;
    l->idle_timeout_s = 30;
    l->pool = 0;
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- replies written by the gate itself ---------------------------------------------------- */

/* Whether the request line in buf[0..n) names a path under /api/ (its errors are JSON). */
static bool wants_json(const char *buf, size_t n)
{
    const char *sp = memchr(buf, ' ', n);
    return sp && (size_t)(buf + n - sp) > 5 && memcmp(sp + 1, "/api/", 5) == 0;
}

/* Answers code with a one-line body (JSON when the request is for /api/) and closes fd. What the
 * client sent is read first (up to 64 KiB), so that the close is a FIN, not a reset that could
 * discard the answer. */
static void gate_reply(int fd, unsigned code, const char *reason, const char *why)
{
    char head[512];
    ssize_t got = recv(fd, head, sizeof head, MSG_PEEK | MSG_DONTWAIT);
    bool json = got > 0 && wants_json(head, (size_t)got);
    char sink[4096];
    for (int i = 0; i < 16 && recv(fd, sink, sizeof sink, MSG_DONTWAIT) > 0; i++)
        ;
    char msg[512] = "";
    if (json) {
        FILE *fp = fmemopen(msg, sizeof msg, "w");
        if (!fp || gp__serve_error_json(fp, code, reason, why) != GP_OK)
            json = false;
        if (fp)
            fclose(fp);
    }
    if (!json)
        snprintf(msg, sizeof msg, "%s: %s\n", reason, why);
    char out[1024];
    int n = snprintf(out, sizeof out,
                     "HTTP/1.1 %u %s\r\nContent-Type: %s\r\n"
                     "Content-Length: %zu\r\nConnection: close\r\n%s\r\n%s",
                     code, reason, json ? "application/json" : "text/plain; charset=utf-8",
                     strlen(msg), code == 503 ? "Retry-After: 2\r\n" : "", msg);
    if (n > 0)
        (void)!send(fd, out, (size_t)GP_MIN(n, (int)sizeof out - 1), MSG_DONTWAIT | MSG_NOSIGNAL);
    shutdown(fd, SHUT_WR);
    close(fd);
}

/* ---- active requests (libmicrohttpd's connection callbacks; any thread) ------------------- */

static ip_count *active_slot(gp__http_server *s, uint32_t ip) GP_REQUIRES(&s->lock);

static ip_count *active_slot(gp__http_server *s, uint32_t ip)
{
    for (size_t i = 0; i < s->n_active_ip; i++)
        if (s->active_ip[i].ip == ip)
            return &s->active_ip[i];
    if (s->n_active_ip == MAX_IPS_ACTIVE)
        return NULL;
    s->active_ip[s->n_active_ip] = (ip_count){ip, 0, 0};
    return &s->active_ip[s->n_active_ip++];
}

/* A connection handed to libmicrohttpd: counted as answering until its handler returns (the
 * answer is queued), and as held until libmicrohttpd closes it. A client that read its answer
 * and asks again is never refused for the one before (issue 38: the count fell only after the
 * reply was sent, so well-behaved clients at exactly the per-address cap got 503s), and clients
 * that never read their answers hold only the larger cap of held connections (issue 38: 16 of
 * them made every request, /healthz included, 503 for ~40 s). */
typedef struct active_conn {
    uint32_t ip;
    bool answered; /* no longer counted as answering */
    bool released; /* no longer counted at all */
} active_conn;

/* Adds d_answering and d_held (each -1, 0 or +1) to the counts of ip and of all. */
static void count_active(gp__http_server *s, uint32_t ip, int d_answering, int d_held)
{
    gp__mutex_lock(&s->lock);
    ip_count *slot = active_slot(s, ip);
    s->n_active = (unsigned)((int)s->n_active + d_answering);
    s->n_held = (unsigned)((int)s->n_held + d_held);
    if (slot) {
        slot->n = (unsigned)((int)slot->n + d_answering);
        slot->held = (unsigned)((int)slot->held + d_held);
        if (slot->n == 0 && slot->held == 0)
            *slot = s->active_ip[--s->n_active_ip];
    }
    gp__mutex_unlock(&s->lock);
}

/* The handler returned: the answer is queued, being sent. */
static void answered(gp__http_server *s, active_conn *a)
{
    if (a && !a->answered) {
        a->answered = true;
        count_active(s, a->ip, -1, 0);
    }
}

static void release(gp__http_server *s, active_conn *a)
{
    if (a && !a->released) {
        bool answering = !a->answered;
        a->answered = a->released = true;
        count_active(s, a->ip, answering ? -1 : 0, -1);
    }
}

static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                          enum MHD_ConnectionNotificationCode code)
{
    gp__http_server *s = cls;
    if (code != MHD_CONNECTION_NOTIFY_STARTED) {
        release(s, *socket_context);
        free(*socket_context);
        *socket_context = NULL;
        return;
    }
    active_conn *a = calloc(1, sizeof *a);
    if (!a)
        return;
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (ci && ci->client_addr && ci->client_addr->sa_family == AF_INET)
        a->ip = ((const struct sockaddr_in *)(const void *)ci->client_addr)->sin_addr.s_addr;
    *socket_context = a;
    count_active(s, a->ip, +1, +1);
}

/* Why a new request from ip cannot be answered now, or NULL. */
static const char *over_active_cap(gp__http_server *s, uint32_t ip)
{
    gp__mutex_lock(&s->lock);
    const char *why = NULL;
    if (s->n_active >= s->lim.active)
        why = "too many requests being answered; try again";
    else if (s->n_held >= s->lim.active * HELD_FACTOR)
        why = "too many answers not yet read by their clients; try again";
    else {
        for (size_t i = 0; i < s->n_active_ip && !why; i++) {
            const ip_count *c = &s->active_ip[i];
            if (c->ip == ip && c->n >= s->lim.active_per_ip)
                why = "too many requests from this address being answered; try again";
            else if (c->ip == ip && c->held >= s->lim.active_per_ip * HELD_FACTOR)
                why = "too many answers to this address not yet read; try again";
        }
    }
    gp__mutex_unlock(&s->lock);
    return why;
}

/* ---- libmicrohttpd's side: the raw target and the handler --------------------------------- */

/* The request target as the client sent it (before libmicrohttpd's decoding, which would cut a
 * name at %00): kept as the request's context until it completes. */
static void *keep_uri(void *cls, const char *uri, struct MHD_Connection *c)
{
    (void)cls;
    (void)c;
    return strdup(uri ? uri : "");
}

/* A request answered (or abandoned): its context freed, its connection no longer active (the
 * client may already be connecting again: libmicrohttpd closes the socket a moment later). */
static void request_done(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    (void)toe;
    free(*con_cls);
    *con_cls = NULL;
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    if (ci)
        release(cls, ci->socket_context);
}

static enum MHD_Result access_handler(void *cls, struct MHD_Connection *c, const char *url,
                                      const char *method, const char *version, const char *upload,
                                      size_t *upload_size, void **con_cls)
{
    gp__http_server *s = cls;
    (void)version;
    (void)upload;
    if (*upload_size) { /* a body: ignore it (the answer was given at the first call) */
        *upload_size = 0;
        return MHD_YES;
    }
    const char *raw = *con_cls ? (const char *)*con_cls : url;
    gp__http_target *t = malloc(sizeof *t);
    if (!t)
        return gp__http_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
    const char *why;
    enum MHD_Result r;
    if (gp__http_parse_target(raw, strlen(raw), t, &why) != GP_OK) {
        char msg[160];
        snprintf(msg, sizeof msg, "bad request: %s\n", why);
        r = gp__http_reply(c, MHD_HTTP_BAD_REQUEST, "text/plain; charset=utf-8", strdup(msg),
                           strlen(msg), true);
    } else {
        r = s->handler(s->cls, c, method, t);
    }
    free(t);
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    if (ci)
        answered(s, ci->socket_context);
    return r;
}

/* ---- the gate thread ---------------------------------------------------------------------- */

static void drop_pending(gp__http_server *s, size_t i, bool close_fd)
{
    epoll_ctl(s->epoll_fd, EPOLL_CTL_DEL, s->pending[i].fd, NULL);
    if (close_fd)
        close(s->pending[i].fd);
    s->pending[i] = s->pending[--s->n_pending];
}

/* The oldest pending connection (from ip only when by_ip), or -1. */
static ssize_t oldest_pending(const gp__http_server *s, bool by_ip, uint32_t ip, unsigned *count)
{
    ssize_t best = -1;
    *count = 0;
    for (size_t i = 0; i < s->n_pending; i++) {
        if (by_ip && s->pending[i].addr.sin_addr.s_addr != ip)
            continue;
        ++*count;
        if (best < 0 || s->pending[i].since_ms < s->pending[best].since_ms)
            best = (ssize_t)i;
    }
    return best;
}

static void add_pending(gp__http_server *s, int fd, const struct sockaddr_in *addr)
{
    unsigned n_ip;
    ssize_t old = oldest_pending(s, true, addr->sin_addr.s_addr, &n_ip);
    if (old >= 0 && n_ip >= s->lim.pending_per_ip)
        drop_pending(s, (size_t)old, true);
    if (s->n_pending >= s->lim.pending && (old = oldest_pending(s, false, 0, &n_ip)) >= 0)
        drop_pending(s, (size_t)old, true);
    struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP | EPOLLET, .data.fd = fd};
    if (epoll_ctl(s->epoll_fd, EPOLL_CTL_ADD, fd, &ev) != 0) {
        close(fd);
        return;
    }
    s->pending[s->n_pending++] = (pending_conn){fd, *addr, now_ms()};
}

/* Looks at what pending connection i sent so far and acts on it. */
static void examine(gp__http_server *s, size_t i, bool hangup)
{
    pending_conn p = s->pending[i];
    ssize_t n = recv(p.fd, s->head, sizeof s->head, MSG_PEEK | MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && !hangup)
        return;
    if (n <= 0) { /* closed or failed before a whole head */
        drop_pending(s, i, true);
        return;
    }
    const char *why;
    gp__head_verdict v = gp__http_head_check(s->head, (size_t)n, sizeof s->head, &why);
    if (v == GP__HEAD_MORE && !hangup)
        return;
    drop_pending(s, i, false);
    if (v == GP__HEAD_MORE) {
        close(p.fd); /* the client stopped sending: nothing will complete the head */
        return;
    }
    if (v != GP__HEAD_COMPLETE) {
        bool big = v == GP__HEAD_TOO_LARGE;
        gate_reply(p.fd, big ? 431 : 400, big ? "Request Header Fields Too Large" : "Bad Request",
                   why);
        return;
    }
    if ((why = over_active_cap(s, p.addr.sin_addr.s_addr))) {
        gate_reply(p.fd, 503, "Service Unavailable", why);
        return;
    }
    MHD_add_connection(s->daemon, p.fd, (const struct sockaddr *)&p.addr, sizeof p.addr);
}

static void accept_all(gp__http_server *s)
{
    for (;;) {
        struct sockaddr_in addr;
        socklen_t len = sizeof addr;
        int fd =
            accept4(s->listen_fd, (struct sockaddr *)&addr, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
        unsigned n;
        ssize_t old;
        if (fd < 0 && (errno == EMFILE || errno == ENFILE) &&
            (old = oldest_pending(s, false, 0, &n)) >= 0) {
            drop_pending(s, (size_t)old, true); /* out of descriptors: the oldest makes room */
            continue;
        }
        if (fd < 0)
            return;
        if (addr.sin_family != AF_INET) {
            close(fd);
            continue;
        }
        add_pending(s, fd, &addr);
    }
}

static void expire(gp__http_server *s)
{
    int64_t t = now_ms();
    for (size_t i = 0; i < s->n_pending;) {
        if (t - s->pending[i].since_ms < (int64_t)s->lim.head_timeout_ms) {
            i++;
            continue;
        }
        int fd = s->pending[i].fd;
        drop_pending(s, i, false);
        gate_reply(fd, 408, "Request Timeout", "the request head did not arrive in time");
    }
}

static void *gate_main(void *arg)
{
    gp__http_server *s = arg;
    struct epoll_event evs[64];
    for (;;) {
        int n = epoll_wait(s->epoll_fd, evs, 64, 100);
        for (int k = 0; k < n; k++) {
            int fd = evs[k].data.fd;
            if (fd == s->wake_fd)
                return NULL;
            if (fd == s->listen_fd) {
                accept_all(s);
                continue;
            }
            for (size_t i = 0; i < s->n_pending; i++)
                if (s->pending[i].fd == fd) {
                    examine(s, i, (evs[k].events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR)) != 0);
                    break;
                }
        }
        expire(s);
    }
}

/* ---- start and stop ----------------------------------------------------------------------- */

static int listen_on(const struct sockaddr_in *sa, uint16_t *port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in bound;
    socklen_t len = sizeof bound;
    if (bind(fd, (const struct sockaddr *)sa, sizeof *sa) != 0 || listen(fd, 1024) != 0 ||
        getsockname(fd, (struct sockaddr *)&bound, &len) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    *port = ntohs(bound.sin_port);
    return fd;
}

/* libmicrohttpd with a thread per connection (or a pool: lim.pool), no listening socket of its
 * own (the gate hands it the connections). The caps are the gate's (its counts fall as each
 * connection's thread ends); libmicrohttpd's own count falls only when its polling thread reaps the
 * finished threads, so its limit is only a far backstop and it has no per-address limit (at a high
 * request rate it would refuse with a reset). */
static struct MHD_Daemon *start_daemon(gp__http_server *s)
{
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_NO_LISTEN_SOCKET | MHD_USE_ITC;
    flags |= s->lim.pool ? MHD_USE_EPOLL : MHD_USE_THREAD_PER_CONNECTION | MHD_USE_POLL;
    return MHD_start_daemon(flags, 0, NULL, NULL, access_handler, s, MHD_OPTION_THREAD_POOL_SIZE,
                            s->lim.pool, MHD_OPTION_CONNECTION_LIMIT,
                            s->lim.active * (HELD_FACTOR + 1) + 64, MHD_OPTION_CONNECTION_TIMEOUT,
                            s->lim.idle_timeout_s, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
                            (size_t)HEAD_CAP * 2, MHD_OPTION_URI_LOG_CALLBACK, keep_uri, NULL,
                            MHD_OPTION_NOTIFY_COMPLETED, request_done, s,
                            MHD_OPTION_NOTIFY_CONNECTION, on_connection, s, MHD_OPTION_END);
}

gp__http_server *gp__http_start(const struct sockaddr_in *sa, const gp__http_limits *lim,
                                gp__http_handler handler, void *cls)
{
    gp__http_server *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->handler = handler;
    s->cls = cls;
    if (lim)
        s->lim = *lim;
    else
        gp__http_limits_init(&s->lim);
    gp__mutex_init(&s->lock);
    s->listen_fd = s->epoll_fd = s->wake_fd = -1;
    s->pending = calloc(s->lim.pending + 1, sizeof *s->pending);
    if (!s->pending || (s->listen_fd = listen_on(sa, &s->port)) < 0 ||
        (s->epoll_fd = epoll_create1(EPOLL_CLOEXEC)) < 0 ||
        (s->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0 || !(s->daemon = start_daemon(s)))
        goto fail;
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = s->listen_fd};
    struct epoll_event wake = {.events = EPOLLIN, .data.fd = s->wake_fd};
    if (epoll_ctl(s->epoll_fd, EPOLL_CTL_ADD, s->listen_fd, &ev) != 0 ||
        epoll_ctl(s->epoll_fd, EPOLL_CTL_ADD, s->wake_fd, &wake) != 0 ||
        pthread_create(&s->thread, NULL, gate_main, s) != 0)
        goto fail;
    s->thread_started = true;
    return s;
fail:;
    int e = errno;
    gp__http_stop(s);
    errno = e;
    return NULL;
}

uint16_t gp__http_port(const gp__http_server *s)
{
    return s->port;
}

void gp__http_stop(gp__http_server *s)
{
    if (!s)
        return;
    if (s->thread_started) {
        uint64_t one = 1;
        (void)!write(s->wake_fd, &one, sizeof one);
        pthread_join(s->thread, NULL);
    }
    while (s->n_pending)
        drop_pending(s, s->n_pending - 1, true);
    if (s->listen_fd >= 0)
        close(s->listen_fd);
    if (s->daemon)
        MHD_stop_daemon(s->daemon); /* waits for the requests being answered */
    if (s->epoll_fd >= 0)
        close(s->epoll_fd);
    if (s->wake_fd >= 0)
        close(s->wake_fd);
    free(s->pending);
    gp__mutex_destroy(&s->lock);
    free(s);
}
