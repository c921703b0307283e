/*
 * The per-collective table as both analyses build it (coll_rows.c; the
 * row is cp_collective_row in cuproof/metrics.h): each communication
 * kernel a slot with its class (NCCL's operation, algorithm and protocol,
 * read from its name) and its time; the sweep (sweep.h) fills in the part
 * of that time during which no compute kernel ran on its device; the rows
 * are the slots grouped by class. Memory grows with the communication
 * kernels, which are few beside the records.
 */
#ifndef CUPROOF_COLL_ROWS_H
#define CUPROOF_COLL_ROWS_H

#include <cuproof/metrics.h>
#include <cuproof/trace.h>

#include <stddef.h>
#include <stdint.h>

typedef struct coll_slot {
    uint64_t start; /* its process's, device's, context's and stream's, for its NCCL call */
    uint32_t process, device, context, stream;
    uint64_t comm, bytes; /* its NCCL call's (cp__coll_finish), 0 when unknown */
    uint64_t dur_ns;
    uint64_t free_at_start; /* the device's compute-free time when it started */
    uint64_t exposed_ns;    /* its compute-free time, once it ended */
    uint32_t cls;           /* index into coll_rows.classes */
    bool piece;             /* a later piece of a clipped kernel: its time counts, not it */
} coll_slot;

typedef struct coll_class {
    char op[24], algo[24], proto[12];
} coll_class;

/* The streaming analysis's index from a kernel's lane and start to its
 * slot (the sweep meets it again by those). */
typedef struct coll_key {
    uint64_t start;
    uint32_t lane1; /* lane + 1; 0 empty */
    uint32_t slot;
} coll_key;

/* The kernels' operation of NCCL's point-to-point calls (ncclSend and
 * ncclRecv run SendRecv kernels). */
#define CP_COLL_P2P_OP "SendRecv"

/* An NCCL call with its payload (an NCCL range with comm, cuproof/trace.h). */
typedef struct coll_call {
    uint64_t start, comm, bytes;
    uint32_t process;
    int32_t peer; /* a send's or receive's peer (its rank in the communicator); -1 none */
    int8_t dir;   /* +1 a send, -1 a receive, 0 a collective (from its name) */
    char op[24];  /* the range's name without "nccl": the kernels' operation */
} coll_call;

/* A communication kernel as the pairing sees it (cp__coll_pair): its
 * start, its stream (its process's device, context and stream as one
 * key), its operation (coll_class.op) and its process (or rank); and,
 * where paired, its call's communicator (0: none), message size and
 * start, and for a send or a receive its peer and direction (dir +1 a
 * send, -1 a receive, 0 a collective). */
typedef struct coll_pairable {
    uint64_t start, stream;
    const char *op;
    uint32_t process;
    uint64_t comm, bytes, call_start;
    int32_t peer;
    int8_t dir;
} coll_pairable;

/* Pairs the `nk` kernels with the `ncalls` calls by the rule of
 * cp__coll_finish below (each process's own), setting their comm, bytes
 * and call_start (0 where unpaired). Returns 0 or CP_ENOMEM. */
int cp__coll_pair(const coll_call *calls, size_t ncalls, coll_pairable *k, size_t nk);

typedef struct coll_comm {
    uint64_t comm;
    uint32_t ranks;
} coll_comm;

/* The communicators of the `ncalls` calls, by id ascending, each with its
 * ranks (the distinct processes with calls on it), into *out (owned by
 * the caller); `calls` is sorted by communicator and process on the way.
 * Returns how many, or CP_ENOMEM. */
long cp__coll_comms(coll_call *calls, size_t ncalls, coll_comm **out);

/* The index of communicator `comm` in `comms` (n of them, by id), or n. */
size_t cp__coll_comm_find(const coll_comm *comms, size_t n, uint64_t comm);

typedef struct coll_rows {
    coll_slot *slots;
    size_t n, cap;
    coll_call *calls;
    size_t ncalls, calls_cap;
    coll_comm *comms; /* each communicator's ranks, once the calls are paired */
    size_t ncomms;
    coll_class *classes;
    size_t nclasses, classes_cap;
    coll_key *keys;
    size_t nkeys, keys_cap;
} coll_rows;

/* The operation, algorithm and protocol NCCL's kernel name says (mangled
 * or not: cp_name_leading's identifier), each "" where it says none.
 * Returns false for a name that is not NCCL's kernel. */
bool cp__coll_class_of(const char *name, coll_class *out);

/* The index in *classes (n of them, room for *cap) of the class kernel
 * name `name` says (cp__coll_class_of; "other" for a name that is not
 * NCCL's: communication by the pattern), added when new. Returns it, or
 * CP_ENOMEM. Both the per-collective table and the collectives' match
 * (collectives.c) keep their classes so. */
long cp__coll_class_intern(coll_class **classes, size_t *n, size_t *cap, const char *name);

/* A slot for communication kernel `a` (ending at `end`): its index, or
 * CP_ENOMEM. */
long cp__coll_add(coll_rows *c, const cp_activity *a, uint64_t end);

/* Keeps an NCCL call of `process` (or rank) in *calls (n of them, room
 * for *cap): its start, communicator, message size, peer (-1: none) and
 * range name, when it is one (a communicator, a name beginning "nccl").
 * Returns 1 when kept, 0 when it is no call, or CP_ENOMEM. Both the
 * per-collective table and the collectives' match keep their calls so. */
long cp__coll_call_add(coll_call **calls, size_t *n, size_t *cap, uint32_t process,
                       uint64_t start, uint64_t comm, uint64_t bytes, int32_t peer,
                       const char *name);

/* Range `a` when it is an NCCL call with its payload (a->comm): kept for
 * cp__coll_finish, which gives its size to its kernel. Anything else is
 * left alone. Returns 0 or CP_ENOMEM. */
int cp__coll_call(coll_rows *c, const cp_activity *a);

/* The streaming analysis's index: put slot `slot` under (lane, start);
 * get returns slot + 1, or 0 when none is there (a second kernel on one
 * lane at one instant shares the first's). put returns 0 or CP_ENOMEM. */
int cp__coll_key_put(coll_rows *c, uint32_t lane, uint64_t start, uint32_t slot);
uint32_t cp__coll_key_get(const coll_rows *c, uint32_t lane, uint64_t start);

/* The rows into m (collective_rows), the slots' classes grouped; the
 * table is emptied. Each kernel gets its NCCL call's size where the
 * pairing is shown (cuproof/metrics.h, cp_collective_row; pair_calls in
 * coll_rows.c): per process, each communicator's stream is the one most
 * of its calls fit one for one (as many, each kernel after its call),
 * point-to-point calls apart; then per operation and stream, the calls
 * of the communicators on it, in time order, go to its kernels where
 * they fit so (NCCL launches one kernel a call, in order); otherwise
 * those kernels have none. Returns 0 or CP_ENOMEM. */
int cp__coll_finish(coll_rows *c, cp_metrics *m);
void cp__coll_free(coll_rows *c);

#endif
