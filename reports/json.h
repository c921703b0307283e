/* The reports layer's JSON tree, kept out of the public headers so that no
 * user of cuproof needs cJSON's. */
#ifndef CUPROOF_REPORTS_JSON_H
#define CUPROOF_REPORTS_JSON_H

#include <cuproof/result.h>
#include <cjson/cJSON.h>

/* Reads and parses report.json at `path` into *out (the caller deletes
 * it): 0; CP_EIO when it cannot be read; CP_EPARSE when it is not JSON or
 * not a cuproof report (its schema and a 'cases' array), the path named. */
int cp_report_json_load(const char *path, cJSON **out);

/* Builds the report as JSON; NULL when out of memory. Caller deletes it. */
cJSON *cp_report_to_json(const cp_report *r);

#endif
