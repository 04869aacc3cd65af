#!/usr/bin/env bash
# rute beside Triton on the LLM suite's 28 shapes, in one device call, both against cuBLAS by the
# same method (uniform [-1, 1) inputs, input sets rotated past L2, interleaved medians): `rute
# gemm --suite llm` (stage .gpu/bin/rute first: bash scripts/stage_gpu.sh -p kernels --features
# kernels/gpu), then scripts/triton_peer.py on the shapes its table names, then the two side by
# side (scripts/peer_table.py).
#   RUTE_DTYPE=f16|bf16 bash scripts/gpu_peers.sh [OUT_DIR]
# Writes rute_llm_$DTYPE.md, triton_llm_$DTYPE.md (and .err) and peers_$DTYPE.md under OUT_DIR
# and prints the side-by-side table last. Exits non-zero if either run failed.
set -uo pipefail
out="${1:-${OUT:-gpu-out}}"
dtype="${RUTE_DTYPE:-f16}"
here="$(cd "$(dirname "$0")" && pwd)"
mkdir -p "$out"
status=0
.gpu/bin/rute gemm --suite llm --dtype "$dtype" --out "$out/rute_llm_$dtype.md" \
    > "$out/rute_llm_$dtype.log" 2>&1 || { echo "FAIL: rute gemm --suite llm" >&2; status=1; }
shapes=$(python3 "$here/peer_table.py" shapes "$out/rute_llm_$dtype.md")
[ -n "$shapes" ] || { echo "FAIL: no shapes in rute_llm_$dtype.md" >&2; exit 1; }
# shellcheck disable=SC2086 # one argument per shape
python3 "$here/triton_peer.py" --dtype "$dtype" $shapes > "$out/triton_llm_$dtype.md" \
    2> "$out/triton_llm_$dtype.err" || { echo "FAIL: triton_peer.py" >&2; status=1; }
python3 "$here/peer_table.py" merge "$out/rute_llm_$dtype.md" "$out/triton_llm_$dtype.md" \
    | tee "$out/peers_$dtype.md"
exit $status
