#!/usr/bin/env bash
# rute's BLAS handle and row-major API on a GPU, in one call (the device machine has no cargo:
# build and stage here, carry .gpu/, run this there):
#   stage:  bash scripts/stage_gpu.sh -p rute-tests -p codegen-ptx -p kernels \
#               --features rute-tests/gpu,codegen-ptx/gpu,kernels/gpu
#   run:    bash scripts/gpu_blas.sh [OUT_DIR] [DTYPE] [REPEATS]   (defaults: $OUT or gpu-out, bf16, 20)
# Writes under OUT_DIR: blas_tests.log (the gpu_blas tests: a program written against cudarc's
# Gemm trait run with CudaBlas and kernels::Blas, refusals, fused epilogues against f64),
# blas_bench.md (every transpose pair, strided batches and fused epilogues beside cuBLAS and
# cuBLASLt, the fused epilogues again over the LLM suite's 28 shapes, D in f32 beside the 16-bit
# D; the first call of each case in a fresh process with the driver's JIT cache cold, then warm;
# the warm-up call) and sanitize.log (compute-sanitizer's memcheck, racecheck and synccheck on
# one small call through each new path, the fused epilogues on a prefill and a decode batch, D
# in the input type and in f32). SKIP_TESTS=1, SKIP_BENCH=1 or SKIP_SANITIZE=1 leave those parts
# out; BLAS_SECTIONS="..." runs only the bench sections named (see below). Exits non-zero if a
# test, a timing run or a sanitizer tool failed.
set -uo pipefail
out="${1:-${OUT:-gpu-out}}"
dtype="${2:-bf16}"
repeats="${3:-20}"
mkdir -p "$out"
export RUTE_PTXAS="${RUTE_PTXAS:-$(command -v ptxas)}"
status=0
fail() { echo "FAIL: $*" | tee -a "$out/blas_tests.log" >&2; status=1; }
bench=.gpu/bin/blas-bench
[ -x "$bench" ] || { echo "FAIL: no $bench (stage it: see the top of this script)" >&2; exit 1; }
tests=$(ls .gpu/tests/gpu_blas-* 2>/dev/null | head -1)
if [ -n "${SKIP_TESTS:-}" ]; then
    :
elif [ -x "$tests" ]; then
    log=$(timeout 300 "$tests" --include-ignored --test-threads=1 --nocapture 2>&1)
    rc=$?
    echo "$log" > "$out/blas_tests.log"
    result=$(echo "$log" | grep -E '^test result' | tail -1)
    echo "gpu_blas: ${result:-no test result (exit status $rc)}"
    [ $rc -eq 0 ] || fail "gpu_blas exited with status $rc"
    echo "$result" | grep -q " 0 ignored" || fail "gpu_blas ignored tests or ran none"
else
    fail "no .gpu/tests/gpu_blas-* (stage it: see the top of this script)"
fi
md="$out/blas_bench.md"
: > "$md"
run() { # [LIMIT=S] run TITLE ARGS...: a section of the bench (S seconds at most, default 300), its table appended to blas_bench.md
    local title="$1"; shift
    echo -e "\n## $title\n" >> "$md"
    timeout "${LIMIT:-300}" "$bench" "$@" >> "$md" 2>&1 || fail "blas-bench $* (see $md)"
}
# The bench's sections, in order; BLAS_SECTIONS picks some (a device call is 10 minutes at
# most: "first-call prepare pairs batched" in one, "fused fused-llm out-f32" in another).
sections="${BLAS_SECTIONS:-first-call prepare pairs batched fused fused-llm out-f32}"
[ -n "${SKIP_BENCH:-}" ] && sections=""
for section in $sections; do
    case "$section" in
    first-call)
        # Each case in a fresh process, the driver's JIT cache in a fresh folder (cold), then
        # the same folder again (warm).
        cache=$(mktemp -d)
        echo -e "## First call ($dtype): cold, then warm driver cache\n" >> "$md"
        for when in cold warm; do
            for case in tn nn odd batched fused; do
                echo -n "$when: " >> "$md"
                CUDA_CACHE_PATH="$cache" timeout 120 "$bench" first-call "$case" --dtype "$dtype" >> "$md" 2>&1 \
                    || fail "blas-bench first-call $case ($when)"
            done
        done
        rm -rf "$cache" ;;
    prepare) run "Warm-up call (prepare)" prepare --dtype "$dtype" ;;
    pairs) run "Transpose pairs ($dtype)" pairs --dtype "$dtype" --repeats "$repeats" ;;
    batched) run "Strided batches ($dtype)" batched --dtype "$dtype" --repeats "$repeats" ;;
    fused) run "Fused epilogues ($dtype)" fused --dtype "$dtype" --repeats "$repeats" ;;
    fused-llm) LIMIT=600 run "Fused epilogues over the LLM suite ($dtype)" fused-llm --dtype "$dtype" --repeats "$repeats" ;;
    out-f32) run "D in f32 ($dtype)" out-f32 --dtype "$dtype" --repeats "$repeats" ;;
    *) fail "unknown section $section (BLAS_SECTIONS)" ;;
    esac
done
if [ -z "${SKIP_SANITIZE:-}" ]; then
    for tool in memcheck racecheck synccheck; do
        echo "== $tool" >> "$out/sanitize.log"
        timeout 300 compute-sanitizer --tool "$tool" --error-exitcode 99 "$bench" sanitize --dtype "$dtype" \
            >> "$out/sanitize.log" 2>&1
        rc=$?
        summary=$(grep -E "(ERROR|RACECHECK) SUMMARY" "$out/sanitize.log" | tail -1)
        echo "sanitize $tool: exit $rc; ${summary:-no summary}"
        [ $rc -eq 0 ] || fail "compute-sanitizer $tool (see $out/sanitize.log)"
    done
fi
cat "$md"
exit $status
