#!/usr/bin/env bash
# compute-sanitizer's memcheck, racecheck and synccheck on one command (on the device machine):
#   bash scripts/gpu_sanitize.sh NAME OUT_DIR -- COMMAND [ARGS...]
# Writes OUT_DIR/sanitize_NAME_TOOL.log for each tool and prints one line per tool with
# compute-sanitizer's error summary; exits non-zero if a tool reports an error (host API errors
# included: --check-api-memory-access and the API error report are on) or the command fails.
set -uo pipefail
name="$1"; out="$2"; shift 3
status=0
for tool in memcheck racecheck synccheck; do
    log="$out/sanitize_${name}_${tool}.log"
    extra=()
    [ "$tool" = memcheck ] && extra=(--leak-check full --report-api-errors all)
    timeout 300 compute-sanitizer --tool "$tool" "${extra[@]}" --error-exitcode 99 "$@" > "$log" 2>&1
    rc=$?
    summary=$(grep -E "ERROR SUMMARY|RACECHECK SUMMARY|error" "$log" | grep -E "SUMMARY" | tail -1)
    echo "$name $tool: exit $rc; ${summary:-no summary}"
    [ $rc -eq 0 ] || status=1
done
exit $status
