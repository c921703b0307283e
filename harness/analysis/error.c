/* Error codes, the thread's last error (error.h) and the exit statuses'
 * table (exit.h). */
#include <cuproof/error.h>
#include <cuproof/exit.h>

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Room for a compiler log's first errors as well as a call's message. */
static _Thread_local char last_error[4096];

const char *cp_strerror(int code)
{
    switch (code) {
#define CP_ERRNO_TEXT_(name, value, text) \
    case value:                           \
        return text;
        CP_ERRNO_MAP(CP_ERRNO_TEXT_)
#undef CP_ERRNO_TEXT_
    case 0:
        return "success";
    default:
        return "unknown error";
    }
}

const char *cp_err_name(int code)
{
    switch (code) {
#define CP_ERRNO_NAME_(name, value, text) \
    case value:                           \
        return "CP_" #name;
        CP_ERRNO_MAP(CP_ERRNO_NAME_)
#undef CP_ERRNO_NAME_
    case 0:
        return "CP_OK";
    default:
        return "CP_UNKNOWN";
    }
}

int cp_fail(int code, const char *file, int line, const char *call, const char *errname,
            const char *errstr)
{
    snprintf(last_error, sizeof last_error, "%s:%d: %s failed: %s: %s", file, line, call,
             errname ? errname : "?", errstr ? errstr : "?");
    return code;
}

int cp_failf(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    return code;
}

const char *cp_last_error(void)
{
    return last_error;
}

void cp_clear_last_error(void)
{
    last_error[0] = '\0';
}

/* ---- Exit statuses (exit.h) ---- */

const char *cp_exit_meaning(int status)
{
    switch (status) {
#define CP_EXIT_TEXT_(name, value, text) \
    case value:                          \
        return text;
        CP_EXIT_MAP(CP_EXIT_TEXT_)
#undef CP_EXIT_TEXT_
    default:
        return NULL;
    }
}

/* The rank of a status under "the worst wins" (exit.h says why this
 * order); higher is worse. */
static int exit_rank(int s)
{
    switch (s) {
    case CP_EXIT_OK:
        return 1;
    case CP_EXIT_SKIPPED:
        return 0;
    case CP_EXIT_FAILED:
        return 2;
    case CP_EXIT_PROGRAM:
        return 3;
    case CP_EXIT_INCONCLUSIVE:
        return 4;
    case CP_EXIT_INPUT:
        return 5;
    case CP_EXIT_TOOL:
        return 6;
    default: /* usage, and anything outside the table */
        return 7;
    }
}

int cp_exit_of_read(int code)
{
    return code == CP_ENOMEM ? CP_EXIT_TOOL : CP_EXIT_INPUT;
}

int cp_exit_worse(int a, int b)
{
    return exit_rank(a) >= exit_rank(b) ? a : b;
}

int cp_exit_of_verdicts(size_t failed, size_t undecided)
{
    return failed ? CP_EXIT_FAILED : undecided ? CP_EXIT_INCONCLUSIVE : CP_EXIT_OK;
}

/* The count of a line "(and N more errors)" that an inner list's
 * cp_errors_finish wrote; 0 for any other line. */
static int more_of(const char *s, size_t len)
{
    int n = 0, end = 0;
    char line[64];
    if (len >= sizeof line)
        return 0;
    memcpy(line, s, len);
    line[len] = '\0';
    if (sscanf(line, "(and %d more error%*[s])%n", &n, &end) == 1 && end == (int)len)
        return n;
    end = 0;
    return sscanf(line, "(and %d more error)%n", &n, &end) == 1 && end == (int)len ? n : 0;
}

void cp_errors_add(cp_errors *e, int code)
{
    if (e->n++ == 0)
        e->first = code;
    /* Line by line: a message of several errors (an inner list, finished)
     * keeps each line that fits and counts the rest with its own count of
     * those it had no room for, so that errors past the room are counted,
     * never lost with the ones that fit. */
    const char *msg = cp_last_error();
    for (const char *p = msg;;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        const char *s = p;
        while (len && *s == ' ') { /* an inner list's indentation */
            s++;
            len--;
        }
        int more = more_of(s, len);
        if (more > 0) {
            e->dropped += more;
        } else if (len || p == msg) {
            size_t room = sizeof e->text - e->used;
            int w = snprintf(e->text + e->used, room, "%s%.*s", e->used ? "\n  " : "", (int)len, s);
            if (w < 0 || (size_t)w >= room) {
                e->text[e->used] = '\0';
                e->dropped++;
            } else {
                e->used += (size_t)w;
            }
        }
        if (!nl)
            break;
        p = nl + 1;
    }
}

int cp_errors_finish(cp_errors *e)
{
    if (e->n == 0)
        return 0;
    if (e->dropped)
        return cp_failf(e->first, "%s\n  (and %d more error%s)", e->text, e->dropped,
                        e->dropped == 1 ? "" : "s");
    return cp_failf(e->first, "%s", e->text);
}
