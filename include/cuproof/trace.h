/*
 * Trace records: activity as the tracer (or a recorded trace) delivers it,
 * on CUPTI's clock, with its device, context and stream. Nothing here
 * touches CUDA, so the analysis is tested on hand-built intervals and on
 * traces recorded on real GPUs.
 */
#ifndef CUPROOF_TRACE_H
#define CUPROOF_TRACE_H

#include "export.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    CP_ACT_KERNEL = 0,
    CP_ACT_MEMCPY,
    CP_ACT_MEMSET,
    CP_ACT_RUNTIME, /* a host-side runtime API call, kept for launch correlation */
    CP_ACT_RANGE,   /* one of the harness's own NVTX phases, stamped on CUPTI's clock */
    CP_ACT_KIND_COUNT
} cp_act_kind;

typedef enum {
    CP_COPY_UNKNOWN = 0,
    CP_COPY_HTOD,
    CP_COPY_DTOH,
    CP_COPY_DTOD,
    CP_COPY_HTOH,
    CP_COPY_PTOP,
    CP_COPY_DIR_COUNT
} cp_copy_dir;

typedef enum {
    CP_MEM_UNKNOWN = 0,
    CP_MEM_PAGEABLE,
    CP_MEM_PINNED,
    CP_MEM_DEVICE,
    CP_MEM_ARRAY,
    CP_MEM_MANAGED,
    CP_MEM_KIND_COUNT
} cp_mem_kind;

typedef struct cp_activity {
    cp_act_kind kind;
    uint64_t start, end; /* ns, CUPTI's clock */
    uint32_t device, context, stream;
    /* The process that issued it, as an index into the processes of a
     * trace merged from several (cp_trace.processes); 0 in one process. */
    uint32_t process;
    uint32_t correlation;
    /* Work launched by a CUDA graph: the graph's id and its node's (0 and
     * 0 otherwise). */
    uint32_t graph_id;
    uint64_t graph_node;
    uint64_t bytes;          /* copies and memsets */
    cp_copy_dir copy_dir;    /* copies */
    cp_mem_kind src, dst;    /* copies: the memory on each side */
    bool async;              /* copies: issued by an asynchronous call */
    uint32_t depth;          /* ranges: nesting level, 0 outermost */
    /* API calls and a traced program's NVTX ranges: the host thread, as
     * CUPTI names it (its own 32-bit id, not the kernel's tid); 0 when
     * unknown. Perfetto draws each thread's calls and ranges on a track of
     * their own, where they nest. */
    uint32_t thread;
    /* NCCL's ranges (ncclAllReduce, ncclSend, ...) whose NVTX payload the
     * injection recorded (docs/distributed.md, "NCCL's own account"): the
     * communicator, NCCL's commHash (0: no payload recorded), the message
     * size in `bytes`, and the peer or root rank of a call that has one
     * (-1 otherwise). */
    uint64_t comm;
    int32_t peer;
    uint32_t grid[3], block[3]; /* kernels: the launch shape (x, y, z); 0 when unknown */
    /* A later piece of a record that a scope clipped into several
     * (cp_trace_scope): its time counts, its number does not, so that a
     * kernel crossing a gap between two ranges is one kernel. Never in a
     * recorded trace. */
    bool piece;
    const char *name;        /* kernel, API or range name; interned in the trace */
} cp_activity;

/* The kinds of CUPTI's own overhead (CUPTI_ACTIVITY_KIND_OVERHEAD
 * records), as the trace files and report.json name them. */
typedef enum {
    CP_OVERHEAD_OTHER = 0, /* unknown to CUPTI, or to this cuproof */
    CP_OVERHEAD_COMPILER,  /* the driver compiling code */
    CP_OVERHEAD_BUFFER_FLUSH,
    CP_OVERHEAD_INSTRUMENTATION, /* kernels instrumented for their timestamps */
    CP_OVERHEAD_RESOURCE,        /* CUPTI's resources made and destroyed */
    CP_OVERHEAD_MODULE_LOADING,  /* modules the runtime loaded */
    CP_OVERHEAD_LAZY_LOADING,    /* functions loaded lazily */
    CP_OVERHEAD_COMMAND_BUFFER_FULL,
    CP_OVERHEAD_BUFFER_REQUEST, /* activity buffers requested */
    CP_OVERHEAD_UVM_INIT,
    CP_OVERHEAD_KIND_COUNT
} cp_overhead_kind;

/*
 * What tracing a process cost it, as the injection library counted
 * (docs/formats.md "tracing_cost"). `recorded` is false for a
 * trace whose writer did not count (files from before it): its figures
 * are then unknown, not zero.
 */
