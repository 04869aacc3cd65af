#!/usr/bin/env bash
# Whole-B-resident 64x128 tiles (_r4x2) for the short K: f64 + sanitizers, then the suites' method.
set -u
O=$OUT/aa1; mkdir -p $O
export RUTE_PTXAS=$(command -v ptxas)
t0=$(date +%s); el() { echo $(( $(date +%s)-t0 )); }
LEVER_RUNS=.gpu/levers_aa1.txt timeout 200 bash scripts/gpu_candidates.sh $O/cand > $O/cand.txt 2>&1; rc=$?; echo "cand rc=$rc $(el)s" >> $O/cand.txt
if [ $rc -eq 0 ]; then
  AB_ROUNDS=4 AB_DTYPES="bf16 f16" AB_BUDGET_S=$((480-$(el))) bash scripts/gpu_suite_ab.sh $O/ab81920 81920x256x256 64x256x64s7_f1_e128_r4_p_ql_l256_vnnf 64x128x64s7_f1_r4x2_p_ql_l256_vnnf 64x128x64s8_f1_r4x2_p_ql_l256_vnnf 64x128x64s7_g1_f1_r4x2_p_ql_l256_vnnf > $O/ab.txt 2>&1; echo "ab rc=$? $(el)s" >> $O/ab.txt
  AB_ROUNDS=2 AB_DTYPES="bf16" AB_BUDGET_S=$((540-$(el))) bash scripts/gpu_suite_ab.sh $O/ab163840 163840x256x256 64x256x64s7_f1_e128_r4_p_ql_l256_vnnf 64x128x64s7_f1_r4x2_p_ql_l256_vnnf > $O/ab2.txt 2>&1; echo "ab2 rc=$? $(el)s" >> $O/ab2.txt
fi
tar czf $OUT/aa1.tgz -C $OUT aa1
tail -12 $O/cand.txt | cut -c1-180
cat $O/ab.txt $O/ab2.txt 2>/dev/null
