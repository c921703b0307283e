/*
 * NCCL's NVTX payloads: what NCCL tells a tool of each call when NVTX is
 * on (NCCL_NVTX_DISABLE unset). NCCL wraps its API calls in ranges of its
 * "NCCL" domain whose event attributes carry an extended payload
 * (nvToolsExtPayload.h: payloadType NVTX_PAYLOAD_TYPE_EXT, the payload an
 * array of nvtxPayloadData_t) of a static schema: NCCL's
 * src/include/nvtx.h numbers them (NVTX_SID_AllReduce 5, ...) from
 * NVTX_PAYLOAD_ENTRY_TYPE_SCHEMA_ID_STATIC_START (1 << 24), and
 * src/include/nvtx_payload_schemas.h lays them out: the communicator
 * (NCCL's commHash, uint64) first, then the message size in bytes
 * (size_t), then the root, peer or reduction as the call has them.
 *
 * The decoder reads one payload by its schema id and size alone, with no
 * NVTX or CUDA call, so that the CPU tests hold it against hand-built
 * payloads; a schema it does not know, or a payload smaller than the
 * schema's, decodes to nothing (a newer NCCL's calls are then ranges
 * without a payload, as before), never to a guess.
 */
#ifndef CUPROOF_COLLECT_NCCL_PAYLOAD_H
#define CUPROOF_COLLECT_NCCL_PAYLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* NVTX's type of an extended payload (nvToolsExtPayload.h). */
#define CP_NVTX_PAYLOAD_TYPE_EXT ((int32_t)0xDFBD0009)
/* The first static schema id (nvToolsExtPayload.h). */
#define CP_NVTX_SCHEMA_ID_STATIC_START (UINT64_C(1) << 24)

/* One NCCL call as its payload has it. */
typedef struct cp_nccl_call {
    const char *name; /* the range NCCL names it by: "ncclAllReduce", ... */
    uint64_t comm;    /* the communicator (commHash); never 0 once decoded */
    uint64_t bytes;   /* the message size */
    int32_t peer;     /* the peer (send, recv) or root (broadcast, reduce, gather, scatter); -1: none */
} cp_nccl_call;

/* Decodes the payload of schema `schema_id`, `size` bytes at `data`, into
 * *out. Returns true for a collective or point-to-point call of a schema
 * it knows, with a non-zero communicator; false otherwise (*out
 * untouched). */
bool cp_nccl_payload_decode(uint64_t schema_id, const void *data, size_t size, cp_nccl_call *out);

#endif
