#!/usr/bin/env bash
# rute beside Triton on a suite's shapes (the LLM suite's 28 by default), in one device call, both
# against cuBLAS by the same method (uniform [-1, 1) inputs, input sets rotated past L2,
# interleaved medians): `rute gemm --suite SUITE` (stage .gpu/bin/rute first: bash
# scripts/stage_gpu.sh -p kernels --features kernels/gpu), then scripts/triton_peer.py on the
# shapes its table names (every PEER_EVERY-th: Triton compiles several configurations a shape),
# then the two side by side (scripts/peer_table.py).
#   [RUTE_SUITE=llm|midm|bench] [PEER_EVERY=1] [RUTE_TABLE=rute's table of that suite]
#   RUTE_DTYPE=f16|bf16 bash scripts/gpu_peers.sh [OUT_DIR]
# Writes rute_$SUITE_$DTYPE.md, triton_$SUITE_$DTYPE.md (and .err) and peers_$SUITE_$DTYPE.md
# under OUT_DIR and prints the side-by-side table last. Exits non-zero if either run failed.
set -uo pipefail
out="${1:-${OUT:-gpu-out}}"
dtype="${RUTE_DTYPE:-f16}"
suite="${RUTE_SUITE:-llm}"
every="${PEER_EVERY:-1}"
name="${suite}_$dtype"
here="$(cd "$(dirname "$0")" && pwd)"
mkdir -p "$out"
status=0
# RUTE_TABLE: a table this suite's run already wrote in the same device session (so that the
# suite does not run twice in one call); else the suite runs here.
if [ -n "${RUTE_TABLE:-}" ]; then
    cp "$RUTE_TABLE" "$out/rute_$name.md"
else
    .gpu/bin/rute gemm --suite "$suite" --dtype "$dtype" --out "$out/rute_$name.md" \
        > "$out/rute_$name.log" 2>&1 || { echo "FAIL: rute gemm --suite $suite" >&2; status=1; }
fi
shapes=$(python3 "$here/peer_table.py" shapes "$out/rute_$name.md" | tr ' ' '\n' \
    | awk -v e="$every" 'NF && (NR - 1) % e == 0' | tr '\n' ' ')
[ -n "$shapes" ] || { echo "FAIL: no shapes in rute_$name.md" >&2; exit 1; }
# shellcheck disable=SC2086 # one argument per shape
python3 "$here/triton_peer.py" --dtype "$dtype" $shapes > "$out/triton_$name.md" \
    2> "$out/triton_$name.err" || { echo "FAIL: triton_peer.py" >&2; status=1; }
python3 "$here/peer_table.py" merge "$out/rute_$name.md" "$out/triton_$name.md" \
    | tee "$out/peers_$name.md"
exit $status
