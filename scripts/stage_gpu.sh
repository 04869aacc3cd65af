#!/usr/bin/env bash
# Builds rute's GPU test executables, binaries and runnable examples in release mode and stages
# them in .gpu/ (git-ignored) at the repository's root, ready to copy to a machine with an NVIDIA
# GPU, which needs neither cargo nor Rust: cudarc loads libcuda at run time, so what is built here
# runs there unchanged.
#   usage: bash scripts/stage_gpu.sh [cargo args...]
#   default: -p rute-tests -p codegen-ptx -p kernels --features rute-tests/gpu,codegen-ptx/gpu,kernels/gpu
# Then, on the GPU machine, from a copy of the repository with .gpu/ in it:
#   bash scripts/gpu_run.sh OUT_DIR          (every GPU test, the correctness suite, benchmarks)
#   .gpu/examples/gemm_bias_relu             (one runnable example: its PTX, then PASS or FAIL)
set -euo pipefail
cd "$(dirname "$0")/.."
args=("$@")
if [ ${#args[@]} -eq 0 ]; then
    args=(-p rute-tests -p codegen-ptx -p kernels --features rute-tests/gpu,codegen-ptx/gpu,kernels/gpu)
fi
rm -rf .gpu && mkdir -p .gpu/tests .gpu/bin .gpu/examples
# The path of every artifact cargo reports with `"executable":"..."` on lines that match $1.
executables() { grep -- "$1" | grep -o '"executable":"[^"]*"' | sed 's/^"executable":"//; s/"$//' | sort -u; }
# Test executables (unit and integration), one file per test target; their names carry a hash.
cargo test --release --no-run --message-format=json "${args[@]}" \
    | executables '"test":true' | while read -r exe; do cp "$exe" .gpu/tests/; done
# Binaries (the rute command line tool).
cargo build --release --bins --message-format=json "${args[@]}" \
    | executables '"kind":\["bin"\]' | while read -r exe; do cp "$exe" .gpu/bin/; done
# The runnable examples of kernels/examples.
cargo build --release --examples -p kernels --message-format=json \
    | executables '"kind":\["example"\]' | while read -r exe; do cp "$exe" .gpu/examples/; done
du -sh .gpu
ls .gpu/tests .gpu/bin .gpu/examples
