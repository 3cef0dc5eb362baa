/* Shared by the serve module's servers (exporter.c, profiles.c): address parsing, replies over
 * libmicrohttpd, the gate in front of it (gate.c) and the parsing of what a client sends
 * (http_parse.c). docs/internals/serve.md describes how they fit. */
#ifndef GP_SERVE_HTTP_H
#define GP_SERVE_HTTP_H

#include <microhttpd.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "gpuprof/core.h"

/* Parses "HOST:PORT" (HOST an IPv4 address or "localhost"; PORT 0..65535) into *sa. GP_EINVAL
 * with err naming the option. */
gp_status gp__http_parse_listen(const char *listen, struct sockaddr_in *sa, gp_error *err);

/* ---- what a client sends (http_parse.c; pure functions, fuzzed by fuzz/fuzz_http.c) ---------- */

typedef enum gp__head_verdict {
    GP__HEAD_MORE = 0,  /* valid so far; the head is not whole yet */
    GP__HEAD_COMPLETE,  /* a whole request head (request line and headers up to an empty line) */
    GP__HEAD_BAD,       /* cannot be HTTP/1.x: answer 400 now */
    GP__HEAD_TOO_LARGE, /* no end within cap bytes: 431 */
} gp__head_verdict;

/* Looks at the first n bytes a client sent (n <= cap, the most the gate reads of a head): the
 * request line must be METHOD SP TARGET SP HTTP/d.d, the target visible ASCII without %00, the
 * head free of NUL bytes. A verdict as soon as the bytes decide it; *why says what is wrong. */
gp__head_verdict gp__http_head_check(const char *buf, size_t n, size_t cap, const char **why);

enum { GP__HTTP_MAX_PARAMS = 8 };

typedef struct gp__http_param {
    char key[64];
    char value[512];
} gp__http_param;

/* A request target, decoded: the path (%XX undone; never holds NUL or control bytes) and the
 * query parameters ('+' is a space). */
typedef struct gp__http_target {
    char path[1024];
    gp__http_param params[GP__HTTP_MAX_PARAMS];
    size_t n_params;
} gp__http_target;

/* Decodes raw[0..len) ("/a/b%20c?k=v&x"; a '#' fragment is ignored). GP_EINVAL with *why for a
 * target that does not start with '/', a bad or NUL escape, a control byte, a path or value too
 * long, more than GP__HTTP_MAX_PARAMS parameters. */
gp_status gp__http_parse_target(const char *raw, size_t len, gp__http_target *t, const char **why);
/* The value of query parameter key (the first one), or NULL. */
const char *gp__http_param_get(const gp__http_target *t, const char *key);

/* ---- replies ------------------------------------------------------------------------------ */

/* Error replies (4xx, 5xx) of this process never show prefix: each "PREFIX/" in their body is
 * cut, so a served folder's absolute path reads as the names under it (issue 38: 422 messages
 * showed it). Up to 16 prefixes (listing.c adds the served folder, as given and resolved); call
 * before the server starts. */
void gp__http_hide_prefix(const char *prefix);

/* A 200-style reply of body (len bytes, not copied) that stays valid until release(cls) is called,
 * once, when the reply is done with it (also when it cannot be queued). For a shared immutable
 * body (profiles.c's listing). Never for an error reply (no served path is cut out of it). */
enum MHD_Result gp__http_reply_shared(struct MHD_Connection *c, unsigned code, const char *type,
                                      const char *body, size_t len, void (*release)(void *cls),
                                      void *cls);
/* Queues a reply with a body of len bytes (freed by the library when owned). Every reply closes
 * its connection (one request per connection: the gate sees every request head). */
enum MHD_Result gp__http_reply(struct MHD_Connection *c, unsigned code, const char *type,
                               char *body, size_t len, bool owned);
/* A static text reply ("not found\n"...). */
enum MHD_Result gp__http_text(struct MHD_Connection *c, unsigned code, const char *text);
/* An error as JSON: {"status": code, "error": reason phrase, "message": message}. */
enum MHD_Result gp__http_json_error(struct MHD_Connection *c, unsigned code, const char *message);
/* A reply whose body is the whole of the open file fp (a temporary file the body was written to:
 * the body is sent from the file, not held in memory). fp is closed in every case. */
enum MHD_Result gp__http_reply_file(struct MHD_Connection *c, unsigned code, const char *type,
                                    FILE *fp);

/* ---- the server ----------------------------------------------------------------------------- */

/* What one server holds at most and how long a client may take (gate.c). */
typedef struct gp__http_limits {
    unsigned pending;         /* connections whose request head is not whole yet (the gate) */
    unsigned pending_per_ip;  /* of those, from one address: the oldest is dropped beyond it */
    unsigned active;          /* requests being answered at once (libmicrohttpd's limit) */
    unsigned active_per_ip;   /* of those, from one address: beyond it a new one gets 503 */
    unsigned head_timeout_ms; /* whole-head deadline from accept(): 408 and closed after it */
    unsigned idle_timeout_s;  /* libmicrohttpd: a reply not read for this long is dropped */
    /* 0: a thread per request (no request waits behind another: for handlers that may take
     * long); N: libmicrohttpd's pool of N threads (for handlers that answer at once) */
    unsigned pool;
} gp__http_limits;

/* The defaults: 512 pending (32 per address), 64 active (16 per address), 10 s for a head, 30 s
 * idle, a thread per request. */
void gp__http_limits_init(gp__http_limits *l);

typedef struct gp__http_server gp__http_server;

/* What a server answers: handler(cls, c, method, target) for every request whose head passed the
 * gate; target is decoded (a bad one never reaches the handler: 400). */
typedef enum MHD_Result (*gp__http_handler)(void *cls, struct MHD_Connection *c, const char *method,
                                            const gp__http_target *target);

/* Binds sa and serves on a gate thread (accepting connections and reading each request head up
 * to its deadline) and libmicrohttpd (a thread per request handed over, so a long answer never
 * holds another, or a pool: lim->pool). lim NULL: the defaults. NULL with errno set when it cannot
 * bind or start. */
gp__http_server *gp__http_start(const struct sockaddr_in *sa, const gp__http_limits *lim,
                                gp__http_handler handler, void *cls);
/* The TCP port bound (port 0 asks for any free one). */
uint16_t gp__http_port(const gp__http_server *s);
/* Stops accepting, closes the pending connections and stops libmicrohttpd (which waits for the
 * requests being answered). NULL is ignored. */
void gp__http_stop(gp__http_server *s);

#endif
