#!/usr/bin/env bash
# `cuproof run` times its cases in a fixed address-space layout
# (include/cuproof/internal/layout.h): its report's environment says
# "fixed" wherever the kernel lets randomisation be turned off (setarch -R
# works), "random" where it does not (a container's seccomp profile may
# refuse personality(2)), and "random" always under CUPROOF_ASLR=1, the
# control that shows the check can fail. No GPU needed: without one the
# cases skip and the report is still written.
#   layout_test.sh CUPROOF WORKDIR
set -uo pipefail
cuproof=$1
work=$2
rm -rf "$work" && mkdir -p "$work"
layout() { sed -n 's/.*"address_layout":[[:space:]]*"\([a-z]*\)".*/\1/p' "$1/report.json" | head -1; }
fail=0

if setarch "$(uname -m)" -R true 2>/dev/null; then want=fixed; else
    want=random
    echo "layout_test: this kernel refuses to turn randomisation off (setarch -R fails): expecting random"
fi
"$cuproof" run vector-add --out "$work/default" > "$work/default.log" 2>&1
got=$(layout "$work/default")
[ "$got" = "$want" ] || { echo "FAIL: run's report says address_layout '$got', expected '$want'"; fail=1; }

CUPROOF_ASLR=1 "$cuproof" run vector-add --out "$work/kept" > "$work/kept.log" 2>&1
got=$(layout "$work/kept")
[ "$got" = random ] || { echo "FAIL: under CUPROOF_ASLR=1 the report says '$got', expected 'random'"; fail=1; }

# compare says when the sides differ, and only then.
"$cuproof" compare "$work/default" "$work/kept" > "$work/cmp.log" 2>&1
if [ "$want" = fixed ]; then
    grep -q "different address-space layouts (old fixed, new random)" "$work/cmp.log" ||
        { echo "FAIL: compare of fixed against random does not warn"; cat "$work/cmp.log"; fail=1; }
fi
"$cuproof" compare "$work/kept" "$work/kept" > "$work/same.log" 2>&1
grep -q "address-space layouts" "$work/same.log" &&
    { echo "FAIL: compare of a report with itself warns about layouts"; fail=1; }
[ $fail = 0 ] && echo "layout_test: run's layout '$want', '$(layout "$work/kept")' under CUPROOF_ASLR=1; compare warns when they differ"
exit $fail
