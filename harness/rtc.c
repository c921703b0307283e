#include "rtc.h"

#include "case.h"
#include "error.h"

#include <ctype.h>
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
        rc = cp_failf(CP_ENVRTC, "%s: nvrtcCompileProgram failed: %s: %s", name,
                      nvrtcGetErrorString(compiled), out->log);
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
