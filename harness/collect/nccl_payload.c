/*
 * NCCL's NVTX payloads decoded by schema (nccl_payload.h): the schemas
 * of NCCL's collective and point-to-point calls, each its static id, its
 * range's name, its size and where its peer or root sits.
 */
#include "collect/nccl_payload.h"

#include <string.h>

/* NCCL's schemas (src/include/nvtx.h's NVTX_SID_*, laid out as in
 * src/include/nvtx_payload_schemas.h): comm at 0, bytes at 8, and the
 * peer or root, an int, at peer_at (-1: the call has none). `size` is the
 * struct's (with its padding), the least a payload of it can be. */
static const struct {
    uint32_t sid;
    const char *name;
    size_t size;
    int peer_at;
} schemas[] = {
    {4, "ncclAllGather", 16, -1},    {5, "ncclAllReduce", 24, -1}, {6, "ncclBroadcast", 24, 16},
    {7, "ncclReduceScatter", 24, -1}, {8, "ncclReduce", 24, 16},   {9, "ncclSend", 24, 16},
    {10, "ncclRecv", 24, 16},         {16, "ncclAlltoAll", 16, -1}, {17, "ncclGather", 24, 16},
    {18, "ncclScatter", 24, 16},
};

bool cp_nccl_payload_decode(uint64_t schema_id, const void *data, size_t size, cp_nccl_call *out)
{
    if (!data || schema_id < CP_NVTX_SCHEMA_ID_STATIC_START)
        return false;
    uint64_t sid = schema_id - CP_NVTX_SCHEMA_ID_STATIC_START;
    for (size_t i = 0; i < sizeof schemas / sizeof schemas[0]; i++) {
        if (schemas[i].sid != sid)
            continue;
        if (size < schemas[i].size)
            return false;
        /* memcpy: the payload is the caller's struct, of no known alignment here. */
        uint64_t comm = 0, bytes = 0;
        int32_t peer = -1;
        memcpy(&comm, data, sizeof comm);
        memcpy(&bytes, (const char *)data + 8, sizeof bytes);
        if (schemas[i].peer_at >= 0)
            memcpy(&peer, (const char *)data + schemas[i].peer_at, sizeof peer);
        if (comm == 0)
            return false; /* NCCL writes 0 for a call without a communicator */
        *out = (cp_nccl_call){schemas[i].name, comm, bytes, peer};
        return true;
    }
    return false;
}
