#!/usr/bin/env bash
# Issue 28's exploration on one GPU (samples/h100-five-runs/README.md):
# the machine's CPUs and NUMA layout, `cuproof run --profile ci --runs 3`
# twice with the process pinned to four cores (taskset -c 2-5) and their
# comparison, whether pinning narrows the host-bound variants' spread
# between runs (it did not: 41 of 74 noisy), and 10% more work in
# multi-kernel on 3 runs a side. Logs in $OUT/results.tar.gz.
#   ci/device-explore.sh   (on the device, repository root, .gpu-deps carried)
set -uo pipefail
source ci/device-lib.sh
lscpu | head -25 > $out/lscpu.txt; nvidia-smi topo -m > $out/topo.txt 2>&1; cat $out/topo.txt | head; grep -E "NUMA|Model name|^CPU\(s\)|Thread|MHz" $out/lscpu.txt
cmake --preset default > $out/configure.log 2>&1 && cmake --build --preset default > $out/build.log 2>&1 || { tail -20 $out/build.log; exit 1; }
bin=./build/default/cuproof
for r in 1 2; do s=$(date +%s); taskset -c 2-5 $bin run --profile ci --runs 3 --out $out/pin-$r > $out/pin-$r.log 2>&1; echo "pinned run $r: $? $(( $(date +%s) - s )) s"; rm -f $out/pin-$r/*.trace.json $out/pin-$r/*perfetto*; done
$bin compare $out/pin-1 $out/pin-2 > $out/compare-pin.log 2>&1; echo "compare pinned: $?"
$bin compare $out/pin-1 $out/pin-2 --format json > $out/compare-pin.json 2>/dev/null
$bin run --runs 3 --out $out/work-base multi-kernel > $out/work-base.log 2>&1
$bin run --runs 3 --out $out/work-big multi-kernel --param len=288512 > $out/work-big.log 2>&1
$bin compare $out/work-base $out/work-big > $out/compare-work.log 2>&1; echo "compare work: $?"; cat $out/compare-work.log
rm -f $out/work-*/*.trace.json $out/work-*/*perfetto*
device_pack
