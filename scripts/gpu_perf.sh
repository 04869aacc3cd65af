#!/usr/bin/env bash
# The timing run behind the second half of December's tables (results/archive/2026-12-02), in one
# device call: `rute gemm --suite bench` in bf16 and f16, `--suite llm` in bf16 (both by
# scripts/gpu_suites.sh), and the f16 llm suite beside Triton by the same method
# (scripts/gpu_peers.sh), and the older peer script where it was copied into .gpu/. Stage first:
# bash scripts/stage_gpu.sh -p kernels --features kernels/gpu [; cp ../shared/peers/triton_matmul.py .gpu/].
#   bash scripts/gpu_perf.sh [OUT_DIR]
# Writes bench_{bf16,f16}.md, llm_bf16.md, rute_llm_f16.md, triton_llm_f16.md and peers_f16.md
# into OUT_DIR/perf.tar.gz (the device returns few files) with the logs, and prints each suite's
# summary line and the side-by-side table last. Exits non-zero if a run failed.
set -uo pipefail
out="${1:-${OUT:-gpu-out}}"
here="$(cd "$(dirname "$0")" && pwd)"
work="$out/perf"
mkdir -p "$work"
status=0
bash "$here/gpu_suites.sh" "$work" bench "bf16 f16" > /dev/null || status=1
bash "$here/gpu_suites.sh" "$work" llm bf16 > /dev/null || status=1
RUTE_DTYPE=f16 timeout 400 bash "$here/gpu_peers.sh" "$work" > "$work/peers.log" 2>&1 \
    || { echo "FAIL: peers f16 (peers.log)" >&2; status=1; }
# The older peer script (../shared/peers/triton_matmul.py, best of its configs by one do_bench
# each, cuBLAS once, randn inputs), where it was copied into .gpu/: the same shapes its way.
if [ -f .gpu/triton_matmul.py ] && [ -f "$work/rute_llm_f16.md" ]; then
    # shellcheck disable=SC2046 # one argument per shape
    timeout 300 python3 .gpu/triton_matmul.py $(python3 "$here/peer_table.py" shapes \
        "$work/rute_llm_f16.md") > "$work/triton_old_f16.md" 2>&1 \
        || { echo "FAIL: triton_matmul.py" >&2; status=1; }
    python3 "$here/peer_table.py" merge "$work/rute_llm_f16.md" "$work/triton_old_f16.md" \
        > "$work/peers_old_f16.md"
fi
tar -czf "$out/perf.tar.gz" -C "$out" perf
for f in "$work"/bench_*.md "$work"/llm_bf16.md "$work"/rute_llm_f16.md; do
    [ -f "$f" ] && echo "$(basename "$f"): $(grep -E "shapes timed" "$f")"
done
echo " M | N | K | dtype | rute GB/s | copy GB/s | ratio"
grep -hE "^\| (81920|4096|6144|8192|2048) " "$work"/bench_*.md | cut -d'|' -f2-5,12-13,16
[ -f "$work/peers_old_f16.md" ] && echo "older peer script: $(tail -1 "$work/peers_old_f16.md")"
[ -f "$work/peers_f16.md" ] && tail -32 "$work/peers_f16.md"
exit $status
