#!/usr/bin/env bash
# ncu's warp-stall samples per SASS instruction, and its headline metrics, for GEMM kernels on the
# device machine, in one call. By default it profiles hopper_ws levers (stage gpu_hopper first: see
# scripts/gpu_hopper.sh):
#   RUTE_LEVERS=128x256x64s3,128x256x64s3_c2x1 RUTE_LEVER_SHAPES=4096x4096x4096 \
#       bash scripts/gpu_ncu_source.sh [OUT_DIR]
# profiling the first launch of each lever (the check run of tests/tests/gpu_hopper/'s
# interleaved_levers). NCU_COMMAND="..." profiles that command instead, NCU_KERNEL (a regex,
# default hopper_ws) picks its kernels and NCU_COUNT how many launches (default 1), e.g. a fused
# epilogue's kernel beside the plain one:
#   NCU_COMMAND=".gpu/bin/blas-bench first-call fused" bash scripts/gpu_ncu_source.sh OUT/fused
# Runs ncu with `--set full`, writes OUT_DIR/ncu_source.csv (ncu's source page, SASS, one block per
# kernel) and OUT_DIR/ncu_details.csv (every section's metrics), and prints each kernel's samples by
# opcode (scripts/ncu_stalls.py) and the details that tell issue-bound from waiting
# (scripts/ncu_details.py).
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:-${OUT:-gpu-out}}"
mkdir -p "$out"
rep="$(mktemp -d)/profile"
if [ -n "${NCU_COMMAND:-}" ]; then
    # shellcheck disable=SC2206 # NCU_COMMAND is a command line
    command=($NCU_COMMAND)
    count="${NCU_COUNT:-1}"
else
    source "$here/gpu_common.sh" "$out"
    : "${RUTE_LEVERS:?name the levers (configurations) to profile, or set NCU_COMMAND}"
    command=("$hopper" --include-ignored --test-threads=1 --nocapture interleaved_levers)
    count=$(echo "$RUTE_LEVERS" | tr ',' '\n' | wc -l)
fi
timeout 300 ncu --clock-control none --set full --import-source no -k "regex:${NCU_KERNEL:-hopper_ws}" \
    --launch-count "$count" -o "$rep" "${command[@]}" > "$out/ncu_run.log" 2>&1 \
    || { echo "FAIL: ncu (ncu_run.log)" >&2; exit 1; }
ncu -i "$rep.ncu-rep" --page source --csv --print-source sass > "$out/ncu_source.csv" \
    2> "$out/ncu_source.err" || { echo "FAIL: ncu's source page (ncu_source.err)" >&2; exit 1; }
ncu -i "$rep.ncu-rep" --page details --csv > "$out/ncu_details.csv" 2>> "$out/ncu_source.err" \
    || { echo "FAIL: ncu's details page (ncu_source.err)" >&2; exit 1; }
python3 "$here/ncu_stalls.py" "$out/ncu_source.csv" 8
python3 "$here/ncu_details.py" "$out/ncu_details.csv"
