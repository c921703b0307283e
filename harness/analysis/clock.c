/* The host's monotonic clock (cuproof/clock.h). */
#define _POSIX_C_SOURCE 200809L
#include <cuproof/clock.h>

#include <time.h>

double cp_now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}
