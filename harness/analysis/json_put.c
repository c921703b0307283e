/* JSON strings written by hand (json_put.h). */
#include "analysis/json_put.h"

#include <string.h>

void cp_json_put_string(FILE *f, const char *s)
{
    s = s ? s : "";
    fputc('"', f);
    /* Runs that need no escape go in one fwrite: kernel names, hundreds
     * of bytes each, are most of a trace file. */
    for (;;) {
        size_t run = 0;
        while (s[run] && s[run] != '"' && s[run] != '\\' && (unsigned char)s[run] >= 0x20)
            run++;
        if (run)
            fwrite(s, 1, run, f);
        s += run;
        if (!*s)
            break;
        unsigned char c = (unsigned char)*s++;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else
            fprintf(f, "\\u%04x", c);
    }
    fputc('"', f);
}
