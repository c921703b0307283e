/* The host's monotonic clock, one for every layer: the runner times runs
 * with it, exec times its post-processing, the follower its polls. */
#ifndef CUPROOF_CLOCK_H
#define CUPROOF_CLOCK_H

#include "export.h"

/* CLOCK_MONOTONIC in ms: a case reads it to show where a source stopped
 * its own clock. */
CP_API double cp_now_ms(void);

#endif
