/*
 * The harness's NVTX annotations (cuproof/nvtx.h): ranges in the
 * "cuproof" domain, kept on a stack per thread, each also stamped on
 * CUPTI's clock and added to the open traced window, since under `cuproof
 * run` CUPTI does not listen to NVTX; and stream names, given to NVTX and
 * to the tracer alike.
 */
#include <cuproof/nvtx.h>

#include <cuproof/error.h>
#include "collect/tracer.h"

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <pthread.h>
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

/* cuStreamGetCtx at its CUDA 12.0 signature, through the runtime (the
 * harness does not link the driver library); NULL when the driver lacks
 * it. */
typedef CUresult (*stream_ctx_fn)(CUstream, CUcontext *);
static stream_ctx_fn stream_ctx;
static pthread_once_t stream_ctx_once = PTHREAD_ONCE_INIT;

static void resolve_stream_ctx(void)
{
    void *fn = NULL;
    enum cudaDriverEntryPointQueryResult status = cudaDriverEntryPointSuccess;
    if (cudaGetDriverEntryPointByVersion("cuStreamGetCtx", &fn, 12000, cudaEnableDefault,
                                         &status) == cudaSuccess &&
        status == cudaDriverEntryPointSuccess)
        stream_ctx = (stream_ctx_fn)fn;
}

/* The name goes to NVTX, for a tool that listens there (Nsight Systems),
 * and to the tracer, since under `cuproof run` CUPTI does not listen to
 * NVTX (cp_tracer_name_stream). A stream the tracer cannot number keeps
 * its number alone in the outputs: a label, not worth failing a case. */
void cp_nvtx_name_stream(void *stream, const char *fmt, ...)
{
    char name[128];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(name, sizeof name, fmt, ap);
    va_end(ap);
    nvtxNameCudaStreamA((cudaStream_t)stream, name);
    pthread_once(&stream_ctx_once, resolve_stream_ctx);
    CUcontext ctx = NULL;
    if (stream_ctx && stream_ctx((CUstream)stream, &ctx) == CUDA_SUCCESS && ctx &&
        cp_tracer_name_stream(ctx, stream, name) < 0)
        cp_clear_last_error();
}
