/*
 * The protobuf encoder of pb.h: the wire format's varints (7 bits a byte,
 * low bits first, the high bit set on every byte but the last), little-
 * endian fixed64, and tags (field << 3 | wire type) as varints.
 */
#include "reports/pb.h"

#include <stdlib.h>
#include <string.h>

void cp_pb_init(cp_pb *b)
{
    memset(b, 0, sizeof *b);
}

void cp_pb_free(cp_pb *b)
{
    free(b->data);
    cp_pb_init(b);
}

void cp_pb_reset(cp_pb *b)
{
    b->len = 0;
    b->depth = 0;
}

/* Makes room for `extra` more bytes; false (and the buffer failed) when
 * memory runs out. */
static bool reserve(cp_pb *b, size_t extra)
{
    if (b->failed)
        return false;
    if (b->len + extra <= b->cap)
        return true;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + extra)
        cap *= 2;
    uint8_t *data = realloc(b->data, cap);
    if (!data) {
        b->failed = true;
        return false;
    }
    b->data = data;
    b->cap = cap;
    return true;
}

size_t cp_pb_varint_size(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

size_t cp_pb_put_varint(uint8_t *out, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        out[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    out[n++] = (uint8_t)v;
    return n;
}

static void tag(cp_pb *b, uint32_t field, int wire)
{
    if (reserve(b, 10))
        b->len += cp_pb_put_varint(b->data + b->len, (uint64_t)field << 3 | (uint64_t)wire);
}

void cp_pb_varint(cp_pb *b, uint32_t field, uint64_t v)
{
    tag(b, field, CP_PB_VARINT);
    if (reserve(b, 10))
        b->len += cp_pb_put_varint(b->data + b->len, v);
}

void cp_pb_fixed64(cp_pb *b, uint32_t field, uint64_t v)
{
    tag(b, field, CP_PB_FIXED64);
    if (!reserve(b, 8))
        return;
    for (int i = 0; i < 8; i++)
        b->data[b->len++] = (uint8_t)(v >> (8 * i));
}

void cp_pb_bytes(cp_pb *b, uint32_t field, const void *data, size_t n)
{
    tag(b, field, CP_PB_LEN);
    if (!reserve(b, 10 + n))
        return;
    b->len += cp_pb_put_varint(b->data + b->len, n);
    if (n)
        memcpy(b->data + b->len, data, n);
    b->len += n;
}

void cp_pb_string(cp_pb *b, uint32_t field, const char *s)
{
    cp_pb_bytes(b, field, s ? s : "", s ? strlen(s) : 0);
}

void cp_pb_begin(cp_pb *b, uint32_t field)
{
    if (b->depth == CP_PB_MAX_DEPTH)
        b->failed = true;
    tag(b, field, CP_PB_LEN);
    if (!reserve(b, 1))
        return;
    b->len++; /* the length's first byte, written by cp_pb_end */
    b->open[b->depth++] = b->len;
}

void cp_pb_end(cp_pb *b)
{
    if (b->failed || b->depth == 0) {
        b->failed = true;
        return;
    }
    size_t start = b->open[--b->depth];
    size_t n = b->len - start, size = cp_pb_varint_size(n);
    if (size > 1) {
        if (!reserve(b, size - 1))
            return;
        memmove(b->data + start + size - 1, b->data + start, n);
        b->len += size - 1;
    }
    cp_pb_put_varint(b->data + start - 1, n);
}
