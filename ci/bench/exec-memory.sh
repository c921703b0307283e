#!/usr/bin/env bash
# What judging a long program costs cuproof exec itself: peak memory and
# time of the launcher with the program's records held (--keep-records
# past their count: the path before streaming) and streamed (the default),
# and that both give the same verdicts. The program is a stand-in that
# copies a recorded trace into its process file and exits, so that the
# figures are the launcher's alone (the peak is the largest of the
# launcher and its children, and the stand-in's is a few MB; its file is
# named after no live pid, so that the launcher does not wait for it to
# close) and need no GPU. Each TRACE is a cuproof.rec file with its processes, as
# `cuproof export OUT/proc DIR --format rec` writes for a real program,
# or as ci/bench.sh makes synthetic ones (stream_bench write).
#
#   ci/bench/exec-memory.sh OUT_DIR TRACE.cprec...
#
# Writes OUT_DIR/exec-memory.txt: per trace and path, records, wall
# seconds, peak RSS in MB, and the verdict lines' digest (equal on both
# paths, or the script exits 1).
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:?usage: exec-memory.sh OUT_DIR TRACE.cprec...}
shift
[ $# -gt 0 ] || { echo "exec-memory: no trace given" >&2; exit 2; }
cuproof=${CUPROOF:-$root/build/default/cuproof}
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The peak RSS of a command and its children (ru_maxrss of the largest),
# and its wall time, through Python's resource module (no /usr/bin/time
# needed).
measure() {
    python3 - "$@" <<'EOF'
import resource, subprocess, sys, time
t = time.monotonic()
rc = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
wall = time.monotonic() - t
rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
print(f"{rc} {wall:.2f} {rss:.0f}")
EOF
}
expect=(--expect 'kernels >= 1' --expect 'peak_concurrent_kernels > 1'
        --expect 'copy_kernel_overlap_ratio > 0' --expect 'range(step): kernels >= 1'
        --expect 'range(step): copy_kernel_overlap_ratio > 0' --expect 'no finding cuda_memcpy_async')
printf '%-28s %-9s %12s %8s %9s %s\n' trace path records wall_s rss_mb verdicts | tee "$out/exec-memory.txt"
status=0
for trace in "$@"; do
    name=$(basename "$trace" .cprec)
    digests=()
    for path in held streamed; do
        keep=()
        [ "$path" = held ] && keep=(--keep-records 2000000000)
        dir="$work/$name-$path"
        rm -rf "$dir"
        read -r rc wall rss < <(measure env CUDA_VISIBLE_DEVICES= "$cuproof" exec --out "$dir" "${keep[@]}" \
            --allow-dropped "${expect[@]}" -- sh -c "cp '$trace' \"\$CUPROOF_EXEC_DIR/bench.2147483647.proc.cprec\"")
        # The verdicts, from the report (the same on both paths).
        verdicts=$(python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
for c in r["cases"][0]["checks"]:
    print(c["name"], c["ok"], c["measured"])' "$dir/report.json" 2>/dev/null)
        records=$(python3 -c '
import json, sys
t = json.load(open(sys.argv[1]))["cases"][0]["variants"][0]["trace"]
print(t.get("records_streamed", "held"))' "$dir/report.json" 2>/dev/null)
        digest=$(printf '%s' "$verdicts" | sha256sum | cut -c1-12)
        digests+=("$digest")
        printf '%-28s %-9s %12s %8s %9s %s (exit %s)\n' "$name" "$path" "$records" "$wall" "$rss" \
            "$digest" "$rc" | tee -a "$out/exec-memory.txt"
        printf '%s\n' "$verdicts" > "$out/$name-$path.verdicts.txt"
        rm -rf "$dir/proc"
    done
    if [ "${digests[0]}" != "${digests[1]}" ]; then
        echo "exec-memory: $name: the verdicts differ between the paths" | tee -a "$out/exec-memory.txt"
        status=1
    fi
done
exit $status
