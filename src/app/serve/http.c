/* See http.h. */
#include "app/serve/http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

enum MHD_Result gp__http_reply(struct MHD_Connection *c, unsigned code, const char *type,
                               char *body, size_t len, bool owned)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(
        len, body, owned ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
    if (!r) {
        if (owned)
            free(body);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    enum MHD_Result ret = MHD_queue_response(c, code, r);
    MHD_destroy_response(r);
    return ret;
}

enum MHD_Result gp__http_text(struct MHD_Connection *c, unsigned code, const char *text)
{
    return gp__http_reply(c, code, "text/plain; charset=utf-8", (char *)text, strlen(text), false);
}

struct MHD_Daemon *gp__http_start(const struct sockaddr_in *sa, MHD_AccessHandlerCallback handler,
                                  void *cls)
{
    return MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL_LINUX_ONLY,
                            ntohs(sa->sin_port), NULL, NULL, handler, cls, MHD_OPTION_SOCK_ADDR,
                            (const struct sockaddr *)sa, MHD_OPTION_CONNECTION_LIMIT, (unsigned)256,
                            MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)30, MHD_OPTION_END);
}

uint16_t gp__http_port(struct MHD_Daemon *d, const struct sockaddr_in *sa)
{
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    return info ? info->port : ntohs(sa->sin_port);
}
