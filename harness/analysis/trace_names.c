/*
 * The names trace.h's enums carry in the reports and trace files, and
 * back: one table per enum, indexed by value, so that what the writers
 * print and what the readers accept come from the same place. A value
 * outside its table is named "unknown"; a name not in it reads as -1, for
 * the reader to reject.
 */
#include <cuproof/trace.h>

#include <string.h>

static const char *const act_names[CP_ACT_KIND_COUNT] = {"kernel", "memcpy", "memset",
                                                         "runtime", "range"};
static const char *const dir_names[CP_COPY_DIR_COUNT] = {"unknown", "HtoD", "DtoH",
                                                         "DtoD", "HtoH", "PtoP"};
static const char *const mem_names[CP_MEM_KIND_COUNT] = {"unknown", "pageable", "pinned",
                                                         "device", "array", "managed"};

static const char *const overhead_names[CP_OVERHEAD_KIND_COUNT] = {
    "other",           "driver_compiler",       "buffer_flush",        "instrumentation",
    "resource",        "module_loading",        "lazy_function_loading", "command_buffer_full",
    "buffer_request",  "uvm_init"};

static const char *name_of(const char *const *names, int count, int v)
{
    return v >= 0 && v < count ? names[v] : "unknown";
}

static int index_of(const char *const *names, int count, const char *s)
{
    for (int i = 0; s && i < count; i++)
        if (strcmp(names[i], s) == 0)
            return i;
    return -1;
}

const char *cp_act_kind_name(cp_act_kind k) { return name_of(act_names, CP_ACT_KIND_COUNT, (int)k); }
const char *cp_copy_dir_name(cp_copy_dir d) { return name_of(dir_names, CP_COPY_DIR_COUNT, (int)d); }
const char *cp_mem_kind_name(cp_mem_kind m) { return name_of(mem_names, CP_MEM_KIND_COUNT, (int)m); }
int cp_act_kind_from_name(const char *s) { return index_of(act_names, CP_ACT_KIND_COUNT, s); }
int cp_copy_dir_from_name(const char *s) { return index_of(dir_names, CP_COPY_DIR_COUNT, s); }
int cp_mem_kind_from_name(const char *s) { return index_of(mem_names, CP_MEM_KIND_COUNT, s); }
const char *cp_overhead_kind_name(cp_overhead_kind k)
{
    return name_of(overhead_names, CP_OVERHEAD_KIND_COUNT, (int)k);
}
int cp_overhead_kind_from_name(const char *s)
{
    return index_of(overhead_names, CP_OVERHEAD_KIND_COUNT, s);
}
