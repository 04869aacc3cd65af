#!/usr/bin/env bash
# One device call that checks a build end to end, in steps (STEPS, default all of them):
#   suites   `rute gemm --suite S --dtype D` for bench and llm, bf16 and f16 (scripts/gpu_suites.sh),
#            with no tuning records (RUTE_TUNING_FILE points at an empty file)
#   sanitize compute-sanitizer memcheck, racecheck and synccheck on gpu_hopper's small shapes of
#            the schedules SANITIZE_CONFIGS names (comma-separated; default: the sweep)
#   tests    the GPU test binaries staged in .gpu/tests (each with --include-ignored), but those
#            SKIP_TESTS names (default gpu_hopper: its timing loops alone outlast a call; its
#            correctness and sanitizer runs are scripts/gpu_validate.sh's)
#   examples the runnable examples staged in .gpu/examples (each prints PASS or FAIL)
#   tune     `rute tune` on TUNE_SHAPE (MxNxK), then `rute gemm --check --bench` in a fresh
#            process, which must say its schedule came from the record
# Stage first: bash scripts/stage_gpu.sh (then keep only the gpu_* tests to fit the transfer).
#   [STEPS="suites sanitize tests examples tune"] bash scripts/gpu_check_all.sh OUT_DIR
# Everything goes into OUT_DIR/check.tar.gz (the device returns few files); a short summary last.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:-${OUT:-gpu-out}}"
work="$out/check"
mkdir -p "$work"
export RUTE_PTXAS="${RUTE_PTXAS:-$(command -v ptxas)}"
steps=" ${STEPS:-suites sanitize tests examples tune} "
status=0
fail() { echo "FAIL: $*" >&2; status=1; }
summary="$work/summary.txt"
: > "$summary"
if [[ $steps == *" suites "* ]]; then
    : > "$work/no_records.txt"
    RUTE_TUNING_FILE="$work/no_records.txt" bash "$here/gpu_suites.sh" "$work/suites" \
        "bench llm" "bf16 f16" >> "$summary" 2>&1 || fail "suites"
fi
if [[ $steps == *" sanitize "* ]]; then
    hopper=$(ls .gpu/tests/gpu_hopper-* | head -1)
    # gpu_hopper reads the schedules from RUTE_CONFIGS where it is set, else runs the sweep.
    configs=()
    [ -n "${SANITIZE_CONFIGS:-}" ] && configs=("RUTE_CONFIGS=$SANITIZE_CONFIGS")
    env "${configs[@]}" bash "$here/gpu_sanitize.sh" hopper "$work" -- "$hopper" \
        --include-ignored --test-threads=1 small_shape >> "$summary" 2>&1 || fail "sanitizer"
fi
if [[ $steps == *" tests "* ]]; then
    for t in .gpu/tests/*; do
        name=$(basename "$t" | sed 's/-[0-9a-f]*$//')
        [[ " ${SKIP_TESTS-gpu_hopper} " == *" $name "* ]] && continue
        timeout 300 "$t" --include-ignored --test-threads=1 > "$work/test_$name.log" 2>&1 \
            || fail "test $name"
        echo "$name: $(grep -E '^test result' "$work/test_$name.log" | tail -1)" >> "$summary"
    done
fi
if [[ $steps == *" examples "* ]]; then
    for e in .gpu/examples/*; do
        name=$(basename "$e")
        [ "$name" = sim_bench ] && continue
        timeout 120 "$e" > "$work/example_$name.log" 2>&1 || fail "example $name"
        echo "example $name: $(grep -E 'PASS|FAIL' "$work/example_$name.log" | tail -1)" >> "$summary"
    done
fi
if [[ $steps == *" tune "* ]]; then
    IFS=x read -r m n k <<< "${TUNE_SHAPE:-150x7168x20480}"
    export RUTE_TUNING_FILE="$work/tuning.txt"
    rm -f "$RUTE_TUNING_FILE"
    .gpu/bin/rute gemm --m "$m" --n "$n" --k "$k" --dtype bf16 --check --bench \
        > "$work/tune_before.log" 2>&1 || fail "gemm before tune"
    timeout 300 .gpu/bin/rute tune --m "$m" --n "$n" --k "$k" --dtype bf16 \
        > "$work/tune.log" 2>&1 || fail "rute tune"
    .gpu/bin/rute gemm --m "$m" --n "$n" --k "$k" --dtype bf16 --check --bench \
        > "$work/tune_after.log" 2>&1 || fail "gemm after tune"
    {
        echo "tune $m x $n x $k:"
        grep -hE "schedule|ratio|recorded" "$work/tune_before.log" "$work/tune.log" \
            "$work/tune_after.log" | cut -c1-200
    } >> "$summary"
fi
tar -czf "$out/check.tar.gz" -C "$out" check
cat "$summary"
exit $status
