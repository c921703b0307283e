#!/usr/bin/env python3
# The check that a stream's NVTX name reaches cuproof exec's files (below).
"""The check of exec.nvtx_ranges.stream_names (stream_names.sh): that a
stream the program named through NVTX carries its name, for exactly the
stream its kernels ran on, in what cuproof exec wrote for it.

  stream_names_check.py TRACE_JSON PERFETTO_JSON REPORT_HTML NAME KERNEL NAMED OTHER

TRACE_JSON is the program's merged trace file (cuproof.trace/1),
PERFETTO_JSON its Chrome trace and REPORT_HTML its report (or any page
with its timeline). The program ran NAMED kernels whose name holds KERNEL
on the stream it named NAME, and OTHER more on an unnamed stream (the
legacy default stream). Checked:
  - the trace file's stream_names has NAME, and the stream it names (its
    process, device, context and stream) ran exactly NAMED of the KERNEL
    kernels: the name's ids are the kernel records' ids (CUPTI's NAME
    record against its kernel records, on the GPU);
  - the OTHER KERNEL kernels ran on a stream that has no name, and no
    stream named NAME ran any other kernel of the program's;
  - the Chrome trace has a row "NAME (stream N)" for that stream, and no
    other row holds NAME;
  - report.html's timeline has the lane "... ctx C NAME (stream N)", the
    name escaped as the page writes it inside its JSON.
Exits 0 when all hold, 1 naming the first that does not, 2 for bad usage.
Written as its own file so that a CPU test (stream_names_check_test.sh)
can show it fails where the name is missing or on the wrong stream.
"""
import json
import sys


def fail(why):
    print(f"stream_names_check: {why}")
    sys.exit(1)


def main(argv):
    if len(argv) != 8:
        print(__doc__)
        return 2
    trace_path, chrome_path, html_path, name, kernel = argv[1:6]
    named_count, other_count = int(argv[6]), int(argv[7])

    with open(trace_path) as f:
        trace = json.load(f)
    variants = trace.get("variants", [])
    if len(variants) != 1:
        fail(f"{trace_path}: {len(variants)} variants, 1 wanted (a program's trace)")
    v = variants[0]
    names = v.get("stream_names")
    if not names:
        fail(f"{trace_path}: no stream_names: the name {name!r} did not reach the trace file")
    keys = lambda e: (e.get("process", 0), e["device"], e["context"], e["stream"])
    named = [keys(e) for e in names if e["name"] == name]
    if len(named) != 1:
        fail(f"{trace_path}: {len(named)} streams named {name!r} in {names}")
    key = named[0]
    named_keys = {keys(e) for e in names}

    kernels = [a for a in v["activities"] if a["kind"] == "kernel"]
    key_of = lambda a: (a.get("process", 0), a["device"], a["context"], a["stream"])
    ours = [a for a in kernels if kernel in (a.get("name") or "")]
    on_named = [a for a in ours if key_of(a) == key]
    if len(on_named) != named_count:
        streams = sorted({key_of(a) for a in ours})
        fail(f"{trace_path}: {len(on_named)} {kernel} kernels on the stream named {name!r} "
             f"{key}, {named_count} wanted; the {kernel} kernels ran on {streams}")
    others = [a for a in ours if key_of(a) != key]
    if len(others) != other_count:
        fail(f"{trace_path}: {len(others)} {kernel} kernels elsewhere, {other_count} wanted")
    for a in others:
        if key_of(a) in named_keys:
            fail(f"{trace_path}: the unnamed stream {key_of(a)} has a name in {names}")
    strays = [a for a in kernels if key_of(a) == key and kernel not in (a.get("name") or "")]
    if strays:
        fail(f"{trace_path}: {len(strays)} other kernels ({strays[0].get('name')}) on the stream "
             f"named {name!r}: the name labels another stream")

    label = f"{name} (stream {key[3]})"
    with open(chrome_path) as f:
        chrome = json.load(f)
    rows = [e["args"]["name"] for e in chrome["traceEvents"]
            if e.get("ph") == "M" and e.get("name") == "thread_name"]
    if label not in rows:
        fail(f"{chrome_path}: no row {label!r} among {rows}")
    if [r for r in rows if name in r and r != label]:
        fail(f"{chrome_path}: rows other than {label!r} hold the name: {rows}")

    # The page writes its lanes as JSON strings with '<', '>' and '&'
    # escaped (reports/html_buf.c, html_json_string).
    escaped = json.dumps(label)[1:-1]
    for c, u in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026")):
        escaped = escaped.replace(c, u)
    with open(html_path) as f:
        page = f.read()
    lane = f"ctx {key[2]} {escaped}\""
    if lane not in page:
        fail(f"{html_path}: no lane ending {lane!r}")
    print(f"stream_names_check: {name!r} names stream {key[3]} (process {key[0]}, device "
          f"{key[1]}, context {key[2]}): {named_count} {kernel} kernels there, {other_count} "
          f"on an unnamed stream; labelled {label!r} in the trace, Perfetto and report files")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
