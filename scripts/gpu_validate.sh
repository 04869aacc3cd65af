#!/usr/bin/env bash
# The whole correctness run of the GPU code on the device, in one call: hopper_ws's every
# configuration against f64 (with the watchdog) and the sanitizer on each, the correctness suite
# per type, and every other staged GPU test binary.
#   stage: bash scripts/stage_gpu.sh -p rute-tests -p kernels -p codegen-ptx \
#              --features rute-tests/gpu,kernels/gpu,codegen-ptx/gpu
#   run:   [VALIDATE_STEPS="configs suites tests"] bash scripts/gpu_validate.sh [OUT_DIR]
# VALIDATE_STEPS picks the steps: configs (every configuration against f64, the sanitizer),
# suites (the correctness suite per type), tests (the other GPU test binaries); all by default.
# Writes hopper_every.log, sanitize_hopper_*.log, correctness_{f16,bf16}.md and tests.log under
# OUT_DIR; prints a short summary last; exits non-zero if anything failed.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/gpu_common.sh" "$@"
steps=" ${VALIDATE_STEPS:-configs suites tests} "
if [[ $steps == *" configs "* ]]; then
    timeout 400 "$hopper" --include-ignored --test-threads=1 --nocapture every_configuration \
        > "$out/hopper_every.log" 2>&1 || fail "every_configuration (hopper_every.log)"
    bash "$here/gpu_sanitize.sh" hopper "$out" -- "$hopper" --include-ignored --test-threads=1 \
        small_shape > /dev/null || fail "compute-sanitizer (sanitize_hopper_*.log)"
fi
if [[ $steps == *" suites "* ]]; then
    for dtype in f16 bf16; do
        timeout 200 .gpu/bin/rute gemm --suite correctness --kernel hopper_ws --dtype $dtype \
            --out "$out/correctness_$dtype.md" > /dev/null 2>&1 || fail "correctness suite $dtype"
    done
fi
if [[ $steps == *" tests "* ]]; then
    "$hopper" --include-ignored --test-threads=1 host_time_to_queue >> "$out/tests.log" 2>&1 \
        || fail "host_time_to_queue_a_gemm"
    for t in .gpu/tests/*; do
        case "$t" in *gpu_hopper-*) continue ;; esac
        timeout 300 "$t" --include-ignored --test-threads=1 >> "$out/tests.log" 2>&1 || fail "$t"
    done
fi
grep -hsE "runs \(" "$out/hopper_every.log"
grep -hsE "ERROR SUMMARY|RACECHECK SUMMARY" "$out"/sanitize_hopper_*.log
grep -hscE "\| PASS \|" "$out"/correctness_*.md
grep -hsE "FAIL" "$out"/correctness_*.md | head -3
grep -sE "^test result" "$out/tests.log"
exit $status
