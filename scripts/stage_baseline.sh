#!/usr/bin/env bash
# Builds the `rute` binary of an earlier revision (the baseline of a before/after comparison) and
# stages it as .gpu/bin/rute_before, stripped, beside the current build's .gpu/bin/rute (stage
# that first: scripts/stage_gpu.sh). The revision is built in a worktree of its own with a target
# folder of its own, so the current tree's build is left alone.
#   bash scripts/stage_baseline.sh REV        (e.g. e5860d5, the start of the mid-size work)
#   BASELINE_BINS="rute blas-bench" bash scripts/stage_baseline.sh REV   (each as NAME_before)
# Then, on the device: RUTE_BIN=.gpu/bin/rute_before bash scripts/gpu_suites.sh OUT/before ...
set -euo pipefail
cd "$(dirname "$0")/.."
rev="${1:?name the baseline revision}"
tree="${TMPDIR:-/tmp}/rute-baseline-$rev"
if [ ! -d "$tree" ]; then
    git worktree add --detach "$tree" "$rev" > /dev/null
fi
mkdir -p .gpu/bin
for bin in ${BASELINE_BINS:-rute}; do
    CARGO_TARGET_DIR="$tree-target" cargo build --release -p kernels --features gpu --bin "$bin" \
        --manifest-path "$tree/Cargo.toml"
    cp "$tree-target/release/$bin" ".gpu/bin/${bin}_before"
    strip ".gpu/bin/${bin}_before"
    echo "staged .gpu/bin/${bin}_before ($(git rev-parse --short "$rev"), $(du -h ".gpu/bin/${bin}_before" | cut -f1))"
done
