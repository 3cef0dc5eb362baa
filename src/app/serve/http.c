/* See http.h: listen addresses and replies. */
#include "app/serve/http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "render/serve_pages.h"

gp_status gp__http_parse_listen(const char *listen, struct sockaddr_in *sa, gp_error *err)
{
    memset(sa, 0, sizeof *sa);
    sa->sin_family = AF_INET;
    const char *colon = strrchr(listen, ':');
    if (!colon || colon == listen || !colon[1])
        return gp_error_set(err, GP_EINVAL, "--listen '%s': expected HOST:PORT", listen);
    char host[64];
    size_t hl = (size_t)(colon - listen);
    if (hl >= sizeof host)
        return gp_error_set(err, GP_EINVAL, "--listen '%s': host too long", listen);
    memcpy(host, listen, hl);
    host[hl] = 0;
    if (strcmp(host, "localhost") == 0)
        snprintf(host, sizeof host, "127.0.0.1");
    if (inet_pton(AF_INET, host, &sa->sin_addr) != 1)
        return gp_error_set(err, GP_EINVAL,
                            "--listen '%s': host must be an IPv4 address or localhost", listen);
    char *end;
    errno = 0;
    long port = strtol(colon + 1, &end, 10);
    if (errno || *end || port < 0 || port > 65535)
        return gp_error_set(err, GP_EINVAL, "--listen '%s': bad port", listen);
    sa->sin_port = htons((uint16_t)port);
    return GP_OK;
}

/* Adds the headers every reply carries and queues it. */
static enum MHD_Result queue(struct MHD_Connection *c, unsigned code, const char *type,
                             struct MHD_Response *r)
{
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
    if (code == MHD_HTTP_SERVICE_UNAVAILABLE)
        MHD_add_response_header(r, MHD_HTTP_HEADER_RETRY_AFTER, "2");
    enum MHD_Result ret = MHD_queue_response(c, code, r);
    MHD_destroy_response(r);
    return ret;
}

#define MAX_HIDDEN 16
static char *hidden[MAX_HIDDEN]; /* each "PREFIX/", set before any server thread reads it */
static _Atomic size_t n_hidden;

void gp__http_hide_prefix(const char *prefix)
{
    size_t n = n_hidden, len = strlen(prefix);
    while (len > 1 && prefix[len - 1] == '/')
        len--;
    if (n >= MAX_HIDDEN || len == 0 || (len == 1 && (prefix[0] == '/' || prefix[0] == '.')))
        return; /* "/" or "." would cut inside other paths */
    for (size_t i = 0; i < n; i++)
        if (strncmp(hidden[i], prefix, len) == 0 && hidden[i][len] == '/' && !hidden[i][len + 1])
            return;
    char *h = malloc(len + 2);
    if (!h)
        return;
    memcpy(h, prefix, len);
    memcpy(h + len, "/", 2);
    hidden[n] = h;
    n_hidden = n + 1;
}

/* body[0..*len) without the hidden prefixes, in place (it only shrinks). */
static void cut_hidden(char *body, size_t *len)
{
    size_t n = n_hidden;
    for (size_t k = 0; k < n; k++) {
        size_t pl = strlen(hidden[k]), o = 0;
        for (size_t i = 0; i < *len;) {
            if (*len - i >= pl && memcmp(body + i, hidden[k], pl) == 0) {
                i += pl;
                continue;
            }
            body[o++] = body[i++];
        }
        *len = o;
    }
}

enum MHD_Result gp__http_reply(struct MHD_Connection *c, unsigned code, const char *type,
                               char *body, size_t len, bool owned)
{
    if (code >= 400 && len > 0 && n_hidden > 0) { /* an error: no served folder's path in it */
        char *copy = owned ? body : malloc(len);
        if (!copy)
            return MHD_NO;
        if (!owned)
            memcpy(copy, body, len);
        cut_hidden(copy, &len);
        body = copy;
        owned = true;
    }
    struct MHD_Response *r = MHD_create_response_from_buffer(
        len, body, owned ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
    if (!r) {
        if (owned)
            free(body);
        return MHD_NO;
    }
    return queue(c, code, type, r);
}

enum MHD_Result gp__http_reply_shared(struct MHD_Connection *c, unsigned code, const char *type,
                                      const char *body, size_t len, void (*release)(void *cls),
                                      void *cls)
{
    struct MHD_Response *r =
        MHD_create_response_from_buffer_with_free_callback_cls(len, (void *)body, release, cls);
    if (!r) {
        release(cls);
        return MHD_NO;
    }
    return queue(c, code, type, r);
}

enum MHD_Result gp__http_text(struct MHD_Connection *c, unsigned code, const char *text)
{
    return gp__http_reply(c, code, "text/plain; charset=utf-8", (char *)text, strlen(text), false);
}

enum MHD_Result gp__http_json_error(struct MHD_Connection *c, unsigned code, const char *message)
{
    char *body = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&body, &len);
    const char *reason = MHD_get_reason_phrase_for(code);
    gp_status st =
        fp ? gp__serve_error_json(fp, code, reason ? reason : "error", message) : GP_ENOMEM;
    if (fp && fclose(fp) != 0)
        st = GP_EIO;
    if (st != GP_OK) {
        free(body);
        return gp__http_text(c, code, message);
    }
    return gp__http_reply(c, code, "application/json", body, len, true);
}

enum MHD_Result gp__http_reply_file(struct MHD_Connection *c, unsigned code, const char *type,
                                    FILE *fp)
{
    int fd = -1;
    struct stat st;
    if (fflush(fp) == 0 && !ferror(fp) && fstat(fileno(fp), &st) == 0)
        fd = dup(fileno(fp));
    fclose(fp);
    if (fd < 0)
        return gp__http_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "could not write the reply\n");
    struct MHD_Response *r = MHD_create_response_from_fd_at_offset64((uint64_t)st.st_size, fd, 0);
    if (!r) {
        close(fd);
        return MHD_NO;
    }
    return queue(c, code, type, r);
}
