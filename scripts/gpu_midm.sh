#!/usr/bin/env bash
# The mid-size M schedules (results/midm.md) on the device, in one call of about five minutes:
#   1. correctness against f64 of every new schedule (MIDM_CONFIGS), f16 and bf16, on the
#      residue shapes of gpu_hopper's every_configuration and on MIDM_CHECK_SHAPES (the tokens
#      past a tile's residue, weights and K with residues), stream-K as launched and forced;
#   2. compute-sanitizer memcheck, racecheck and synccheck on a small shape of each (whole and
#      shared out by stream-K);
#   3. the defaults the chooser now gives (its few-token rows, the model's swapped tiles and
#      streamed walks) through `rute gemm --check`, the runtime's own launch and workspace, on
#      MIDM_DEFAULT_SHAPES;
#   4. candidates against cuBLAS on the worst shapes of the ncu findings and of each new row
#      (gpu_hopper's interleaved_levers: a group's levers and cuBLAS in shuffled rounds, each
#      checked against cuBLAS first), MIDM_DTYPE (default bf16); optionally (MIDM_SUITE=1) the
#      whole `rute gemm --suite midm` after;
# then prints a table last: per shape, the old default's ratio to cuBLAS, the new default's, and
# the best candidate's.
#
#   stage (here): bash scripts/stage_gpu.sh -p rute-tests -p kernels \
#                     --features rute-tests/gpu,kernels/gpu
#   run (device): [MIDM_DTYPE=bf16] [MIDM_STEPS="1 2 3 4"] [MIDM_SUITE=1] [MIDM_CONFIGS=a,b] \
#                     [MIDM_GROUPS="..."] bash scripts/gpu_midm.sh [OUT_DIR]
# MIDM_STEPS picks the steps (a second call of timing only: MIDM_STEPS=4).
# Writes midm_every.log, sanitize_midm_{memcheck,racecheck,synccheck}.log, defaults.log,
# levers.log (and suite_midm.md with MIDM_SUITE=1) under OUT_DIR. Exits non-zero if a check,
# a sanitizer tool or a timing group failed (the timing runs whatever the checks say: a group
# whose lever is wrong stops at that lever's check against cuBLAS, and says so).
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/gpu_common.sh" "$@"
rute="${RUTE_BIN:-.gpu/bin/rute}"
[ -x "$rute" ] || fail "$rute is missing (stage it: see the top of this script)"
dtype="${MIDM_DTYPE:-bf16}"
t0=$(date +%s)
took() { echo "$(( $(date +%s) - t0 ))s"; }

# The schedules new in this range: the few-token row at three token widths (and its 4-block
# cluster and one-block variants), the 209-256 row, the model's two swapped widths and its
# streamed walks of 128x256 and 128x64 tiles.
configs="${MIDM_CONFIGS:-128x160x64s5_c2x1_f1_l256_vfln_k_t,128x208x64s4_c2x1_f1_l256_vfln_k_t,128x256x64s4_f1_e128_l256_vlfn_k,128x176x64s4_n_t,128x256x64s3_k,128x64x64s8_k}"
# Residues of the tokens on each token width (129 on 144, 150 on 160, 209 past 208, 257 and 333
# on two swapped tiles, 449 on 224), of the weights (N = 8 past a 128-row tile) and of K.
check_shapes="${MIDM_CHECK_SHAPES:-150x4104x12808,129x1032x1000,201x2056x4104,209x1032x4104,257x2056x1000,333x4104x3080,449x1032x2056,1200x1288x1032}"

steps="${MIDM_STEPS:-1 2 3 4}"
step() { [[ " $steps " == *" $1 "* ]]; }

# ---- 1. Correctness against f64 ----
if step 1; then
    RUTE_CONFIGS="$configs" RUTE_EXTRA_SHAPES="$check_shapes" timeout 300 "$hopper" \
        --include-ignored --test-threads=1 --nocapture every_configuration \
        > "$out/midm_every.log" 2>&1 || fail "every_configuration (midm_every.log)"
    echo "1. correctness: $(grep -hE 'runs \(|panicked' "$out/midm_every.log" | head -2) [$(took)]"
fi

# ---- 2. compute-sanitizer on a small shape of each ----
if step 2; then
    RUTE_CONFIGS="$configs" bash "$here/gpu_sanitize.sh" midm "$out" -- "$hopper" \
        --include-ignored --test-threads=1 small_shape || fail "compute-sanitizer (sanitize_midm_*.log)"
    echo "2. sanitizer [$(took)]"
fi

# ---- 3. The chooser's defaults through the runtime ----
step 3 && for shape in ${MIDM_DEFAULT_SHAPES:-150x7168x20480 130x4096x12800 200x59136x8192 256x6144x24576 333x16384x3072 448x7168x20480 1200x5120x13824 4096x192x8192}; do
    IFS=x read -r m n k <<< "$shape"
    line=$(timeout 120 "$rute" gemm --m "$m" --n "$n" --k "$k" --dtype "$dtype" --check 2>&1)
    rc=$?
    echo "$line" >> "$out/defaults.log"
    [ $rc -eq 0 ] || fail "rute gemm --check $shape (defaults.log)"
done
step 3 && echo "3. defaults: $(grep -c 'PASS' "$out/defaults.log") PASS, $(grep -c 'FAIL' "$out/defaults.log") FAIL [$(took)]"

