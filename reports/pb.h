/*
 * A tiny protocol buffers encoder, private to the reports layer: varints,
 * fixed 64-bit values and length-delimited fields (strings, bytes and
 * nested messages) appended to a growable buffer. It knows nothing of any
 * schema, so the Perfetto writer that uses it (perfetto_pb.c) names every
 * field number itself, beside the .proto line it comes from.
 *
 * Nested messages are opened and closed like brackets. Their length goes
 * before their contents on the wire, so cp_pb_begin reserves one byte for
 * it and cp_pb_end writes the length there, moving the contents along in
 * the rare case (128 bytes or more) that the length needs more bytes: the
 * output is canonical protobuf, as a protobuf library would write it.
 */
#ifndef CUPROOF_REPORTS_PB_H
#define CUPROOF_REPORTS_PB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The deepest nesting cp_pb_begin accepts; deeper is a programming error,
 * reported like running out of memory (the buffer is marked failed). */
#define CP_PB_MAX_DEPTH 8

typedef struct cp_pb {
    uint8_t *data;
    size_t len, cap;
    size_t open[CP_PB_MAX_DEPTH]; /* where each open message's contents start */
    int depth;
    /* Set when memory ran out (or nesting went too deep): later calls do
     * nothing, and the owner reports CP_ENOMEM once. */
    bool failed;
} cp_pb;

/* Protobuf wire types (the low 3 bits of a field's tag). */
enum { CP_PB_VARINT = 0, CP_PB_FIXED64 = 1, CP_PB_LEN = 2, CP_PB_FIXED32 = 5 };

void cp_pb_init(cp_pb *b);
void cp_pb_free(cp_pb *b);

/* Empties the buffer and keeps its memory. No message may be open. */
void cp_pb_reset(cp_pb *b);

/* How many bytes `v` takes as a varint (1 to 10). */
size_t cp_pb_varint_size(uint64_t v);

/* Writes `v` as a varint at `out` (room for 10 bytes) and returns its size. */
size_t cp_pb_put_varint(uint8_t *out, uint64_t v);

void cp_pb_varint(cp_pb *b, uint32_t field, uint64_t v);
void cp_pb_fixed64(cp_pb *b, uint32_t field, uint64_t v);
void cp_pb_bytes(cp_pb *b, uint32_t field, const void *data, size_t n);
void cp_pb_string(cp_pb *b, uint32_t field, const char *s);

/* Opens a nested message as field `field`; cp_pb_end closes the innermost. */
void cp_pb_begin(cp_pb *b, uint32_t field);
void cp_pb_end(cp_pb *b);

#endif
