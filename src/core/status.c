#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/util.h"
#include "gpuprof/core.h"

const char *gp_strerror(gp_status status)
{
    /* Indexed by -status, in enum order (gpuprof/core.h). */
    static const char *const names[] = {"success",
                                        "out of memory",
                                        "input/output error",
                                        "malformed input",
                                        "invalid argument",
                                        "not supported",
                                        "not found",
                                        "driver library not found",
                                        "size limit reached",
                                        "invalid state for this call",
                                        "GPU lost",
                                        "external library or tool failed",
                                        "nothing to report"};
    _Static_assert(GP_ARRAY_LEN(names) == 1 - GP_EEMPTY, "one text per gp_status");
    return status <= 0 ? GP_NAME_OF(names, -(long)status, "unknown error") : "unknown error";
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
