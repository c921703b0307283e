/* JSON text written by hand where a tree would cost too much (trace
 * files, the injection library's per-process lines): private to the
 * layers, libc only. */
#ifndef CUPROOF_ANALYSIS_JSON_PUT_H
#define CUPROOF_ANALYSIS_JSON_PUT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* Writes `s` (NULL as "") as a JSON string: quotes, backslashes and
 * control characters escaped, other bytes as they are. */
void cp_json_put_string(FILE *f, const char *s);

/* An NCCL call's payload (cuproof/trace.h: comm, bytes, peer) as the
 * fields ,"comm":"...","bytes":N,"peer":P that both the per-process lines
 * and the trace files carry: the communicator as 16 lower-case
 * hexadecimal digits, since JSON's numbers hold 53 bits. */
void cp_json_put_nccl(FILE *f, uint64_t comm, uint64_t bytes, int32_t peer);

/* The communicator of such fields: true, with *out, for 16 lower-case
 * hexadecimal digits that are not all 0; false for anything else. */
bool cp_json_comm_parse(const char *text, uint64_t *out);

#endif
