/* Shared by the serve module's servers (exporter.c, profiles.c): address parsing and replies over
 * libmicrohttpd. */
#ifndef GP_SERVE_HTTP_H
#define GP_SERVE_HTTP_H

#include <microhttpd.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>

#include "gpuprof/core.h"

/* Parses "HOST:PORT" (HOST an IPv4 address or "localhost"; PORT 0..65535) into *sa. GP_EINVAL
 * with err naming the option. */
gp_status gp__http_parse_listen(const char *listen, struct sockaddr_in *sa, gp_error *err);
/* Queues a reply with a body of len bytes (freed by the library when owned). */
enum MHD_Result gp__http_reply(struct MHD_Connection *c, unsigned code, const char *type,
                               char *body, size_t len, bool owned);
/* A static text reply ("not found\n"...). */
enum MHD_Result gp__http_text(struct MHD_Connection *c, unsigned code, const char *text);
/* Starts a daemon on its own polling thread bound to sa, answering with handler(cls, ...). NULL
 * with errno set when it cannot. */
struct MHD_Daemon *gp__http_start(const struct sockaddr_in *sa, MHD_AccessHandlerCallback handler,
                                  void *cls);
/* The TCP port a daemon bound (port 0 asks for any free one). */
uint16_t gp__http_port(struct MHD_Daemon *d, const struct sockaddr_in *sa);

#endif
