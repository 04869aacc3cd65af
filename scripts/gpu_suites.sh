#!/usr/bin/env bash
# The suites' geometric means, the way a before/after comparison needs them: `rute gemm --suite S
# --dtype D` for every suite and dtype named, one process each, tables into OUT_DIR, the summary
# lines last. Stage first: bash scripts/stage_gpu.sh -p kernels --features kernels/gpu (or copy a
# release `rute` built with `--features gpu` into .gpu/bin).
#   bash scripts/gpu_suites.sh OUT_DIR [SUITES (default "bench llm")] [DTYPES (default "bf16 f16")]
set -uo pipefail
out="${1:-${OUT:-gpu-out}}"
suites="${2:-bench llm}"
dtypes="${3:-bf16 f16}"
mkdir -p "$out"
status=0
for suite in $suites; do
    for dtype in $dtypes; do
        timeout 300 .gpu/bin/rute gemm --suite "$suite" --dtype "$dtype" --out "$out/${suite}_$dtype.md" \
            > "$out/${suite}_$dtype.log" 2>&1 || { echo "FAIL: $suite $dtype" >&2; status=1; }
    done
done
for f in "$out"/*.md; do
    [ -f "$f" ] && echo "$(basename "$f" .md): $(grep -E "shapes timed|geometric" "$f" | tail -1)"
done
exit $status
