/* The reports layer's JSON tree, kept out of the public headers so that no
 * user of cuproof needs cJSON's. */
#ifndef CUPROOF_REPORTS_JSON_H
#define CUPROOF_REPORTS_JSON_H

#include <cuproof/result.h>
#include <cjson/cJSON.h>

/* Reads and parses report.json at `path` into *out (the caller deletes
 * it): 0; CP_EIO when it cannot be read; CP_EPARSE when it is not JSON
 * (the path, line and column named, as the trace reader names them) or
 * not a cuproof report (its schema and a 'cases' array), the path named. */
int cp_report_json_load(const char *path, cJSON **out);

/* Records where cJSON_Parse stopped in `text` (line, column and byte; "cut
 * short?" when brackets are still open at its end) as the last error;
 * returns CP_EPARSE. Call it right after cJSON_Parse returned NULL. */
int cp_json_parse_error(const char *text);

/* Builds the report as JSON; NULL when out of memory. Caller deletes it. */
cJSON *cp_report_to_json(const cp_report *r);

#endif
