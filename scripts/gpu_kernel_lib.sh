#!/usr/bin/env bash
# The kernel library on the GPU, in one device call: the math functions' worst errors against f64
# (gpu_math, fast and accurate side by side), the library kernels against the CPU (gpu_kernel_lib),
# and the runnable examples (each prints PASS). Stage the two test binaries and the examples:
#   cargo test --release -p rute-tests --features gpu --no-run --test gpu_math --test gpu_kernel_lib
#   cargo build --release -p kernels --features gpu --examples   (copy into .gpu/tests, .gpu/bin)
#   bash scripts/gpu_kernel_lib.sh OUT_DIR
set -uo pipefail
out="${1:-${OUT:-gpu-out}}"
mkdir -p "$out"
export RUTE_PTXAS="${RUTE_PTXAS:-$(command -v ptxas)}"
status=0
for t in .gpu/tests/gpu_math-* .gpu/tests/gpu_kernel_lib-*; do
    [ -x "$t" ] || continue
    name=$(basename "$t" | sed 's/-[0-9a-f]*$//')
    timeout 300 "$t" --include-ignored --test-threads=1 --nocapture > "$out/$name.log" 2>&1 \
        || { echo "FAIL: $name ($name.log)" >&2; status=1; }
    grep -E "^test result" "$out/$name.log" | sed "s/^/$name: /"
done
for e in ${EXAMPLES:-softmax layernorm}; do
    [ -x ".gpu/bin/$e" ] || { echo "FAIL: no .gpu/bin/$e" >&2; status=1; continue; }
    timeout 60 ".gpu/bin/$e" > "$out/example_$e.log" 2>&1 || { echo "FAIL: example $e" >&2; status=1; }
    echo "example $e: $(grep -E 'PASS|FAIL' "$out/example_$e.log" | tail -1)"
done
exit $status
