#!/usr/bin/env bash
# Configurations against each other as the suites time them (`rute gemm --bench`: cuBLAS in the
# same process, interleaved, inputs rotated past L2), in rounds: each round takes every shape,
# type and configuration once, the configurations of a shape in an order rotated by the round,
# so that no configuration always runs first after a change of shape (at the largest shapes
# that place moved identical kernels by up to 3%). Prints the range of each one's ratios last.
# AB_CLOCKS_MS samples the GPU's clocks, power and throttle reasons (nvidia-smi) that often
# while the runs go, into smi.csv, and prints their means and the reasons seen last.
#   [AB_ROUNDS=4] [AB_DTYPES="bf16 f16"] [AB_REPEATS=30] [AB_BUDGET_S=480] [AB_CLOCKS_MS=100]
#   [RUTE_BIN=.gpu/bin/rute] bash scripts/gpu_suite_ab.sh OUT MxNxK[,MxNxK...] CONFIG [CONFIG...]
# Writes ab.log (one line per run: round, dtype, shape, configuration, the bench line) under OUT.
# Stops starting runs after AB_BUDGET_S seconds; exits non-zero if a run failed.
set -uo pipefail
out="$1"
shapes="$2"
shift 2
configs=("$@")
[ ${#configs[@]} -gt 0 ] || { echo "name at least one configuration" >&2; exit 2; }
mkdir -p "$out"
bin="${RUTE_BIN:-.gpu/bin/rute}"
t0=$(date +%s)
status=0
smi=""
if [ -n "${AB_CLOCKS_MS:-}" ]; then
    nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active \
        --format=csv -lms "$AB_CLOCKS_MS" > "$out/smi.csv" 2>&1 &
    smi=$!
fi
for round in $(seq 1 "${AB_ROUNDS:-4}"); do
    for dt in ${AB_DTYPES:-bf16}; do
        for shape in ${shapes//,/ }; do
            IFS=x read -r m n k <<< "$shape"
            count=${#configs[@]}
            for i in $(seq 0 $((count - 1))); do
                [ $(( $(date +%s) - t0 )) -gt "${AB_BUDGET_S:-480}" ] && break 4
                c="${configs[$(( (i + round - 1) % count ))]}"
                line=$(timeout 60 "$bin" gemm --m "$m" --n "$n" --k "$k" --dtype "$dt" \
                    --kernel hopper_ws --config "$c" --bench --repeats "${AB_REPEATS:-30}" 2>&1 \
                    | grep '^bench:') || { line="FAIL"; status=1; }
                echo "$round $dt $shape $c $line"
            done
        done
    done
done > "$out/ab.log"
echo "$(( $(date +%s) - t0 ))s, $(wc -l < "$out/ab.log") runs"
if [ -n "$smi" ]; then
    kill "$smi"
    awk -F', ' 'NR > 1 && $2 + 0 > 0 { n++; c += $2; p += $4 }
        END { if (n) printf "nvidia-smi: %d samples, mean SM clock %.0f MHz, mean power %.0f W\n", n, c / n, p / n }' \
        "$out/smi.csv"
    awk -F', ' 'NR > 1 { print "throttle reasons", $6 }' "$out/smi.csv" | sort | uniq -c | sort -rn | head -4
fi
# dtype shape configuration: the lowest and highest ratio over the rounds (FAIL where one failed).
awk '{
    key = $2 " " $3 " " $4
    if (!(key in lo)) { order[++keys] = key; lo[key] = 1e9; hi[key] = 0 }
    if ($5 == "FAIL") { failed[key] = 1; next }
    for (i = 5; i < NF; i++) if ($i == "ratio") r = $(i + 1) + 0
    if (r < lo[key]) lo[key] = r
    if (r > hi[key]) hi[key] = r
    runs[key]++
} END {
    for (j = 1; j <= keys; j++) {
        key = order[j]
        if (key in failed) print key, "FAIL"
        else printf "%s %.3f-%.3f (%d runs)\n", key, lo[key], hi[key], runs[key]
    }
}' "$out/ab.log"
exit $status
