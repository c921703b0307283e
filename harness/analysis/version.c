/* The library's own version, from the generated header. */
#include <cuproof/version.h>

const char *cp_version(void)
{
    return CUPROOF_VERSION_STRING;
}
