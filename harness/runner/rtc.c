/*
 * Run-time compilation (cuproof/rtc.h): NVRTC compiles CUDA C to a cubin
 * for the device in use, with the first error's source line in the
 * message; the runtime's library API loads it, so that nothing links the
 * driver library; launches are named for the tracer; elementwise kernels
 * are generated from a body; and compiled programs are cached for the
 * process, keyed by everything that changes the cubin.
 */
#include <cuproof/rtc.h>
#include <cuproof/check.h>

#include <cuproof/case.h>
#include <cuproof/error.h>
#include "collect/tracer.h"

#include <ctype.h>
#include <pthread.h>
#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Copies NVRTC's log into p->log; returns 0 or CP_ENOMEM / CP_ENVRTC. */
static int take_log(nvrtcProgram prog, cp_rtc_program *p)
{
    int rc = 0;
    size_t size = 0;
    CP_NVRTC(nvrtcGetProgramLogSize(prog, &size));
    p->log = calloc(size + 1, 1);
    if (!p->log)
        return cp_failf(CP_ENOMEM, "out of memory reading the NVRTC log");
    if (size)
        CP_NVRTC(nvrtcGetProgramLog(prog, p->log));
out:
    return rc;
}

/* From NVRTC's log ("name(LINE): error: ..."), the first error's line of
 * the source, as "\n  line LINE: <text>"; "" when the log names none. */
static void source_line_of_error(const char *src, const char *name, const char *log, char *buf,
                                 size_t len)
{
    buf[0] = '\0';
    size_t nlen = strlen(name);
    for (const char *p = log; p && (p = strstr(p, name)); p += nlen) {
        const char *q = p + nlen;
        char *end = NULL;
        if (*q != '(')
            continue;
        long line = strtol(q + 1, &end, 10);
        if (line < 1 || !end || strncmp(end, "): error", 8) != 0)
            continue;
        const char *at = src;
        for (long l = 1; l < line && at; l++) {
            at = strchr(at, '\n');
            at = at ? at + 1 : NULL;
        }
        if (!at)
            return;
        size_t width = strcspn(at, "\n");
        snprintf(buf, len, "\n  line %ld: %.*s", line, (int)(width < 200 ? width : 200), at);
        return;
    }
}

int cp_rtc_compile(const char *src, const char *name, int cc_major, int cc_minor,
                   const char *const *opts, size_t nopts, cp_rtc_program *out)
{
    int rc = 0;
    nvrtcProgram prog = NULL;
    const char **all = NULL;
    char arch[48];
    memset(out, 0, sizeof *out);
    if (!src || !name || cc_major <= 0 || (nopts && !opts))
        return cp_failf(CP_EINVAL, "cp_rtc_compile: missing source, name or architecture");
    all = calloc(nopts + 1, sizeof *all);
    if (!all)
        return cp_failf(CP_ENOMEM, "out of memory compiling %s", name);
    snprintf(arch, sizeof arch, "--gpu-architecture=sm_%d%d", cc_major, cc_minor);
    all[0] = arch;
    for (size_t i = 0; i < nopts; i++)
        all[i + 1] = opts[i];
    CP_NVRTC(nvrtcCreateProgram(&prog, src, name, 0, NULL, NULL));
    double t0 = cp_now_ms();
    nvrtcResult compiled = nvrtcCompileProgram(prog, (int)nopts + 1, all);
    out->compile_ms = cp_now_ms() - t0;
    CP_TRY(take_log(prog, out));
    if (compiled != NVRTC_SUCCESS) {
        char line[256];
        source_line_of_error(src, name, out->log, line, sizeof line);
        rc = cp_failf(CP_ENVRTC, "%s: nvrtcCompileProgram failed: %s%s\n%s", name,
                      nvrtcGetErrorString(compiled), line, out->log);
        goto out;
    }
    CP_NVRTC(nvrtcGetCUBINSize(prog, &out->cubin_size));
    out->cubin = malloc(out->cubin_size ? out->cubin_size : 1);
    if (!out->cubin) {
        rc = cp_failf(CP_ENOMEM, "out of memory holding %s's cubin", name);
        goto out;
    }
    CP_NVRTC(nvrtcGetCUBIN(prog, out->cubin));
out:
    if (prog)
        nvrtcDestroyProgram(&prog);
    free(all);
    if (rc < 0) {
        free(out->cubin);
        out->cubin = NULL;
        out->cubin_size = 0;
    }
    return rc;
}

void cp_rtc_program_free(cp_rtc_program *p)
{
    free(p->log);
    free(p->cubin);
    memset(p, 0, sizeof *p);
}

int cp_rtc_load(const cp_rtc_program *p, const char *entry, cp_rtc_kernel *out)
{
    int rc = 0;
    memset(out, 0, sizeof *out);
    if (!p || !p->cubin || !entry)
        return cp_failf(CP_EINVAL, "cp_rtc_load: no compiled program or entry name");
    double t0 = cp_now_ms();
    CP_CUDA(cudaLibraryLoadData(&out->library, p->cubin, NULL, NULL, 0, NULL, NULL, 0));
    CP_CUDA(cudaLibraryGetKernel(&out->kernel, out->library, entry));
    snprintf(out->entry, sizeof out->entry, "%s", entry);
    out->load_ms = cp_now_ms() - t0;
out:
    if (rc < 0)
        cp_rtc_unload(out);
    return rc;
}

