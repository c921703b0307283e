#!/usr/bin/env bash
# Host code under the sanitizers, on any machine:
#  - the asan preset (AddressSanitizer and UndefinedBehaviorSanitizer on
#    every C file) runs the CPU test suite, which must pass with no report;
#  - valgrind runs the timeline analysis, the agreement rules and the
#    report, trace and Chrome-trace writers and readers, with no definite
#    leak and no invalid access.
# On a GPU machine CUDA needs ASAN_OPTIONS=protect_shadow_gap=0, which the
# asan test preset sets.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bash ci/install-deps.sh --tests
command -v valgrind >/dev/null || { sudo=""; [ "$(id -u)" -eq 0 ] || sudo=sudo;
    $sudo apt-get install -y -qq valgrind; }
cmake --preset asan
cmake --build --preset asan
ctest --preset asan
cmake --preset default
cmake --build --preset default
for t in test_timeline test_agreement test_report test_chrome; do
    valgrind --quiet --leak-check=full --errors-for-leak-kinds=definite --error-exitcode=9 \
        --trace-children=yes "build/default/tests/$t" --jobs 1
done
echo "sanitize-cpu: asan/ubsan suite and valgrind runs clean"
