#!/usr/bin/env bash
# Everything rute checks and times on a GPU, in one call (the device machine has no cargo: build and
# stage here with bash scripts/stage_gpu.sh, carry .gpu/, then run this there).
#   stage:  bash scripts/stage_gpu.sh -p rute-tests -p codegen-ptx -p kernels \
#               --features rute-tests/gpu,codegen-ptx/gpu,kernels/gpu
#   run:    bash scripts/gpu_run.sh [OUT_DIR]        (default: $OUT, else ./gpu-out)
# Writes tests.log, run.log and correctness.md, correctness_ref.md, sweep.md, bench.md (the
# reference), bench_tuned.md (the default, tuned) under OUT_DIR (seven files: the device tool
# brings back eight at most); prints the tables last. Exits non-zero if any GPU test or check
# failed, an expected test binary is missing, or one ran no test or ignored one.
set -uo pipefail
out="${1:-${OUT:-gpu-out}}"
mkdir -p "$out"
export RUTE_PTXAS="${RUTE_PTXAS:-$(command -v ptxas)}"
status=0
# TESTS="" skips the test binaries; SKIP_CORRECTNESS=1 the correctness suite; SWEEP="a b" picks
# the configurations swept (default: kernels::gemm::Tune::SWEEP).
# Each pattern must match a staged test binary, and each binary must run at least one test and
# ignore none: a missing binary, a run of 0 tests or an ignored GPU test is a failure, said so.
default_tests=".gpu/tests/jit_gpu-* .gpu/tests/gpu_examples-* .gpu/tests/gpu_gemm-* .gpu/tests/gpu_gemm_runtime-*"
fail() { echo "FAIL: $*" | tee -a "$out/tests.log" >&2; status=1; }
# `count passed`: the number before "passed" in libtest's `test result:` line, held in $result.
count() { echo "$result" | sed -nE "s/.* ([0-9]+) $1.*/\\1/p"; }
for pattern in ${TESTS-$default_tests}; do
    # The pattern unexpanded (no match) or a match that is not an executable: missing.
    found=0
    for t in $pattern; do
        [ -f "$t" ] && [ -x "$t" ] || continue
        found=1
        log=$(timeout 300 "$t" --include-ignored --test-threads=1 --nocapture 2>&1)
        rc=$?
        echo "$log" >> "$out/tests.log"
        result=$(echo "$log" | grep -E '^test result' | tail -1)
        echo "$(basename "$t"): ${result:-no test result (exit status $rc)}"
        [ $rc -eq 0 ] || fail "$(basename "$t") exited with status $rc"
        passed=$(count passed) failed=$(count failed) ignored=$(count ignored)
        if [ -z "$result" ]; then
            fail "$(basename "$t") printed no test result"
        elif [ $((${passed:-0} + ${failed:-0})) -eq 0 ]; then
            fail "$(basename "$t") ran no test"
        elif [ "${ignored:-0}" -ne 0 ]; then
            fail "$(basename "$t") ignored $ignored test(s)"
        fi
    done
    [ $found -eq 1 ] || fail "no test binary matches $pattern (stage it: see the top of this script)"
done
[ -x .gpu/bin/rute ] || fail ".gpu/bin/rute is missing (stage it: see the top of this script)"
# A run past the GPU's memory (A, B and D of 170000^3 f16: 161 GiB; the host holds one at a time)
# is refused before anything is allocated, naming what it needs and what the device has.
log=$(timeout 60 .gpu/bin/rute gemm --m 170000 --n 170000 --k 170000 2>&1)
rc=$?
echo "$log" >> "$out/run.log"
if [ $rc -ne 1 ] || ! echo "$log" | grep -q "of device memory"; then
    fail "rute gemm --m 170000 --n 170000 --k 170000 was not refused for device memory (exit status $rc): $log"
fi
if [ -z "${SKIP_CORRECTNESS:-}" ]; then
    # The default plans (tuned where K is a multiple of 8), then the seed's configuration.
    timeout 300 .gpu/bin/rute gemm --suite correctness --out "$out/correctness.md" >> "$out/run.log" 2>&1 || status=1
    timeout 300 .gpu/bin/rute gemm --suite correctness --config ref --out "$out/correctness_ref.md" >> "$out/run.log" 2>&1 || status=1
fi
# The tuning sweep: every named configuration, checked then timed against cuBLAS in the same
# process, at the shapes the targets name (f16 in and out, f32 sum).
echo "| config | M | N | K | rute ms | cuBLAS ms | ratio | check |" > "$out/sweep.md"
echo "|---|---:|---:|---:|---:|---:|---:|---|" >> "$out/sweep.md"
for cfg in ${SWEEP:-ref 128x128x32s4_r2_se 128x128x64s3_r2_se 128x128x64s3_r2_stsm 128x256x32s4_r2_se 128x256x32s4_r2_stsm 128x256x32s5_r2_stsm 128x256x32s6_r2_stsm 256x128x64s3_r2_stsm 256x128x32s5_r2_stsm}; do
    for shape in "4096 4096 4096" "8192 8192 8192" "81920 256 256"; do
        set -- $shape
        log=$(timeout 120 .gpu/bin/rute gemm --m $1 --n $2 --k $3 --kernel multistage --config $cfg --check --bench 2>&1)
        echo "$log" >> "$out/run.log"
        verdict=$(echo "$log" | grep -oE "PASS|FAIL" | head -1)
        [ "$verdict" = PASS ] || status=1
        times=$(echo "$log" | sed -nE 's/.*rute ([0-9.]+) ms.*cuBLAS ([0-9.]+) ms.*ratio ([0-9.]+).*/\1 | \2 | \3/p')
        echo "| $cfg | $1 | $2 | $3 | ${times:-- | - | -} | ${verdict:-ERROR} |" >> "$out/sweep.md"
    done
done
timeout 300 .gpu/bin/rute gemm --suite bench --config ref --out "$out/bench.md" >> "$out/run.log" 2>&1 || status=1
timeout 300 .gpu/bin/rute gemm --suite bench --out "$out/bench_tuned.md" >> "$out/run.log" 2>&1 || status=1
# The 28 LLM projections (hopper_ws on sm_90a where N and K allow TMA), with the geometric mean.
timeout 400 .gpu/bin/rute gemm --suite llm --out "$out/llm.md" >> "$out/run.log" 2>&1 || status=1
for f in correctness correctness_ref sweep bench bench_tuned llm; do
    [ -f "$out/$f.md" ] && { echo; tail -n 20 "$out/$f.md"; }
done
exit $status
