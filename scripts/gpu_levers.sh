#!/usr/bin/env bash
# Lever runs of the Hopper program on the device, in one call: each line of LEVER_RUNS (a file,
# default scripts/levers.txt) is `SHAPES LEVERS [DTYPE]` for tests/tests/gpu_hopper/'s
# interleaved_levers (every lever and cuBLAS of a shape timed in one interleaved loop). Writes
# levers.log under OUT_DIR and prints the rows last.
set -uo pipefail
runs="${LEVER_RUNS:-scripts/levers.txt}"
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/gpu_common.sh" "$@"
while read -r shapes levers dtype; do
    [ -z "${shapes:-}" ] || [ "${shapes:0:1}" = "#" ] && continue
    RUTE_LEVER_SHAPES="$shapes" RUTE_LEVERS="$levers" RUTE_DTYPE="${dtype:-bf16}" \
        timeout 300 "$hopper" --include-ignored --test-threads=1 --nocapture interleaved_levers \
        >> "$out/levers.log" 2>&1 || fail "$shapes $levers"
done < "$runs"
grep -E "^\| (bf16|f16) |panicked" "$out/levers.log"
exit $status
