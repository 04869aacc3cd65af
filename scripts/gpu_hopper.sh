#!/usr/bin/env bash
# The warp-specialized Hopper program's device run, in one call (the device machine has no cargo:
# build and stage here, carry .gpu/, then run this there).
#   stage:  bash scripts/stage_gpu.sh -p rute-tests -p kernels --features rute-tests/gpu,kernels/gpu
#   run:    RUTE_CONFIGS=a,b,c bash scripts/gpu_hopper.sh [OUT_DIR]     (default: $OUT)
# RUTE_CONFIGS (comma-separated spellings of HopperConfig::SWEEP) narrows the configurations the
# correctness test, the sanitizer and the square timing take; without it they take the whole sweep
# (the correctness test then runs about two minutes, the square timing several).
# Writes hopper_every.log, sanitize_hopper_{memcheck,racecheck,synccheck}.log, squares.log and
# llm_f16.md, bench_f16.md under OUT_DIR (seven files: the device tool brings back eight at most);
# prints a short table last. Exits non-zero if a test, a tool or a suite failed.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/gpu_common.sh" "$@"
[ -x .gpu/bin/rute ] || { echo "FAIL: no .gpu/bin/rute (stage it: see the top of this script)" >&2; exit 1; }
# Correctness (a watchdog stops a GEMM that hangs), then the sanitizer on one small shape each.
timeout 600 "$hopper" --include-ignored --test-threads=1 --nocapture every_configuration \
    > "$out/hopper_every.log" 2>&1 || fail "every_configuration_matches_f64 (hopper_every.log)"
bash "$here/gpu_sanitize.sh" hopper "$out" -- "$hopper" --include-ignored --test-threads=1 \
    small_shape || fail "compute-sanitizer (sanitize_hopper_*.log)"
# Every configuration against cuBLAS on the squares, then the suites with the defaults.
timeout 600 "$hopper" --include-ignored --test-threads=1 --nocapture square_timing \
    > "$out/squares.log" 2>&1 || fail "square_timing_against_cublas (squares.log)"
timeout 300 .gpu/bin/rute gemm --suite llm --dtype f16 --out "$out/llm_f16.md" > /dev/null 2>&1 \
    || fail "rute gemm --suite llm"
timeout 300 .gpu/bin/rute gemm --suite bench --dtype f16 --out "$out/bench_f16.md" > /dev/null 2>&1 \
    || fail "rute gemm --suite bench"
grep -E "runs \(|test result" "$out/hopper_every.log"
grep -hE "ERROR SUMMARY|RACECHECK SUMMARY" "$out"/sanitize_hopper_*.log
grep -E "^\| (bf16|f16) " "$out/squares.log"
grep -hE "geometric mean" "$out/llm_f16.md" "$out/bench_f16.md"
exit $status
