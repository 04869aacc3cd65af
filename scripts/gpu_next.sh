#!/usr/bin/env bash
# The open issues' device work in parts that each fit one device call (10 minutes), the most
# decision-relevant first, every step under its own time limit so that a slow one leaves the
# rest their time. Each part writes its logs under OUT_DIR/PART/, packs them into
# OUT_DIR/PART.tar.gz (the device returns few files) and prints a summary last.
#   stage:  bash scripts/stage_gpu.sh; keep gpu_blas, gpu_sim_agreement and gpu_hopper in
#           .gpu/tests; strip; bash scripts/stage_baseline.sh e5860d5 (for `suites`)
#   run:    bash scripts/gpu_next.sh PART OUT_DIR
# Parts (a session of 30 device minutes runs three, back to back where it can):
#   midm     the lever runs of scripts/levers.txt, then ncu on the shapes furthest from cuBLAS
#   correct  gpu_sim_agreement to its end (every registered kernel and sweep configuration on the
#            GPU and in the simulator); compute-sanitizer (synccheck, memcheck, racecheck) on
#            `blas-bench sanitize`
#   perf     the gpu_blas tests (the CudaBlas program, k = 0, fused epilogues and `_x` against
#            f64); `rute gemm --suite midm` (bf16); `blas-bench fused` and `fused-llm` (bf16)
#   suites   bench and llm before (.gpu/bin/rute_before) and after (no regression)
set -uo pipefail
part="${1:?usage: gpu_next.sh midm|correct|perf|suites OUT_DIR}"
out="${2:-${OUT:-gpu-out}}/$part"
here="$(cd "$(dirname "$0")" && pwd)"
mkdir -p "$out"
export RUTE_PTXAS="${RUTE_PTXAS:-$(command -v ptxas)}"
summary="$out/summary.txt"
: > "$summary"
status=0
# step NAME SECONDS COMMAND...: runs COMMAND under the limit, its output in NAME.log, one
# summary line (the exit status, and the log's last "test result" or summary line).
step() {
    local name="$1" limit="$2"
    shift 2
    local start rc last
    start=$(date +%s)
    timeout "$limit" "$@" > "$out/$name.log" 2>&1
    rc=$?
    last=$(grep -E "^test result|SUMMARY|geometric mean|^FAIL" "$out/$name.log" | tail -1)
    echo "$name: exit $rc in $(($(date +%s) - start)) s; ${last:-see $name.log}" | tee -a "$summary"
    [ $rc -eq 0 ] || status=1
}
test_bin() { ls .gpu/tests/"$1"-* 2>/dev/null | head -1; }
case "$part" in
midm)
    step levers 400 bash "$here/gpu_levers.sh" "$out/levers"
    step ncu 170 bash "$here/gpu_ncu_shapes.sh" "$out/ncu" \
        "256x7680x5120 288x4096x12800 333x4672x4544 65x102400x2048 176x102400x2048" bf16
    ;;
correct)
    step gpu_sim_agreement 240 "$(test_bin gpu_sim_agreement)" --include-ignored \
        --test-threads=1 --nocapture
    for tool in synccheck memcheck racecheck; do
        step "sanitize_$tool" 110 compute-sanitizer --tool "$tool" --error-exitcode 99 \
            .gpu/bin/blas-bench sanitize --dtype bf16
    done
    ;;
perf)
    step gpu_blas 120 "$(test_bin gpu_blas)" --include-ignored --test-threads=1 --nocapture
    step midm_suite "${SUITE_LIMIT:-250}" .gpu/bin/rute gemm --suite midm --dtype bf16 \
        --out "$out/midm_bf16.md"
    step fused 100 .gpu/bin/blas-bench fused --dtype bf16 --repeats 20
    step fused_llm "${FUSED_LLM_LIMIT:-120}" .gpu/bin/blas-bench fused-llm --dtype bf16 --repeats 20
    ;;
suites)
    step before 140 env RUTE_BIN=.gpu/bin/rute_before bash "$here/gpu_suites.sh" \
        "$out/before" "bench llm" bf16
    step after 140 bash "$here/gpu_suites.sh" "$out/after" "bench llm" bf16
    ;;
*)
    echo "unknown part $part: midm, correct, perf or suites" >&2
    exit 2
    ;;
esac
tar -czf "$out.tar.gz" -C "$(dirname "$out")" "$part"
echo "== $part"
cat "$summary"
exit $status