void cp_rtc_unload(cp_rtc_kernel *k)
{
    if (k->library)
        cudaLibraryUnload(k->library);
    memset(k, 0, sizeof *k);
}

int cp_rtc_launch(const cp_rtc_kernel *k, dim3 grid, dim3 block, void **args, size_t shmem,
                  cudaStream_t stream)
{
    int rc = 0;
    bool named = false;
    if (!k || !k->kernel)
        return cp_failf(CP_EINVAL, "cp_rtc_launch: no loaded kernel");
    CP_TRY(cp_tracer_push_launch_name(k->entry));
    named = true;
    CP_CUDA(cudaLaunchKernel((const void *)k->kernel, grid, block, args, shmem, stream));
    CP_CUDA(cudaGetLastError());
out:
    return cp_tracer_launch_named_end(named, rc);
}

char *cp_rtc_elementwise(const char *name, const char *params, const char *body)
{
    if (!name || !params || !body || !*name || !*body) {
        cp_failf(CP_EINVAL, "an elementwise kernel needs a name, parameters and a body");
        return NULL;
    }
    for (const char *c = name; *c; c++)
        if (!(isalnum((unsigned char)*c) || *c == '_') || isdigit((unsigned char)name[0])) {
            cp_failf(CP_EINVAL, "elementwise kernel name '%s' is not an identifier", name);
            return NULL;
        }
    static const char fmt[] =
        "extern \"C\" __global__ void %s(%s%slong long n)\n"
        "{\n"
        "    long long stride = (long long)blockDim.x * gridDim.x;\n"
        "    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;\n"
        "         i += stride) {\n"
        "        %s;\n"
        "    }\n"
        "}\n";
    const char *sep = *params ? ", " : "";
    int len = snprintf(NULL, 0, fmt, name, params, sep, body);
    char *src = malloc((size_t)len + 1);
    if (!src) {
        cp_failf(CP_ENOMEM, "out of memory generating %s", name);
        return NULL;
    }
    snprintf(src, (size_t)len + 1, fmt, name, params, sep, body);
    return src;
}

/* ---- the cache ---- */

typedef struct cache_entry {
    struct cache_entry *next;
    char *key; /* source, options and architecture, NUL-separated */
    size_t key_len;
    cp_rtc_program program;
} cache_entry;

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static cache_entry *cache;

/* The cache key: every input that changes the compiled program. */
static char *cache_key(const char *src, int cc_major, int cc_minor, const char *const *opts,
                       size_t nopts, size_t *len)
{
    char arch[32];
    int alen = snprintf(arch, sizeof arch, "sm_%d%d", cc_major, cc_minor);
    size_t total = strlen(src) + 1 + (size_t)alen + 1;
    for (size_t i = 0; i < nopts; i++)
        total += strlen(opts[i]) + 1;
    char *key = malloc(total), *p = key;
    if (!key)
        return NULL;
    memcpy(p, src, strlen(src) + 1);
    p += strlen(src) + 1;
    memcpy(p, arch, (size_t)alen + 1);
    p += alen + 1;
    for (size_t i = 0; i < nopts; i++) {
        memcpy(p, opts[i], strlen(opts[i]) + 1);
        p += strlen(opts[i]) + 1;
    }
    *len = total;
    return key;
}

int cp_rtc_compile_cached(const char *src, const char *name, int cc_major, int cc_minor,
                          const char *const *opts, size_t nopts, const cp_rtc_program **out,
                          bool *hit)
{
    int rc = 0;
    *out = NULL;
    *hit = false;
    if (!src || !name || (nopts && !opts))
        return cp_failf(CP_EINVAL, "cp_rtc_compile_cached: missing source or name");
    size_t len = 0;
    char *key = cache_key(src, cc_major, cc_minor, opts, nopts, &len);
    if (!key)
        return cp_failf(CP_ENOMEM, "out of memory caching %s", name);
    pthread_mutex_lock(&cache_lock);
    for (cache_entry *e = cache; e; e = e->next)
        if (e->key_len == len && memcmp(e->key, key, len) == 0) {
            *out = &e->program;
            *hit = true;
            goto out;
        }
    cache_entry *e = calloc(1, sizeof *e);
    if (!e) {
        rc = cp_failf(CP_ENOMEM, "out of memory caching %s", name);
        goto out;
    }
    rc = cp_rtc_compile(src, name, cc_major, cc_minor, opts, nopts, &e->program);
    if (rc < 0) {
        cp_rtc_program_free(&e->program);
        free(e);
        goto out;
    }
    e->key = key;
    e->key_len = len;
    key = NULL;
    e->next = cache;
    cache = e;
    *out = &e->program;
out:
    pthread_mutex_unlock(&cache_lock);
    free(key);
    return rc;
}

void cp_rtc_cache_clear(void)
{
    pthread_mutex_lock(&cache_lock);
    while (cache) {
        cache_entry *e = cache;
        cache = e->next;
        cp_rtc_program_free(&e->program);
        free(e->key);
        free(e);
    }
    pthread_mutex_unlock(&cache_lock);
}

int cp_check_nvrtc(int err, const char *file, int line, const char *call)
{
    if (err == NVRTC_SUCCESS)
        return 0;
    char name[32];
    snprintf(name, sizeof name, "nvrtcResult %d", err);
    return cp_fail(CP_ENVRTC, file, line, call, name, nvrtcGetErrorString((nvrtcResult)err));
}
