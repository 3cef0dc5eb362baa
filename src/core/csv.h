/* CSV output helpers (RFC 4180). */
#ifndef GP_CORE_CSV_H
#define GP_CORE_CSV_H

#include <stdio.h>

/* Writes s as one quoted CSV field: in double quotes, inner quotes doubled. NULL writes "". */
static inline void gp__csv_field(FILE *fp, const char *s)
{
    fputc('"', fp);
    for (; s && *s; s++) {
        if (*s == '"')
            fputc('"', fp);
        fputc(*s, fp);
    }
    fputc('"', fp);
}

#endif
