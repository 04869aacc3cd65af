#!/usr/bin/env bash
# The open issues' device work in parts, each step under its own time limit so that a slow one
# leaves the rest their time; one call runs the parts it is given, in order (a call is at most 10
# minutes: choose parts whose limits add up to less). Each part writes its logs under
# OUT_DIR/PART/ and packs them into OUT_DIR/PART.tar.gz (the device returns few files); the
# summary of every step comes last.
#   stage:  bash scripts/stage_gpu.sh; keep gpu_blas, gpu_sim_agreement and gpu_hopper in
#           .gpu/tests; strip; bash scripts/stage_baseline.sh e5860d5 (for `suites`)
#   run:    bash scripts/gpu_next.sh "PART [PART ...]" OUT_DIR
# Parts (limits in seconds):
#   agree     240  gpu_sim_agreement to its end (every registered kernel and sweep configuration on
#                  the GPU and in the simulator)
#   levers    330  (LEVERS_LIMIT) the lever runs of scripts/levers.txt (each lever checked, then timed beside cuBLAS)
#   sanitize  300  compute-sanitizer synccheck, memcheck and racecheck on `blas-bench sanitize`
#                  (SANITIZE_BIN: another staged blas-bench)
#   blas      280  (BLAS_LIMIT 180) the gpu_blas tests (the CudaBlas program, k = 0, fused epilogues and `_x` against
#                  f64); `blas-bench fused` (bf16)
#   fusedllm  120  `blas-bench fused-llm` (bf16)
#   suite     300  `rute gemm --suite midm` (bf16)
#   ncu       120  ncu on three shapes furthest from cuBLAS (NCU_SHAPES; the midm suite's three below
#                  0.95 after the fifth 2026-12-06 session), rute's kernels under NCU_RUTE_ARGS
#                  (e.g. "--config 128x96x64s7_c1x2_n" beside cuBLAS's kernel)
#   peers     300  (PEERS_LIMIT) Triton's best matmul on every sixth shape of the midm suite, beside rute's
#                  table from `suite` earlier in the same call (else the suite runs first)
#   ncufused  200  ncu (--set full) on the rute launches of `blas-bench fused --shape NCU_FUSED_SHAPE`
#                  (default 512x6144x4096, one wave of one tile a block, where a fused epilogue cost
#                  +13-15%): the first launch of each of its nine rute pieces, in their order (plain,
#                  bias+GELU, bias+SiLU, SwiGLU, residual, then the other finish of the first three
#                  (epilogue warps or consumers) and SwiGLU with its staging kept), stalls by SASS
#                  opcode, code footprints and the headline metrics
#   pairs     180  `blas-bench pairs` and `batched` (bf16): every transpose pair and the strided
#                  batches beside cuBLAS
#   fusedcfg  160  the fused epilogues with each of FUSED_CONFIGS forced (plain too; a form the
#                  schedule cannot take, SwiGLU under `_x`, in the default's), in turns, at
#                  FUSED_CFG_SHAPES (default: 4096^3, Hilbert and grouped walks under `_x`)
#   fusedab   160  the fused epilogues over plain, a baseline's blas-bench (.gpu/bin/blas-bench_before:
#                  BASELINE_BINS="rute blas-bench" bash scripts/stage_baseline.sh REV) against this
#                  build's, in turns, on FUSED_AB_SHAPES (each process times its own plain beside);
#                  FUSED_AB_BUILDS names more builds (.gpu/bin/blas-bench_NAME; default "before after")
#   suites    280  bench and llm before (.gpu/bin/rute_before) and after (no regression)
#   power      60  `blas-bench fused --shape NCU_FUSED_SHAPE` with nvidia-smi sampling the SM clock,
#                  the power draw and the active clock-throttle reasons every 50 ms (smi.csv): whether
#                  a fused form's added DRAM traffic and work meet the card's power cap
#   pairscfg  200  `blas-bench pairs --shape PAIRS_SHAPE` (default up+gate, 4096x28672x4096) with
#                  each of PAIRS_CONFIGS forced ("default": the chooser's), in turns, two rounds
#   batchedcfg 120 `blas-bench batched` (the strided batches beside cuBLAS's; BATCHED_SHAPES:
#                  `--batches` BxMxNxK,.. in place of its two) with each of
#                  BATCHED_CONFIGS forced ("default": the chooser's), in turns, two rounds (BENCH_BUILD: another staged
#                  blas-bench_NAME)
#   soak      100  `blas-bench soak`: each of SOAK_FORMS (default plain residual gelu) at SOAK_SHAPE
#                  (default 4096x4096x4096) back to back for 5 s, two rounds in turns, nvidia-smi
#                  sampled through each: the SM clock and power a form settles at on its own
#                  (does a fused form's added traffic meet the power cap and slow the clock?)
#   checks    150  (CHECKS_LIMIT) the schedules new since the last device run (CHECK_CONFIGS) against f64 on
#                  residue shapes, then compute-sanitizer's three tools (gpu_midm.sh steps 1-2)
set -uo pipefail
parts="${1:?usage: gpu_next.sh \"PART [PART ...]\" OUT_DIR}"
root="${2:-${OUT:-gpu-out}}"
here="$(cd "$(dirname "$0")" && pwd)"
export RUTE_PTXAS="${RUTE_PTXAS:-$(command -v ptxas)}"
summary="$root/summary.txt"
mkdir -p "$root"
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
# smi_start FILE: samples the SM clock, power and throttle masks every 50 ms into FILE until
# smi_stop; smi_stop FILE LABEL: one summary line of the samples the card was at least half busy.
smi_start() {
    nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,power.limit,utilization.gpu,clocks_throttle_reasons.active \
        --format=csv,nounits -lms 50 > "$1" 2>&1 &
    smi=$!
}
smi_stop() {
    kill "$smi"
    wait "$smi" 2>/dev/null
    python3 - "$1" "$2" <<'PY' | tee -a "$summary"
import csv, statistics, sys
def number(text):
    try:
        return float(text)
    except ValueError:
        return 0.0
rows = [r for r in csv.reader(open(sys.argv[1]), skipinitialspace=True) if len(r) == 7][1:]
busy = [r for r in rows if number(r[5]) >= 50]
if busy:
    clock = [number(r[1]) for r in busy]
    power = [number(r[3]) for r in busy]
    print(f"{sys.argv[2]}: {len(busy)} samples at least half busy; SM clock median {statistics.median(clock):.0f} MHz"
          f" ({min(clock):.0f}-{max(clock):.0f}); power median {statistics.median(power):.0f} W"
          f" ({min(power):.0f}-{max(power):.0f}, limit {busy[0][4]} W)")
    masks = {}
    for r in busy:
        masks[r[6]] = masks.get(r[6], 0) + 1
    print("  throttle masks:", ", ".join(f"{m} x{n}" for m, n in sorted(masks.items())))
PY
}
test_bin() { ls .gpu/tests/"$1"-* 2>/dev/null | head -1; }
# bench_bin BUILD: the staged blas-bench of BUILD ("after": this build's).
bench_bin() {
    if [ "$1" = after ]; then echo .gpu/bin/blas-bench; else echo ".gpu/bin/blas-bench_$1"; fi
}
# forced CFG: sets `config` to the arguments that force schedule CFG ("default": none).
forced() {
    config=()
    [ "$1" = default ] || config=(--config "$1")
}
for part in $parts; do
out="$root/$part"
mkdir -p "$out"
case "$part" in
agree)
    step gpu_sim_agreement "${AGREE_LIMIT:-240}" "$(test_bin gpu_sim_agreement)" --include-ignored \
        --test-threads=1 --nocapture
    ;;
