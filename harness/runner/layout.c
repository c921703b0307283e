/*
 * The address-space layout of the timing processes (internal/layout.h):
 * reading it and turning randomisation off by starting this executable
 * again, as setarch -R does.
 */
#include <cuproof/internal/layout.h>

#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <unistd.h>

/* personality(0xffffffff) reads the persona without changing it. */
static int persona(void)
{
    return personality(0xffffffff);
}

const char *cp_layout_now(void)
{
    int p = persona();
    if (p == -1)
        return "";
    return (p & ADDR_NO_RANDOMIZE) ? "fixed" : "random";
}

void cp_layout_fix(char **argv)
{
    const char *keep = getenv(CP_ASLR_ENV);
    int p = persona();
    if ((keep && strcmp(keep, "1") == 0) || p == -1 || (p & ADDR_NO_RANDOMIZE))
        return;
    if (personality((unsigned long)p | ADDR_NO_RANDOMIZE) == -1)
        return;
    /* The new persona takes effect at the next exec. Only a failed exec
     * returns; the process then goes on as it is, with randomisation
     * back on so that it reports what it runs with. */
    execv("/proc/self/exe", argv);
    personality((unsigned long)p);
}
