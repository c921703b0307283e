#!/usr/bin/env bash
# exec.nvtx_ranges.stream_names (issue 29): a stream the program named
# through NVTX is labelled by its name in what cuproof exec writes, for
# the stream its kernels ran on. nvtx_ranges.cu names a stream it creates
# and runs NAMED add_one kernels there, and OTHER on the legacy default
# stream; it runs under cuproof exec in each file form (jsonl, rec), each
# run meeting nvtx_ranges.expect, and stream_names_check.py then holds the
# merged trace file, the Chrome trace and report.html to the name (the
# CUPTI NAME record's stream ids must be the kernel records' ids for that:
# only a GPU shows whether they are).
# Skipped (77) where cuproof exec finds no GPU, or there is no python3.
#   stream_names.sh CUPROOF PROGRAM EXPECT_FILE OUT_DIR NAME NAMED OTHER
set -uo pipefail
cuproof=$1 program=$2 expect=$3 out=$4 name=$5 named=$6 other=$7
here=$(cd "$(dirname "$0")" && pwd)
command -v python3 > /dev/null || { echo "stream_names: skipped: no python3 to read the files"; exit 77; }
rm -rf "$out" && mkdir -p "$out" || exit 1
stem=$(basename "$program")

for form in jsonl rec; do
    "$cuproof" exec --skip-without-gpu --format "$form" --out "$out/$form" \
        --expect-file "$expect" -- "$program" > "$out/$form.log" 2>&1
    rc=$?
    [ "$rc" = 77 ] && { echo "stream_names: skipped: no GPU"; exit 77; }
    if [ "$rc" != 0 ]; then
        echo "stream_names: $form: cuproof exec exited $rc (0 wanted)"
        cat "$out/$form.log"
        exit 1
    fi
    echo "stream_names: $form:"
    python3 "$here/stream_names_check.py" "$out/$form/$stem.trace.json" \
        "$out/$form/$stem.program.perfetto.json" "$out/$form/report.html" \
        "$name" add_one "$named" "$other" || exit 1
done