levers)
    step levers "${LEVERS_LIMIT:-330}" bash "$here/gpu_levers.sh" "$out/levers"
    ;;
sanitize)
    for tool in synccheck memcheck racecheck; do
        step "sanitize_$tool" 100 compute-sanitizer --tool "$tool" --error-exitcode 99 \
            "${SANITIZE_BIN:-.gpu/bin/blas-bench}" sanitize --dtype bf16
        # Where the reports are: kernel and offset, with their counts.
        grep -oE "at [A-Za-z_0-9]+\+0x[0-9a-f]+" "$out/sanitize_$tool.log" | sort | uniq -c \
            > "$out/sanitize_${tool}_sites.txt" || true
    done
    ;;
blas)
    # The tests' f64 references take most of the time, on the device's CPU cores: 8 at once.
    step gpu_blas "${BLAS_LIMIT:-180}" "$(test_bin gpu_blas)" --include-ignored \
        --test-threads="${BLAS_THREADS:-8}" --nocapture
    step fused 100 .gpu/bin/blas-bench fused --dtype bf16 --repeats 20
    ;;
fusedllm)
    step fused_llm 120 .gpu/bin/blas-bench fused-llm --dtype bf16 --repeats 20
    ;;
suite)
    step midm_suite 300 .gpu/bin/rute gemm --suite midm --dtype bf16 --out "$out/midm_bf16.md"
    ;;