typedef struct cp_tracing_cost {
    bool recorded;
    bool api_all;          /* every API call recorded (exec --api all) */
    uint64_t records;      /* records written to the trace */
    uint64_t api_records;  /* of them, API calls */
    uint64_t api_filtered; /* API calls (CUPTI callback ids) whose records were turned off */
    uint64_t buffers;      /* activity buffers CUPTI completed */
    uint64_t overhead_records; /* CUPTI's overhead records (summed, not written) */
    /* CUPTI's overhead records' summed durations, by kind (ns). */
    uint64_t overhead_ns[CP_OVERHEAD_KIND_COUNT];
} cp_tracing_cost;

/* One traced process of a program run under `cuproof exec`: its records
 * carry its index in cp_trace.processes. */
/* The start of an end record's reason when the process could not have
 * CUPTI (another tool held it): the injection library writes it and the
 * trust rule (trust.h) reads it, so that the two cannot drift apart. */
#define CP_WHY_CUPTI_UNAVAILABLE "cupti unavailable"
/* The same for a process left untraced on purpose, for a reason the end
 * record gives after it (CUPROOF_EXEC_KINDS naming no kind). */
#define CP_WHY_NOT_TRACED "not traced"

typedef struct cp_process {
    uint32_t pid, ppid;
    char host[64];
    char command[256]; /* the executable and its arguments, as far as they fit */
    /* Whether its trace ended with the injection library's end record; a
     * process that died, or left by _exit, is truncated after last_ns. */
    bool ended;
    /* The end record's reason: "exit", or why the process was not traced
     * (CP_WHY_CUPTI_UNAVAILABLE ": ..."); "" when it did not end. */
    char why[160];
    uint64_t last_ns;  /* the last time its trace accounts for (CUPTI's clock) */
    uint64_t dropped;  /* records CUPTI dropped in it */
    /* Records CUPTI delivered with a zero timestamp, which its trace left
     * out: the analysis never saw them, so a non-zero count says the
     * metrics may miss work. */
    uint64_t zero_timestamps;
    /* Its place in a multi-process launch (docs/distributed.md), from
     * the launcher's environment: rank, local rank (on its host) and world
     * size, each -1 when unknown. A rank counts only with rank_var set
     * (cp_process_rank), so that a process built by zero-initialising is
     * no rank 0. */
    int32_t rank, local_rank, world_size;
    char rank_var[32];  /* the variable that gave the rank, e.g. "RANK"; "" when none did */
    char rank_why[160]; /* why a rank variable that was set was not taken; "" when none */
    /* The `cuproof exec` run it belongs to (CUPROOF_EXEC_RUN: the
     * launcher's host.pid.start_ns), so that a file of another run in the
     * same directory is told apart; "" when it was not run by exec. */
    char run[128];
    cp_tracing_cost cost; /* what tracing it cost */
} cp_process;

/* The rank of `p`, or -1 when none was recorded. */
CP_API int32_t cp_process_rank(const cp_process *p);

/* How a viewer names `p`: "rank 1 (HOST, PID): COMMAND" when it has a
 * rank ("rank 1 (PID): COMMAND" without a host), else its command, cut to
 * fit `len`; returns buf. */
CP_API const char *cp_process_label(const cp_process *p, char *buf, size_t len);

/*
 * A name a program gave a stream (nvtxNameCudaStream, which CUPTI delivers
 * as a NAME record): the stream of context `context` on device `device`
 * in process `process` (its index in cp_trace.processes, 0 in one
 * process), numbered as CUPTI numbers the streams of kernel and copy
 * records. Processes are part of the key because two traced processes
 * number their contexts and streams alike.
 */
typedef struct cp_stream_name {
    uint32_t process, device, context, stream;
    const char *name; /* interned in the trace */
} cp_stream_name;

struct cp_trace;
/* The distinct ranks of the trace's processes, ascending, into a new
 * array *out (the caller frees it; NULL when none). Returns how many, or
 * CP_ENOMEM. */
CP_API long cp_trace_ranks(const struct cp_trace *t, int32_t **out);

typedef struct cp_trace {
    cp_activity *items;
    size_t n, cap;
    char **names; /* interned strings, owned */
    size_t nnames, names_cap;
    uint64_t dropped_records;
    /* Kernels whose name CUPTI gave wrongly, corrected from the name the
     * harness recorded at their launch (cp_trace_name_launches). */
    uint64_t renamed_kernels;
    /* The lane of the legacy default stream in the traced context, when the
     * tracer learnt it (it primes CUPTI with a memset on that stream). */
    bool has_legacy_stream;
    uint32_t legacy_device, legacy_context, legacy_stream;
    /* The processes of a traced program (none for a case's window). */
    cp_process *processes;
    size_t nprocesses, processes_cap;
    /* The names the program gave its streams, one per stream (the last it
     * gave); few, so looked up by a linear search. */
    cp_stream_name *stream_names;
    size_t nstream_names, stream_names_cap;
} cp_trace;

