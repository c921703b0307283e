#!/usr/bin/env bash
# Fuzzes, with libFuzzer and ASan, each for a bounded time (FUZZ_SECONDS,
# default 60): the trace-file reader and everything that consumes what it
# accepts (analysis, event agreement, Chrome export), seeded with recorded
# H100 traces; the expectation parser, seeded with tests/fuzz/
# expect-corpus; and the per-process trace reader (cuproof.proc/1) with the
# analysis, scopes and Chrome export behind it, seeded with the files of
# tests/fixtures/exec and exec-h100; and the streaming trace reader
# (cuproof.rec/1) with both analyses behind it, which must agree, seeded
# with small rec files made from the recorded traces. Both file readers
# also read the same bytes pushed in pieces, as cuproof exec follows a file
# still being written, which must read alike. Fails on any crash, leak,
# disagreement or sanitizer report.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
seconds=${FUZZ_SECONDS:-60}
CC=clang cmake -S . -B build/fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCUPROOF_FUZZ=ON \
    -DBUILD_TESTING=OFF -DCMAKE_CUDA_ARCHITECTURES="75;80;90" > /dev/null
cmake --build build/fuzz --target fuzz_trace fuzz_expect fuzz_proc fuzz_rec
corpus=$(mktemp -d)
trap 'rm -rf "$corpus"' EXIT
for f in event-timing-h100-ci grid-model-h100-ci conway-block-sync-h100-ci mandelbrot-h100-ci \
         elementwise-vs-handwritten-h100-ci; do
    cp "tests/fixtures/$f.trace.json" "$corpus/"
done
build/fuzz/fuzz_trace "$corpus" -max_total_time="$seconds" -max_len=65536 -rss_limit_mb=2048 \
    -print_final_stats=1 2>&1 | tail -15
corpus_expect=$(mktemp -d)
trap 'rm -rf "$corpus" "$corpus_expect"' EXIT
cp tests/fuzz/expect-corpus/* "$corpus_expect/"
build/fuzz/fuzz_expect "$corpus_expect" -max_total_time="$seconds" -max_len=4096 -rss_limit_mb=2048 \
    -print_final_stats=1 2>&1 | tail -15
corpus_proc=$(mktemp -d)
trap 'rm -rf "$corpus" "$corpus_expect" "$corpus_proc"' EXIT
find tests/fixtures/exec tests/fixtures/exec-h100 -name '*.proc.jsonl' -exec cp {} "$corpus_proc/" \;
build/fuzz/fuzz_proc "$corpus_proc" -max_total_time="$seconds" -max_len=65536 -rss_limit_mb=2048 \
    -print_final_stats=1 2>&1 | tail -15
corpus_rec=$(mktemp -d)
trap 'rm -rf "$corpus" "$corpus_expect" "$corpus_proc" "$corpus_rec"' EXIT
# Seeds: rec files of small recorded traces (cuproof check reads them back
# to make sure they are whole).
cmake --build --preset default --target cuproof > /dev/null
for f in event-timing-h100-ci grid-model-h100-ci conway-block-sync-h100-ci; do
    ./build/default/cuproof export "tests/fixtures/$f.trace.json" "$corpus_rec" --format rec > /dev/null
done
# And the inputs it once failed on (tests/fuzz/rec-corpus), so that they
# are tried again first.
cp tests/fuzz/rec-corpus/* "$corpus_rec/"
build/fuzz/fuzz_rec "$corpus_rec" -max_total_time="$seconds" -max_len=65536 -rss_limit_mb=2048 \
    -print_final_stats=1 2>&1 | tail -15
