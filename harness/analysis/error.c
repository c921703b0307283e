#include <cuproof/error.h>

#include <stdarg.h>
#include <stdio.h>

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
