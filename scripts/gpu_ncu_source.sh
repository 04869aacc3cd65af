#!/usr/bin/env bash
# ncu's warp-stall samples per SASS instruction for hopper_ws levers, on the device machine, in one
# call (stage gpu_hopper first: see scripts/gpu_hopper.sh):
#   RUTE_LEVERS=128x256x64s3,128x256x64s3_c2x1 RUTE_LEVER_SHAPES=4096x4096x4096 \
#       bash scripts/gpu_ncu_source.sh [OUT_DIR]
# Profiles the first launch of each lever (the check run of tests/tests/gpu_hopper/'s
# interleaved_levers) with `--set full`, writes OUT_DIR/ncu_source.csv (ncu's source page, SASS,
# one block per kernel) and prints each kernel's samples by opcode (scripts/ncu_stalls.py).
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/gpu_common.sh" "$@"
: "${RUTE_LEVERS:?name the levers (configurations) to profile}"
count=$(echo "$RUTE_LEVERS" | tr ',' '\n' | wc -l)
rep="$(mktemp -d)/levers"
timeout 300 ncu --clock-control none --set full --import-source no -k regex:hopper_ws \
    --launch-count "$count" -o "$rep" "$hopper" --include-ignored --test-threads=1 --nocapture \
    interleaved_levers > "$out/ncu_run.log" 2>&1 || { echo "FAIL: ncu (ncu_run.log)" >&2; exit 1; }
ncu -i "$rep.ncu-rep" --page source --csv --print-source sass > "$out/ncu_source.csv" \
    2> "$out/ncu_source.err" || { echo "FAIL: ncu's source page (ncu_source.err)" >&2; exit 1; }
python3 "$here/ncu_stalls.py" "$out/ncu_source.csv" 8