# ---- 4. Candidates against cuBLAS ----
# Groups of `SHAPES LEVERS`: the first lever is the default before this work, the second the
# chooser's now, the rest its neighbours (a lever's spelling fixes the tokens' tile width, so
# each group's shapes share one). The first group's default is unchanged (M up to 128 keeps
# its measured rows): it is timed twice, the two ratios its noise, beside the few-token row's
# schedule extended down to M = 100.
groups="${MIDM_GROUPS:-
100x6144x24576 128x48x64s8_f1_l256_vlfn,128x48x64s8_f1_l256_vlfn,128x112x64s6_c2x1_f1_l256_vfln_k_t,128x112x64s6_f1_l256_vfln_k_t
150x7168x20480,160x92544x4096 128x128x64s6_n,128x160x64s5_c2x1_f1_l256_vfln_k_t,128x160x64s5_f1_l256_vfln_k_t,128x160x64s5_c4x1_f1_l256_vfln_k_t,128x160x64s5_c2x1_f1_vfln_k_t,128x160x64s5_c2x1_f1_l256_vfln_t,128x160x64s5_c2x1_l256_vfln_k_t,128x256x64s4_f1_e128_l256_vlfn_k,64x160x128s3_f1_vfln_t,64x160x128s3_f1_vfln_k_t
130x4096x12800,144x8192x29568 128x64x64s8_n,128x144x64s5_c2x1_f1_l256_vfln_k_t,128x144x64s5_f1_l256_vfln_k_t,128x144x64s5_c2x1_f1_vfln_k_t,128x128x64s6_n,64x144x64s8_f1_vfln_k_t,64x144x128s4_f1_vfln_t
200x8192x32768,200x59136x8192 128x128x64s6_n,128x208x64s4_c2x1_f1_l256_vfln_k_t,128x208x64s4_f1_l256_vfln_k_t,128x256x64s4_f1_e128_l256_vlfn_k,128x224x64s4_e112_n
256x6144x24576,256x256000x2304 128x128x64s6_n,128x256x64s4_f1_e128_l256_vlfn_k,128x256x64s4_f1_e128_vlfn_k,128x256x64s4_e128_k,128x256x64s3_c2x1_f1_l256_vfln_k_t,128x256x64s3_h_n
333x16384x3072,333x8192x29568 128x192x64s4_n,128x176x64s4_n_t,128x176x64s4_f1_n_t,128x176x64s4_c2x1_n_t,128x176x64s4_k_t,128x128x64s6_n
448x7168x20480 128x224x64s4_e112_n,128x224x64s3_k_t,128x224x64s3_n_t,128x224x64s4_e112_k,128x256x64s3_k
1200x5120x13824,1280x8192x29568 128x224x64s4_e112_n,128x256x64s3_k,128x256x64s4_e128_k,128x256x64s3_h_n,256x160x64s3_e80_n
}"
step 4 && echo "$groups" | while read -r shapes levers; do
    [ -n "$shapes" ] || continue
    echo "== $shapes $levers" >> "$out/levers.log"
    RUTE_DTYPE="$dtype" RUTE_LEVERS="$levers" RUTE_LEVER_SHAPES="$shapes" timeout 150 "$hopper" \
        --include-ignored --test-threads=1 --nocapture interleaved_levers >> "$out/levers.log" 2>&1 \
        || echo "FAIL: levers on $shapes (levers.log)" | tee -a "$out/levers.log" >&2
done
if step 4; then
    grep -q "^FAIL: levers" "$out/levers.log" && status=1
    echo "4. levers: $(grep -c "^| $dtype " "$out/levers.log") timed [$(took)]"
fi

if [ -n "${MIDM_SUITE:-}" ]; then
    timeout 400 "$rute" gemm --suite midm --dtype "$dtype" --out "$out/suite_midm.md" \
        > "$out/suite_midm.log" 2>&1 || fail "rute gemm --suite midm (suite_midm.log)"
    tail -3 "$out/suite_midm.md"
fi

# ---- The table: per shape, the old default, the new one and the best candidate ----
grep -hE "ERROR SUMMARY|RACECHECK SUMMARY" "$out"/sanitize_midm_*.log 2>/dev/null | sort | uniq -c
[ -f "$out/levers.log" ] && awk -v dt="$dtype" '
/^== / { split($3, lv, ","); old = lv[1]; new = lv[2]; next }
$0 ~ "^\\| " dt " \\|" {
    n = split($0, f, "|")
    shape = f[3]; gsub(/ /, "", shape)
    lever = f[4]; sub(/^ /, "", lever); sub(/@.*/, "", lever)
    ratio = f[n - 1] + 0
    if (!(shape in seen)) { seen[shape] = 1; order[++shapes] = shape }
    if (lever == old) o[shape] = ratio
    if (lever == new) w[shape] = ratio
    if (ratio > best[shape]) { best[shape] = ratio; which[shape] = lever }
}
END {
    printf "| %s | old default | new default | best candidate |\n|---|---:|---:|---|\n", "shape (" dt ")"
    for (i = 1; i <= shapes; i++) {
        s = order[i]
        printf "| %s | %s | %s | %s %.3f |\n", s, (s in o) ? sprintf("%.3f", o[s]) : "-",
            (s in w) ? sprintf("%.3f", w[s]) : "-", which[s], best[s]
    }
}' "$out/levers.log"
echo "[$(took)]"
exit $status
