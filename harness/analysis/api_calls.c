/* Which CUDA API calls matter: the analyses' patterns and the calls
 * `cuproof exec` records (api_calls.h says why they share a file). */
#include "api_calls.h"

#include <cuproof/units.h>

#include <stdio.h>
#include <string.h>

/* The analyses' reads by name, each exactly as it was written before it
 * moved here, so that the move changed no metric. */
static const cp_api_pattern patterns[CP_API_USE_COUNT] = {
    {CP_API_COPY_CALL, "Memcpy", false, "sweep.c: cudaMemcpy*, cuMemcpy* matched with copies"},
    {CP_API_STREAM_WAIT_EVENT, "StreamWaitEvent", false,
     "sweep.c: event waits that order streams (serialized_streams)"},
    {CP_API_EVENT_RECORD, "cudaEventRecord", true,
     "agreement.c: the event record before a launch"},
};

const cp_api_pattern *cp_api_patterns(size_t *n)
{
    *n = sizeof patterns / sizeof patterns[0];
    return patterns;
}

static bool matches(const char *name, const char *text, bool prefix)
{
    return prefix ? strncmp(name, text, strlen(text)) == 0 : strstr(name, text) != NULL;
}

bool cp_api_is(const char *name, cp_api_use use)
{
    if (!name || (unsigned)use >= CP_API_USE_COUNT)
        return false;
    return matches(name, patterns[use].text, patterns[use].prefix);
}

size_t cp_api_base_name(const char *name, char *buf, size_t size)
{
    if (size == 0)
        return 0;
    snprintf(buf, size, "%s", name ? name : "");
    for (;;) {
        size_t n = strlen(buf), k = cp_api_name_len(buf);
        if (k == n && n > 5 &&
            (strcmp(buf + n - 5, "_ptds") == 0 || strcmp(buf + n - 5, "_ptsz") == 0))
            k = n - 5;
        if (k == n)
            return n;
        buf[k] = '\0';
    }
}

/* What exec records. Launches tie kernels to their calls (by correlation:
 * the timeline's flows, a kernel's launch in the views); copies are
 * matched with their calls (cuda_memcpy_async); event waits order
 * streams (serialized_streams); synchronising calls, event records,
 * memsets and allocation are where a program's host waits or stalls,
 * which its timeline must show. Everything else (device queries, stream
 * and event queries and creation, module loading, capture, attributes)
 * no analysis reads, and a launch-bound loop makes many of them. */
static const cp_api_rule rules[] = {
    {"kernel launch", "cudaLaunch", true},
    {"kernel launch", "__cudaLaunch", true},
    {"kernel launch", "cuLaunch", true},
    {"graph launch", "cudaGraphLaunch", true},
    {"graph launch", "cuGraphLaunch", true},
    {"copy", "Memcpy", false},
    {"memset", "Memset", false},
    {"synchronisation", "Synchronize", false},
    {"event wait", "WaitEvent", false},
    {"event record", "cudaEventRecord", true},
    {"event record", "cuEventRecord", true},
    {"allocation", "cudaMalloc", true},
    {"allocation", "cudaHostAlloc", true},
    {"allocation", "cudaHostRegister", true},
    {"allocation", "cuMemAlloc", true},
    {"allocation", "cu64MemAlloc", true},
    {"allocation", "cuMemHostAlloc", true},
    {"allocation", "cu64MemHostAlloc", true},
    {"allocation", "cuMemHostRegister", true},
    {"allocation", "cuMemCreate", true},
    {"free", "cudaFree", true},
    {"free", "cudaHostUnregister", true},
    {"free", "cuMemFree", true},
    {"free", "cu64MemFree", true},
    {"free", "cuMemHostUnregister", true},
    {"free", "cuMemRelease", true},
};

const cp_api_rule *cp_api_rules(size_t *n)
{
    *n = sizeof rules / sizeof rules[0];
    return rules;
}

bool cp_api_kept(const char *name)
{
    if (!name)
        return false;
    char base[160];
    cp_api_base_name(name, base, sizeof base);
    for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++)
        if (matches(base, rules[i].text, rules[i].prefix))
            return true;
    return false;
}