/* A consumer of activities that come one at a time (a stream, a scope):
 * `a` and its name are valid during the call only. A negative return
 * stops the producer, which returns it. */
typedef int (*cp_activity_fn)(void *ctx, const cp_activity *a);

CP_API void cp_trace_init(cp_trace *t);
CP_API void cp_trace_free(cp_trace *t);
CP_API void cp_trace_clear(cp_trace *t);

/* Appends a copy of `a`, interning its name. Returns 0 or CP_ENOMEM. */
CP_API int cp_trace_add(cp_trace *t, const cp_activity *a);

/* Appends a copy of `p` to the trace's processes and returns its index
 * (what the process's records carry), or CP_ENOMEM. */
CP_API long cp_trace_add_process(cp_trace *t, const cp_process *p);

/* Names a stream: copies `n` (interning its name) into t's table, or
 * replaces the name of a stream already named there, since a program that
 * renames a stream means its last name. An empty name is ignored (NVTX
 * lets a program pass one; it names nothing). Returns 0 or CP_ENOMEM. */
CP_API int cp_trace_name_stream(cp_trace *t, const cp_stream_name *n);

/* The name the program gave a stream, or NULL when it gave none (or `t`
 * is NULL). */
CP_API const char *cp_trace_stream_name(const cp_trace *t, uint32_t process, uint32_t device,
                                        uint32_t context, uint32_t stream);

/* Adds every stream name of `from` to `to` (names of `to` for the same
 * streams are replaced), for the copies of a trace's context that the
 * scoped and re-read traces make. Returns 0 or CP_ENOMEM. */
CP_API int cp_trace_copy_stream_names(cp_trace *to, const cp_trace *from);

/* A kernel's name as the harness knew it when it launched the kernel, by
 * the launch's correlation id. */
typedef struct cp_launch_name {
    uint32_t correlation;
    const char *name;
} cp_launch_name;

/* Gives every kernel of `t` whose correlation id is among the n `launches`
 * that launch's name, and adds the kernels whose name changed to
 * t->renamed_kernels. CUPTI can name a kernel of a library loaded at run
 * time after an unloaded kernel whose handle was reused; the harness's own
 * record of the launch is the authority. Returns the number renamed, or
 * CP_ENOMEM. */
CP_API int cp_trace_name_launches(cp_trace *t, const cp_launch_name *launches, size_t n);

/* Returns the interned copy of `s` (NULL for NULL), or NULL when out of memory. */
CP_API const char *cp_trace_intern(cp_trace *t, const char *s);

/* Work on the device: kernels, copies and memsets (not API calls or ranges). */
CP_API bool cp_activity_is_device_work(const cp_activity *a);

/* qsort/bsearch order of `const cp_activity *` elements by correlation id. */
CP_API int cp_activity_ptr_cmp_correlation(const void *a, const void *b);

/* Names for the enums, as written to JSON; *_from_name return -1 if unknown. */
CP_API const char *cp_act_kind_name(cp_act_kind k);
CP_API const char *cp_copy_dir_name(cp_copy_dir d);
CP_API const char *cp_mem_kind_name(cp_mem_kind m);
CP_API int cp_act_kind_from_name(const char *s);
CP_API int cp_copy_dir_from_name(const char *s);
CP_API int cp_mem_kind_from_name(const char *s);
CP_API const char *cp_overhead_kind_name(cp_overhead_kind k);
CP_API int cp_overhead_kind_from_name(const char *s);

/* The tracing costs of t's processes summed into *sum over those that
 * recorded one (sum->recorded when any did; api_all when every one of
 * them recorded every call; api_filtered the largest of theirs, since
 * each process filters the same calls). Returns how many did. */
CP_API size_t cp_trace_tracing_cost(const cp_trace *t, cp_tracing_cost *sum);

/* CUPTI's overhead of `c` in all kinds, ns. */
CP_API uint64_t cp_tracing_overhead_ns(const cp_tracing_cost *c);

/* The distinct hosts of meta's processes, numbered in the order their
 * processes come (host 0 is the first process's). */
CP_API uint32_t cp_trace_hosts(const cp_trace *meta);

/* The number of the host of process `process` in that order; 0 for a
 * process out of range. One call counts the hosts before it (the square
 * of the processes): a loop over processes keeps a table instead. */
CP_API uint32_t cp_trace_host_index(const cp_trace *meta, uint32_t process);

#ifdef __cplusplus
}
#endif

#endif
