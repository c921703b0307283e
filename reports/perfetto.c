/* Which Perfetto format a traced run is written in (cuproof/internal/perfetto.h):
 * the Chrome trace (chrome.c) up to CP_PERFETTO_PROTO_RECORDS records,
 * the protobuf (perfetto_pb.c) past them. The choice lives here alone, so
 * that neither format calls the other and the report's link (html.c)
 * names the file that was written. */
#include <cuproof/internal/perfetto.h>

const char *cp_perfetto_suffix(const cp_trace *t)
{
    return t->n > CP_PERFETTO_PROTO_RECORDS ? "perfetto-trace" : "perfetto.json";
}

int cp_perfetto_write_auto(const char *dir, const char *case_name, const char *variant,
                           const cp_trace *t)
{
    return t->n > CP_PERFETTO_PROTO_RECORDS ? cp_perfetto_pb_write(dir, case_name, variant, t)
                                            : cp_perfetto_write(dir, case_name, variant, t);
}
