#!/usr/bin/env bash
# The layers' arrows point one way (docs/DESIGN.md): runner -> collect ->
# analysis, reports -> analysis, cli -> all; inside the reports library,
# compare/ and judge/ -> reports/ and never back, and no circle among the
# files of any of the three folders. Checked three ways:
#  - includes: what each folder's sources may include;
#  - symbols: what each layer's static library leaves undefined, so that a
#    call slipped in without its header is caught too;
#  - the calls between the reports library's members: none from reports/
#    into compare/ or judge/, none between those two, and no loop; and no
#    loop among the members of any other layer's library or the command
#    line's.
# usage: layers_test.sh SOURCE_DIR BUILD_DIR
# Exit 0 when every rule holds; 1 with one line per broken rule.
set -uo pipefail
src=$1
bin=$2
bad=0

# forbid FOLDER REGEX WHY: no #include line in FOLDER's files matches REGEX.
forbid() {
    local hits
    hits=$(grep -nE "^[[:space:]]*#[[:space:]]*include[[:space:]]*[<\"]($2)" \
        "$src/$1"/*.c "$src/$1"/*.h "$src/$1"/*.cu 2>/dev/null)
    if [ -n "$hits" ]; then
        echo "layers: $1 may not include $3:" >&2
        echo "$hits" | sed 's/^/  /' >&2
        bad=1
    fi
}

cuda='cuda|cupti|nvrtc|nvtx|nvToolsExt|driver_types|vector_types'
# The public headers that need the runner layer (CUDA, the case contract).
# exec.h is the launcher's contract, without CUDA: the judge reads how a
# program ended (cp_program_run) from it; calling the launcher is caught
# by the symbol check below.
runner_api='cuproof/(internal/runner|case|device|rtc|driver|gate|nvtx|child|check)\.h'

forbid harness/analysis "$cuda|cjson|collect/|runner/|reports/|cli/|$runner_api" \
    "CUDA, CUPTI, NVRTC, NVTX, cJSON or a higher layer"
forbid harness/collect "cuda_runtime|nvrtc|nvtx|nvToolsExt|cjson|runner/|reports/|cli/|cuproof/(internal/runner|case|device|rtc|driver|gate|nvtx|child|exec)\.h" \
    "the CUDA runtime, NVRTC, NVTX, cJSON or a higher layer"
forbid harness/runner "cjson|reports/|cli/|cuproof/internal/(report|session|tracefile|perfetto|compare|file)\.h" \
    "the reports layer or the command line"
forbid harness/inject "cuda_runtime|nvrtc|cjson|runner/|reports/|cli/|cuproof/(case|device|rtc|driver|gate|nvtx|child|exec)\.h|cuproof/internal/(runner|report|session)\.h" \
    "the CUDA runtime, NVRTC, cJSON, the runner, the reports or the command line"
for room in reports compare judge; do
    forbid $room "$cuda|collect/|runner/|cli/|$runner_api" \
        "CUDA, the collect or runner layers, or the command line"
done
forbid reports '(compare|judge)/|cuproof/internal/(compare|ab)\.h' \
    "compare/ or judge/, which build on it"
forbid include/cuproof "cjson|collect/|runner/|reports/|cli/|internal/" \
    "cJSON, a private header or an internal one (the stable API stands alone)"
forbid include/cuproof/internal "cjson|collect/|runner/|reports/|cli/" \
    "cJSON or a private header"

# undefined LIB REGEX WHY: LIB's objects call no symbol matching REGEX.
undefined() {
    local lib=$bin/lib$1.a hits
    if [ ! -f "$lib" ]; then
        echo "layers: $lib is missing (build first)" >&2
        bad=1
        return
    fi
    hits=$(nm -u "$lib" 2>/dev/null | awk '{print $2}' | grep -E "$2" | sort -u)
    if [ -n "$hits" ]; then
        echo "layers: $1 calls $3:" $hits >&2
        bad=1
    fi
}

undefined cuproof_analysis '^(cuda|cu[A-Z]|cupti|nvrtc|nvtx|cJSON)|^cp_(tracer|run_|registry|env_|rtc_|cu_|child_|nvtx|session|report|trace_file|chrome)' \
    "CUDA, cJSON or a higher layer"
undefined cuproof_collect '^(cuda[A-Z]|nvrtc|nvtx|cJSON)|^cp_(run_|registry|env_|rtc_|cu_|child_|nvtx|session|report|trace_file|chrome)' \
    "the CUDA runtime, NVRTC, NVTX, cJSON or a higher layer"
undefined cuproof_runner '^cJSON|^cp_(session|report|trace_file|chrome|perfetto|compare|cli)' \
    "the reports layer or the command line"
undefined cuproof_reports '^(cuda|cu[A-Z]|cupti|nvrtc|nvtx)|^cp_(tracer|run_|registry|env_|rtc_|cu_|child_|nvtx|cli|exec_run)' \
    "CUDA or the collect or runner layers"

# The injection library, loaded into programs that did not ask for it:
# no CUDA runtime call of its own, and nothing exported but its two entry
# points (the layers it carries must not interpose on the program's).
inject=$bin/libcuproof_inject.so
if [ -f "$inject" ]; then
    hits=$(nm -D --undefined-only "$inject" | awk '{print $2}' | grep -E '^(cuda[A-Z]|nvrtc|cJSON)' | sort -u)
    if [ -n "$hits" ]; then
        echo "layers: libcuproof_inject.so calls" $hits >&2
        bad=1
    fi
    exported=$(nm -D --defined-only "$inject" | awk '$2 == "T" {print $3}' | sort | tr '\n' ' ')
    if [ "$exported" != "InitializeInjection InitializeInjectionNvtx2 " ]; then
        echo "layers: libcuproof_inject.so exports more than its entry points: $exported" >&2
        bad=1
    fi
else
    echo "layers: $inject is missing (build first)" >&2
    bad=1
fi

# The files of the reports library (Criterion's src/io/: file IO in one
# file, each format calling no other), in three folders: reports/ (the
# formats, readers, session, file IO, spawning), and compare/ and judge/
# beside it, which call reports/ and are never called by it nor by each
# other. The graph of which member of libcuproof_reports.a calls a
# function another member defines must have no such arrow and no loop
# (tsort reports loops; a loop inside a folder is named as that folder's).
lib=$bin/libcuproof_reports.a
if [ -f "$lib" ]; then
    edges=$(join -1 2 -2 2 \
        <(nm -A -u "$lib" 2>/dev/null | awk '{split($1, f, ":"); print f[2], $NF}' | sort -k2,2) \
        <(nm -A --defined-only "$lib" 2>/dev/null |
          awk '$2 ~ /^[TDR]$/ {split($1, f, ":"); print f[2], $NF}' | sort -k2,2) |
        awk '$2 != $3 {print $2, $3, $1}' | sort -u)
    # room MEMBER: the folder of an archive member (NAME.c.o).
    room() {
        local d
        for d in reports compare judge; do
            [ -f "$src/$d/${1%.o}" ] && { echo "$d"; return; }
        done
        echo "?"
    }
    declare -A room_of
    for m in $(awk '{print $1; print $2}' <<<"$edges" | sort -u); do
        room_of[$m]=$(room "$m")
    done
    while read -r from to sym; do
        [ -n "$from" ] || continue
        a=${room_of[$from]} b=${room_of[$to]}
        if [ "$a" != "$b" ] && [ "$b" != reports ]; then
            echo "layers: $a/${from%.o} calls $b/${to%.o} ($sym): only compare/ and judge/" \
                "may call reports/, never the other way or each other" >&2
            bad=1
        fi
    done <<<"$edges"
    for d in reports compare judge; do
        inner=$(while read -r from to sym; do
            [ -n "$from" ] && [ "${room_of[$from]}" = $d ] && [ "${room_of[$to]}" = $d ] &&
                echo "$from $to"
        done <<<"$edges")
        loop=$(tsort <<<"$inner" 2>&1 >/dev/null)
        if [ -n "$loop" ]; then
            echo "layers: the files of $d/ call each other in a circle:" >&2
            echo "$loop" | sed 's/^/  /' >&2
            bad=1
        fi
    done
    loop=$(awk '{print $1, $2}' <<<"$edges" | tsort 2>&1 >/dev/null)
    if [ -n "$loop" ]; then
        echo "layers: the files of the reports library call each other in a circle:" >&2
        echo "$loop" | sed 's/^/  /' >&2
        bad=1
    fi
fi

# No circle among the files of any other layer's library either: the
# command line's (dispatch, arguments, option tables, table of commands,
# one file a command), the analysis, collect and runner layers'.
for name in cuproof_main cuproof_analysis cuproof_collect cuproof_runner; do
    lib=$bin/lib$name.a
    [ -f "$lib" ] || { echo "layers: $lib is missing (build first)" >&2; bad=1; continue; }
    loop=$(join -1 2 -2 2 \
        <(nm -A -u "$lib" 2>/dev/null | awk '{split($1, f, ":"); print f[2], $NF}' | sort -k2,2) \
        <(nm -A --defined-only "$lib" 2>/dev/null |
          awk '$2 ~ /^[TDR]$/ {split($1, f, ":"); print f[2], $NF}' | sort -k2,2) |
        awk '$2 != $3 {print $2, $3}' | sort -u | tsort 2>&1 >/dev/null)
    if [ -n "$loop" ]; then
        echo "layers: the files of $name call each other in a circle:" >&2
        echo "$loop" | sed 's/^/  /' >&2
        bad=1
    fi
done

exit $bad