ncu)
    step ncu 120 bash "$here/gpu_ncu_shapes.sh" "$out/ncu" \
        "${NCU_SHAPES:-256x6144x24576 333x8192x29568 333x100352x4096}" bf16 "${NCU_RUTE_ARGS:-}"
    ;;
peers)
    table="$root/suite/midm_bf16.md"
    [ -f "$table" ] || table=""
    step peers "${PEERS_LIMIT:-300}" env RUTE_SUITE=midm RUTE_DTYPE=bf16 PEER_EVERY=6 RUTE_TABLE="$table" \
        bash "$here/gpu_peers.sh" "$out/peers"
    ;;
checks)
    configs="${CHECK_CONFIGS:-192x168x64s3_c1x2_n_t,192x160x64s3_c2x1_k,128x160x64s5_c1x2_n_t_z}"
    step checks "${CHECKS_LIMIT:-150}" env MIDM_STEPS="1 2" MIDM_CONFIGS="$configs" bash "$here/gpu_midm.sh" "$out/midm"
    ;;
ncufused)
    step ncu_fused 200 env NCU_COUNT=9 NCU_COMMAND=".gpu/bin/blas-bench fused --shape \
${NCU_FUSED_SHAPE:-512x6144x4096} --repeats 1" bash "$here/gpu_ncu_source.sh" "$out/ncu"
    ;;
fusedab)
    # Two rounds, the builds in turns, so that the card's drift weighs on them alike. A build
    # NAME of FUSED_AB_BUILDS is .gpu/bin/blas-bench_NAME, `after` this build's blas-bench.
    for round in 1 2; do
        for shape in ${FUSED_AB_SHAPES:-512x6144x4096 512x28672x4096 128x28672x4096 4096x4096x4096}; do
            for build in ${FUSED_AB_BUILDS:-before after}; do
                bench=$(bench_bin "$build")
                step "fused_${build}_${shape}_$round" 40 "$bench" fused --shape "$shape" \
                    --dtype bf16 --repeats 20
            done
        done
    done
    ;;
pairs)
    # Issue 30's timings of the handle beside cuBLAS: every transpose pair at 4096^3, 8192^3
    # and three LLM shapes, and the strided batches (bf16).
    # PAIRS_BUILDS names more builds (.gpu/bin/blas-bench_NAME; default "after", this build's),
    # in turns over PAIRS_ROUNDS rounds, each with the card's clock and power sampled.
    for round in $(seq "${PAIRS_ROUNDS:-1}"); do
        for build in ${PAIRS_BUILDS:-after}; do
            bench=$(bench_bin "$build")
            smi_start "$out/smi_${build}_$round.csv"
            step "pairs_${build}_$round" 120 "$bench" pairs --dtype bf16 --repeats 20
            step "batched_${build}_$round" 60 "$bench" batched --dtype bf16 --repeats 20
            smi_stop "$out/smi_${build}_$round.csv" "pairs $build $round"
        done
    done
    ;;
