#!/usr/bin/env bash
# Candidate hopper_ws configurations on the device, in one call: correctness with the watchdog
# and the three sanitizer tools on the configurations RUTE_CONFIGS names (any spellings), then the
# lever runs of scripts/levers.txt (scripts/gpu_levers.sh). Stage gpu_hopper first (see
# scripts/gpu_hopper.sh).
# TRACES (optional) then traces the phases of configurations (tests/tests/gpu_hopper/'s
# trace_of_the_phases): a space-separated list of CONFIGS@SHAPES, each CONFIGS comma-separated
# spellings, each SHAPES comma-separated MxNxK.
#   [RUTE_CONFIGS=a,b,c] [LEVER_RUNS=file] [TRACES="a,b@81920x256x256 c@6144x6144x6144"]
#       bash scripts/gpu_candidates.sh [OUT_DIR]
# Writes hopper_every.log, sanitize_hopper_{memcheck,racecheck,synccheck}.log, levers.log and
# trace.txt under OUT_DIR and prints a short summary last. Exits non-zero if a test, a tool, a
# lever run or a trace failed; the levers and traces run only after correctness and the
# sanitizer pass (a hang there would take the call).
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# Without RUTE_CONFIGS, the levers file's `#configs: a,b,c` line names them.
if [ -z "${RUTE_CONFIGS:-}" ]; then
    RUTE_CONFIGS=$(sed -n 's/^#configs: *//p' "${LEVER_RUNS:-$here/levers.txt}" | head -1)
    export RUTE_CONFIGS
fi
: "${RUTE_CONFIGS:?name the candidate configurations (comma-separated spellings, or a #configs: line in the levers file)}"
source "$here/gpu_common.sh" "$@"
timeout 300 "$hopper" --include-ignored --test-threads=1 --nocapture every_configuration \
    > "$out/hopper_every.log" 2>&1 || fail "every_configuration (hopper_every.log)"
if [ $status -eq 0 ]; then
    bash "$here/gpu_sanitize.sh" hopper "$out" -- "$hopper" --include-ignored --test-threads=1 \
        small_shape || status=1
fi
if [ $status -eq 0 ]; then
    bash "$here/gpu_levers.sh" "$out" > /dev/null || status=1
fi
if [ $status -eq 0 ]; then
    for trace in ${TRACES:-}; do
        RUTE_TRACE_CONFIGS="${trace%@*}" RUTE_TRACE_SHAPES="${trace#*@}" timeout 120 "$hopper" \
            --include-ignored --test-threads=1 --nocapture trace_of_the_phases \
            >> "$out/trace.txt" 2>&1 || fail "trace $trace (trace.txt)"
    done
fi
grep -hE "runs \(|watchdog|panicked" "$out/hopper_every.log" | head -5
grep -hE "ERROR SUMMARY|RACECHECK SUMMARY" "$out"/sanitize_hopper_*.log 2>/dev/null
[ -f "$out/levers.log" ] && grep -E "^\| (bf16|f16) " "$out/levers.log"
[ -f "$out/trace.txt" ] && grep -E "^\||^trace" "$out/trace.txt"
exit $status
