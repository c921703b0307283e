/* The reports layer's JSON tree, kept out of the public headers so that no
 * user of cuproof needs cJSON's. */
#ifndef CUPROOF_REPORTS_JSON_H
#define CUPROOF_REPORTS_JSON_H

#include <cuproof/report.h>

#include <cjson/cJSON.h>

/* Builds the report as JSON; NULL when out of memory. Caller deletes it. */
cJSON *cp_report_to_json(const cp_report *r);

#endif
