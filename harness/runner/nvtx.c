#include <cuproof/nvtx.h>

#include "collect/tracer.h"

#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtCudaRt.h>
#include <stdarg.h>
#include <stdio.h>

#define MAX_DEPTH 16

static _Thread_local struct {
    char name[MAX_DEPTH][128];
    uint64_t start[MAX_DEPTH];
    int depth; /* may exceed MAX_DEPTH: those levels are not recorded */
} stack;

static nvtxDomainHandle_t domain(void)
{
    static nvtxDomainHandle_t d;
    if (!d)
        d = nvtxDomainCreateA("cuproof");
    return d;
}

void cp_nvtx_push(const char *fmt, ...)
{
    int level = stack.depth++;
    if (level >= MAX_DEPTH)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(stack.name[level], sizeof stack.name[level], fmt, ap);
    va_end(ap);
    nvtxEventAttributes_t attr = {0};
    attr.version = NVTX_VERSION;
    attr.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    attr.messageType = NVTX_MESSAGE_TYPE_ASCII;
    attr.message.ascii = stack.name[level];
    nvtxDomainRangePushEx(domain(), &attr);
    stack.start[level] = cp_tracer_timestamp();
}

void cp_nvtx_pop(void)
{
    if (stack.depth == 0)
        return;
    int level = --stack.depth;
    if (level >= MAX_DEPTH)
        return;
    uint64_t end = cp_tracer_timestamp();
    nvtxDomainRangePop(domain());
    cp_tracer_add_range(stack.name[level], stack.start[level], end, (uint32_t)level);
}

int cp_nvtx_depth(void)
{
    return stack.depth;
}

void cp_nvtx_name_stream(void *stream, const char *fmt, ...)
{
    char name[128];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(name, sizeof name, fmt, ap);
    va_end(ap);
    nvtxNameCudaStreamA((cudaStream_t)stream, name);
}
