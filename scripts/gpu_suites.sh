#!/usr/bin/env bash
# The suites the way a before/after comparison needs them: `rute gemm --suite S --dtype D` for
# every suite and dtype named, one process each, tables into OUT_DIR, the summary lines last
# (the geometric mean of a timed suite, PASS and FAIL counts of correctness). Stage first:
# bash scripts/stage_gpu.sh -p kernels --features kernels/gpu (or copy a release `rute` built with
# `--features gpu` into .gpu/bin).
#   [SUITE_ROUNDS=1] [SUITE_ARGS="--kernel hopper_ws"] [RUTE_BIN=.gpu/bin/rute]
#   bash scripts/gpu_suites.sh OUT_DIR [SUITES (default "bench llm")] [DTYPES (default "bf16 f16")]
# Writes SUITE_DTYPE.md and .log (SUITE_DTYPE_ROUND.md with more than one round: the rounds
# take the suites and dtypes in turn). SUITE_ARGS go to every run (a kernel, a configuration).
set -uo pipefail
out="${1:-${OUT:-gpu-out}}"
suites="${2:-bench llm}"
dtypes="${3:-bf16 f16}"
rounds="${SUITE_ROUNDS:-1}"
bin="${RUTE_BIN:-.gpu/bin/rute}"
mkdir -p "$out"
status=0
for round in $(seq 1 "$rounds"); do
    for suite in $suites; do
        for dtype in $dtypes; do
            name="${suite}_$dtype"
            [ "$rounds" -gt 1 ] && name="${name}_$round"
            # shellcheck disable=SC2086 # SUITE_ARGS is a list of arguments
            timeout 300 "$bin" gemm --suite "$suite" --dtype "$dtype" ${SUITE_ARGS:-} \
                --out "$out/$name.md" > "$out/$name.log" 2>&1 \
                || { echo "FAIL: $name" >&2; status=1; }
        done
    done
done
for f in "$out"/*.md; do
    [ -f "$f" ] || continue
    if grep -q "shapes timed" "$f"; then
        echo "$(basename "$f" .md): $(grep -E "shapes timed" "$f" | tail -1)"
    else
        echo "$(basename "$f" .md): $(grep -cE '\| PASS \|' "$f") PASS, $(grep -cE '\| FAIL \|' "$f") FAIL"
    fi
done
exit $status
