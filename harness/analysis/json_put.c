/* JSON strings and NCCL payloads written by hand (json_put.h). */
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

void cp_json_put_nccl(FILE *f, uint64_t comm, uint64_t bytes, int32_t peer)
{
    fprintf(f, ",\"comm\":\"%016llx\",\"bytes\":%llu,\"peer\":%d", (unsigned long long)comm,
            (unsigned long long)bytes, (int)peer);
}

bool cp_json_comm_parse(const char *text, uint64_t *out)
{
    uint64_t v = 0;
    size_t n = 0;
    for (; text && text[n] && n < 17; n++) {
        char c = text[n];
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (d < 0)
            return false;
        v = v << 4 | (uint64_t)d;
    }
    if (n != 16 || text[n] || v == 0)
        return false;
    *out = v;
    return true;
}
