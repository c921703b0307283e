#!/usr/bin/env bash
# Issue 27 item 6 on two GPUs: two hosts simulated on one machine. The DDP
# program of tests/exec/ddp_train.py (--mode overlap) runs under torchrun
# and `cuproof exec` with the test-only CUPROOF_TEST_HOST_SHIFT putting
# rank 1 on "sim-host-b", its clock 3 ms ahead (docs/exec.md); the offset
# the analysis recovers from the collectives' ends must be that clock's,
# negated, within 50 us. `cuproof check` then judges the same per-process
# files again. Outputs packed into $OUT/results.tar.gz (the device tool
# returns few files). Run on a machine of two GPUs, from the repository
# root, with .gpu-deps carried. Builds only the tool and the injection
# library.
#   ci/device-hosts.sh            (on the device, from the repository root)
set -uo pipefail
# shellcheck source=ci/device-lib.sh
source ci/device-lib.sh
nvidia-smi -L > "$out/gpus.txt" 2>&1
# BIN: a cuproof already built (ci/device-issue27.sh passes its own);
# else the main preset's tool and injection library are built here.
bin=${BIN:-build/default/cuproof}
if [ -z "${BIN:-}" ] && ! { cmake --preset main > "$out/configure.log" 2>&1 &&
        cmake --build build/default --target cuproof cuproof_inject > "$out/build.log" 2>&1; }; then
    tail -20 "$out/build.log"
    exit 1
fi
export OMP_NUM_THREADS=1 NCCL_DEBUG=WARN
shift_ns=3000000
sim="sim-host-b"
start=$(date +%s)
CUPROOF_TEST_HOST_SHIFT="1:$sim:$shift_ns" "$bin" exec --out "$out/hosts" \
    --keep-going --expect-file tests/exec/ddp_overlap.expect \
    --expect 'every rank: range(step): kernels >= 10' --timeout 240 \
    -- python3 -m torch.distributed.run --nproc_per_node=2 tests/exec/ddp_train.py \
    --mode overlap > "$out/hosts.log" 2>&1
rc=$?
echo "exec: exit $rc, $(( $(date +%s) - start )) s" | tee -a "$out/summary.txt"
tail -6 "$out/hosts.log"
grep 'test-only' "$out/hosts.log" | tee -a "$out/summary.txt"
for f in "$out/hosts/proc"/*; do echo "file: ${f##*/}"; done | tee -a "$out/summary.txt"
"$bin" check "$out/hosts/proc" --expect-file tests/exec/ddp_overlap.expect \
    > "$out/check.log" 2>&1
echo "check: exit $?" | tee -a "$out/summary.txt"
tail -6 "$out/check.log"
# The offset applied to host 1 (report.json's ranks.hosts). Host 0 is the
# first host name in the files' name order: when the simulated host sorts
# first it is the reference, and the real host, 3 ms behind it, gets +3 ms.
python3 - "$out/hosts/report.json" "$sim" "$shift_ns" <<'EOF' 2>&1 | tee -a "$out/summary.txt"
import json, sys
path, sim, shift = sys.argv[1], sys.argv[2], int(sys.argv[3])
with open(path) as f:
    report = json.load(f)
def find(o):
    # ranks may sit at the top or inside a case or variant: the first found
    if isinstance(o, dict):
        if isinstance(o.get("ranks"), dict) and "hosts" in o["ranks"]:
            return o["ranks"]
        items = o.values()
    elif isinstance(o, list):
        items = o
    else:
        return None
    for v in items:
        r = find(v)
        if r is not None:
            return r
    return None
ranks = find(report)
if ranks is None:
    print("no ranks.hosts in", path)
    sys.exit(1)
hosts = ranks["hosts"]
for i, h in enumerate(hosts):
    print("host %d %s: aligned %s, offset %s ns, residual %s ns, shared %s"
          % (i, h.get("name"), h.get("aligned"), h.get("offset_ns"), h.get("residual_ns"),
             h.get("shared")))
if len(hosts) != 2:
    print("FAIL: %d hosts, expected 2" % len(hosts))
    sys.exit(1)
expected = -shift if hosts[1].get("name") == sim else shift
offset = hosts[1].get("offset_ns")
if not hosts[1].get("aligned") or offset is None:
    print("FAIL: host 1 not aligned")
    sys.exit(1)
err = offset - expected
ok = abs(err) <= 50000
print("recovered offset %d ns, expected %d ns: off by %d ns: %s"
      % (offset, expected, err, "PASS (within 50 us)" if ok else "FAIL (beyond 50 us)"))
sys.exit(0 if ok else 1)
EOF
echo "offset check: exit ${PIPESTATUS[0]}" | tee -a "$out/summary.txt"
"$bin" export "$out/hosts/proc" "$out/hosts/rec" --format rec > /dev/null 2>&1
rm -f "$out/hosts"/*.trace.json "$out/hosts"/*.perfetto.json
# PACK=0: the caller packs (ci/device-issue27.sh).
if [ "${PACK:-1}" = 1 ]; then
    device_pack
fi