fusedcfg)
    # Each of FUSED_CONFIGS forced on every form (plain too), in turns, two rounds, at each of
    # FUSED_CFG_SHAPES: what a schedule's parts (an order, `_x`) do to a fused form's cost.
    for round in 1 2; do
        for shape in ${FUSED_CFG_SHAPES:-4096x4096x4096}; do
            for cfg in ${FUSED_CONFIGS:-128x256x64s3_h_x_n 128x256x64s3_x_n}; do
                step "fused_${cfg}_${shape}_$round" 40 .gpu/bin/blas-bench fused --shape "$shape" \
                    --dtype bf16 --repeats 20 --config "$cfg"
            done
        done
    done
    ;;
pairscfg)
    # The transpose pairs at PAIRS_SHAPE (M tokens; default up+gate, 4096x28672x4096) with each
    # of PAIRS_CONFIGS forced ("default": the chooser's), in turns, two rounds: one launch a
    # sample, as `pairs` times them.
    for round in 1 2; do
        for cfg in ${PAIRS_CONFIGS:-default 128x256x64s3_h_n 128x256x64s4_e128_n}; do
            forced "$cfg"
            step "pairs_${cfg}_$round" 40 .gpu/bin/blas-bench pairs --dtype bf16 --repeats 20 \
                --shape "${PAIRS_SHAPE:-4096x28672x4096}" ${config[@]+"${config[@]}"}
        done
    done
    ;;
batchedcfg)
    bench=$(bench_bin "${BENCH_BUILD:-after}")
    for round in 1 2; do
        for cfg in ${BATCHED_CONFIGS:-128x256x64s3_h_n 128x256x64s3_h_x_n 128x128x64s5_f1_p}; do
            forced "$cfg"
            step "batched_${cfg}_$round" 40 "$bench" batched --dtype bf16 --repeats 20 \
                ${config[@]+"${config[@]}"} ${BATCHED_SHAPES:+--batches "$BATCHED_SHAPES"}
        done
    done
    ;;
soak)
    for round in 1 2; do
        for form in ${SOAK_FORMS:-plain residual gelu}; do
            smi_start "$out/smi_${form}_$round.csv"
            step "soak_${form}_$round" 20 .gpu/bin/blas-bench soak --dtype bf16 \
                --shape "${SOAK_SHAPE:-4096x4096x4096}" --form "$form" --seconds 5
            smi_stop "$out/smi_${form}_$round.csv" "soak $form $round"
            grep -h "^soak" "$out/soak_${form}_$round.log" | cut -c1-120 | tee -a "$summary"
        done
    done
    ;;
power)
    smi_start "$out/smi.csv"
    step fused_power 50 .gpu/bin/blas-bench fused --shape "${NCU_FUSED_SHAPE:-4096x4096x4096}" \
        --dtype bf16 --repeats 40
    smi_stop "$out/smi.csv" power
    ;;
suites)
    step before 140 env RUTE_BIN=.gpu/bin/rute_before bash "$here/gpu_suites.sh" \
        "$out/before" "bench llm" bf16
    step after 140 bash "$here/gpu_suites.sh" "$out/after" "bench llm" bf16
    ;;
*)
    echo "unknown part $part: agree, levers, sanitize, blas, pairs, fusedllm, suite, ncu, peers, ncufused, fusedcfg, fusedab, power, pairscfg, batchedcfg, soak, suites or checks" >&2
    exit 2
    ;;
esac
tar -czf "$out.tar.gz" -C "$root" "$part"
done
echo "== $parts"
cat "$summary"
exit $status
