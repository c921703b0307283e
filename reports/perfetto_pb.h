/*
 * A streaming writer of Perfetto's native trace format (the protobuf
 * message perfetto.protos.Trace: TracePackets one after another), private
 * to the reports layer. cp_perfetto_pb_write (report.h) writes a whole
 * cp_trace with it; a trace read record by record can go through it
 * without ever being held in memory, since the writer keeps only what it
 * has described (tracks and interned strings, a few per lane and per
 * distinct name) and one bounded buffer of packets not yet written.
 *
 * What a trace shows (see perfetto_pb.c for the packets and fields):
 *  - per traced process a process track (its pid and command), or for a
 *    case's own trace (no processes) one root track named by its title;
 *  - under it two tracks per host thread (T as CUPTI names the thread):
 *    "thread T" holding its API calls, which nest there as they ran (the
 *    calls of two threads overlap without nesting, which one track cannot
 *    show), and "thread T NVTX" holding its ranges, as Nsight Systems
 *    shows them; a "CUDA API" and an "NVTX" track for records of no known
 *    thread (a case's own phases, older traces); and per (device, context)
 *    a track "GPU D ctx C" holding a lane per stream, "GPU D ctx C stream
 *    S";
 *  - beside any of them, "NAME (2)" and on, the rows its slices needed
 *    where some partly overlapped (rows.h): calls of threads the trace
 *    does not name, kernels of one stream that overlap, ranges ended out
 *    of turn;
 *  - one slice (a begin and an end event) per activity, named (interned),
 *    with debug annotations: bytes and the memory on each side of copies,
 *    bytes of memsets, grid and block of kernels, graph_id and graph_node
 *    of work a CUDA graph launched (which also gets the category
 *    "graph N", one per graph);
 *  - a flow from each API call to the device work with its correlation id
 *    in its process: both carry the flow id (process + 1) << 32 |
 *    correlation, so no pairing is needed. The work of one graph launch
 *    shares one id and forms one chain.
 *
 * Size: a record is two packets, each about 19 bytes of framing, sequence
 * id, sequence flags, time, event type and track; the begin adds its name
 * (2), a flow id (10) and its annotations (6 to 9 each): about 56 bytes a
 * record on the recorded traces, against 194 as a Chrome trace.
 */
#ifndef CUPROOF_REPORTS_PERFETTO_PB_H
#define CUPROOF_REPORTS_PERFETTO_PB_H

#include <cuproof/trace.h>

#include <stdint.h>
#include <stdio.h>

typedef struct cp_pb_writer cp_pb_writer;

/* The flow id both ends of a launch carry. */
uint64_t cp_pb_flow_id(uint32_t process, uint32_t correlation);

/*
 * Starts a trace on `f`, which stays the caller's (cp_pb_close does not
 * close it); `path` names it in errors. With `origin_ns` non-zero,
 * timestamps are written as nanoseconds after it (a ClockSnapshot maps
 * them back onto the absolute clock, so they read the same) and take
 * fewer bytes; an activity that starts before it is still written, with
 * its absolute time. With 0, every timestamp is absolute. Returns NULL
 * (CP_ENOMEM in cp_last_error) when out of memory.
 */
cp_pb_writer *cp_pb_open(FILE *f, const char *path, uint64_t origin_ns);

/*
 * Describes traced process `index` (what its activities carry in
 * cp_activity.process): `pid` and `name` (its command) make a process
 * track; pid 0 makes a plain track named `name` (a case's own trace,
 * whose process is not recorded). Describe a process before its first
 * activity: one met first gets a track named "process N", and describing
 * it afterwards is CP_EINVAL. Returns 0, CP_EINVAL, CP_ENOMEM or CP_EIO.
 */
int cp_pb_add_process(cp_pb_writer *w, uint32_t index, uint32_t pid, const char *name);

/* The trace whose streams the tracks are named after ("default stream"
 * for its legacy default stream, cuproof/units.h); it must outlive the
 * writer's records. Without one, streams are "stream N". */
void cp_pb_name_streams(cp_pb_writer *w, const cp_trace *t);

/*
 * Adds one activity: its tracks described on first sight, its slice
 * written once it is its track's turn. A track's slices wait, up to 32 of
 * them, to be written in order of start, the longer first at equal starts
 * (Perfetto reads the events of one time in the order of the file, so a
 * slice ending where the next begins closes first, and of two nested ones
 * beginning together the outer opens first), and go on the row of their
 * track where they nest (rows.h): a slice that partly overlaps another
 * goes on a track beside it, "NAME (2)", instead of taking its end. So
 * activities may come in any order within 32 of their place on their
 * track; one further out is written unchecked and counted (cp_pb_close).
 * `a->name` must stay valid until cp_pb_close. A record whose end precedes
 * its start is written with no duration. Returns 0, CP_ENOMEM or CP_EIO
 * (cp_last_error names the file); after an error every call returns it
 * again.
 */
int cp_pb_add_activity(cp_pb_writer *w, const cp_activity *a);

/* Writes the slices still waiting and what is buffered, and frees the
 * writer (also after an error). `unordered`, when not NULL, receives the
 * slices that came too far out of order on their track to be checked for
 * nesting (0 when every track's came within reach of its order). Returns
 * 0, or the first error of the writer's life (CP_EIO naming the file,
 * CP_ENOMEM, CP_EINVAL). */
int cp_pb_close(cp_pb_writer *w, uint64_t *unordered);

#endif
