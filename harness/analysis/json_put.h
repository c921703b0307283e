/* JSON text written by hand where a tree would cost too much (trace
 * files, the injection library's per-process lines): private to the
 * layers, libc only. */
#ifndef CUPROOF_ANALYSIS_JSON_PUT_H
#define CUPROOF_ANALYSIS_JSON_PUT_H

#include <stdio.h>

/* Writes `s` (NULL as "") as a JSON string: quotes, backslashes and
 * control characters escaped, other bytes as they are. */
void cp_json_put_string(FILE *f, const char *s);

#endif
