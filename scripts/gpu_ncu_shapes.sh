#!/usr/bin/env bash
# DRAM traffic and rate of rute's GEMM and cuBLAS's on chosen shapes, from ncu, in one device call:
# per shape, `rute gemm --check` under ncu (its check runs rute's kernel and cuBLAS's once each,
# so both are profiled on the same inputs), then `rute gemm --bench` outside ncu for the ratio.
#   bash scripts/gpu_ncu_shapes.sh OUT_DIR "MxNxK MxNxK ..." [DTYPE (default bf16)] [RUTE_ARGS]
# Writes OUT_DIR/ncu_shapes.csv (ncu's raw page, every kernel) and OUT_DIR/bench_*.log, and prints
# per shape and kernel: time, DRAM bytes read against the minimum (A and B once), the achieved
# DRAM rate, the L2's traffic and its share of the L2's peak, the grid (scripts/ncu_shapes.py).
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:?OUT_DIR}"
shapes="${2:?shapes, e.g. \"150x7168x20480 130x4096x12800\"}"
dtype="${3:-bf16}"
extra="${4:-}"
mkdir -p "$out"
metrics=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,launch__grid_size,launch__block_size,launch__cluster_dim_x,sm__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sector_hit_rate.pct,lts__t_bytes.sum,lts__throughput.avg.pct_of_peak_sustained_elapsed
status=0
: > "$out/ncu_shapes.csv"
for s in $shapes; do
    IFS=x read -r m n k <<< "$s"
    # shellcheck disable=SC2086 # RUTE_ARGS is a list of flags
    timeout 120 ncu --clock-control none --metrics "$metrics" --csv --page raw --print-units base \
        .gpu/bin/rute gemm --m "$m" --n "$n" --k "$k" --dtype "$dtype" --check $extra \
        > "$out/ncu_$s.csv" 2> "$out/ncu_$s.err" || { echo "FAIL: ncu $s" >&2; status=1; }
    echo "# shape $s" >> "$out/ncu_shapes.csv"
    grep -E '^"' "$out/ncu_$s.csv" >> "$out/ncu_shapes.csv"
    rm -f "$out/ncu_$s.csv"
    # shellcheck disable=SC2086
    timeout 120 .gpu/bin/rute gemm --m "$m" --n "$n" --k "$k" --dtype "$dtype" --bench $extra \
        > "$out/bench_$s.log" 2>&1 || { echo "FAIL: bench $s" >&2; status=1; }
done
python3 "$here/ncu_shapes.py" "$out/ncu_shapes.csv" "$dtype" "$out" | tee "$out/ncu_table.md"
# The device returns few files: everything in one archive beside the table.
tar -czf "$out.tar.gz" -C "$(dirname "$out")" "$(basename "$out")" && mv "$out.tar.gz" "$out/"
exit $status
