#!/usr/bin/env bash
# The short K's time against M, as the suites time it (`rute gemm --bench`: cuBLAS in the same
# process, interleaved, inputs rotated past L2): M from one 64-row tile per block (8448) to
# 163840, N = K = 256, for each configuration named. The slope is the steady state's time per
# row; what is left at M = 0 is the launch's fixed cost (its start, B's load, the last wave).
#   [SCALING_MS="8448 16896 ..."] [SCALING_DTYPES="bf16 f16"] [RUTE_BIN=.gpu/bin/rute] bash scripts/gpu_short_k_scaling.sh OUT CONFIG [CONFIG...]
set -uo pipefail
out="$1"
shift
mkdir -p "$out"
for dt in ${SCALING_DTYPES:-bf16}; do
    for m in ${SCALING_MS:-8448 16896 33792 81920 163840}; do
        for c in "$@"; do
            printf '%s %s %s ' "$dt" "$m" "$c"
            timeout 60 "${RUTE_BIN:-.gpu/bin/rute}" gemm --m "$m" --n 256 --k 256 --dtype "$dt" --kernel hopper_ws \
                --config "$c" --bench --repeats 30 2>&1 | grep '^bench:' || echo "FAIL"
        done
    done
done | tee "$out/scaling.log" | sed -E 's/bench: rute ([0-9.]+) ms .* ([0-9]+) GB\/s \| cuBLAS ([0-9.]+) ms .* ratio ([0-9.]+) .*/rute \1 ms \2 GB\/s cuBLAS \3 ms ratio \4/'
