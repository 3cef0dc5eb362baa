#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "gpuprof/core.h"

const char *gp_strerror(gp_status status)
{
    switch (status) {
    case GP_OK:
        return "success";
    case GP_ENOMEM:
        return "out of memory";
    case GP_EIO:
        return "input/output error";
    case GP_EPARSE:
        return "malformed input";
    case GP_EINVAL:
        return "invalid argument";
    case GP_ENOTSUP:
        return "not supported";
    case GP_ENOENT:
        return "not found";
    case GP_ENODRIVER:
        return "driver library not found";
    case GP_ELIMIT:
        return "size limit reached";
    case GP_ESTATE:
        return "invalid state for this call";
    case GP_EGPULOST:
        return "GPU lost";
    case GP_EEXTERNAL:
        return "external library or tool failed";
    case GP_EEMPTY:
        return "nothing to report";
    }
    return "unknown error";
}

gp_status gp_error_set(gp_error *err, gp_status status, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        err->status = status;
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return status;
}

void gp_error_note(gp_error *err, const char *fmt, ...)
{
    if (!err)
        return;
    size_t cap = sizeof err->msg, len = strlen(err->msg);
    if (len + 2 >= cap)
        return;
    if (len) {
        err->msg[len++] = ' ';
        err->msg[len] = '\0';
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg + len, cap - len, fmt, ap);
    va_end(ap);
}

int gp_status_exit_code(gp_status status)
{
    switch (status) {
    case GP_OK:
        return 0;
    case GP_EPARSE:
    case GP_EINVAL:
    case GP_ENOENT:
    case GP_EIO:
    case GP_ENODRIVER:
    case GP_EEMPTY:
        return 2;
    default:
        return 1;
    }
}
