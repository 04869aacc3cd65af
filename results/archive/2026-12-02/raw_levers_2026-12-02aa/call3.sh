#!/usr/bin/env bash
# Two 64-column staging tiles per consumer with the late take (_e64_d2 _ql): more rounds, more shapes.
set -u
O=$OUT/aa3; mkdir -p $O
export RUTE_PTXAS=$(command -v ptxas)
t0=$(date +%s); el() { echo $(( $(date +%s)-t0 )); }
LEVER_RUNS=.gpu/levers_aa3.txt timeout 100 bash scripts/gpu_candidates.sh $O/cand > $O/cand.txt 2>&1; rc=$?; echo "cand rc=$rc $(el)s" >> $O/cand.txt
if [ $rc -eq 0 ]; then
  AB_ROUNDS=10 AB_DTYPES="bf16 f16" AB_BUDGET_S=200 bash scripts/gpu_suite_ab.sh $O/ab1 81920x256x256 64x256x64s7_f1_e128_r4_p_ql_l256_vnnf 64x256x64s7_f1_e64_d2_r4_p_ql_l256_vnnf 64x256x64s6_f1_e64_d2_r4_p_ql_l256_vnnf > $O/ab1.txt 2>&1
  AB_ROUNDS=3 AB_DTYPES="bf16 f16" AB_BUDGET_S=120 bash scripts/gpu_suite_ab.sh $O/ab2 163840x256x256,65536x256x256,81920x256x192 64x256x64s7_f1_e128_r4_p_ql_l256_vnnf 64x256x64s7_f1_e64_d2_r4_p_ql_l256_vnnf > $O/ab2.txt 2>&1
  AB_ROUNDS=3 AB_DTYPES="bf16" AB_BUDGET_S=60 bash scripts/gpu_suite_ab.sh $O/ab3 40960x256x256,163840x256x128 64x256x64s8_f1_e128_r4_p_l0_vfnf 64x256x64s8_f1_e64_d2_r4_p_l0_vfnf > $O/ab3.txt 2>&1
fi
echo "total $(el)s"
tar czf $OUT/aa3.tgz -C $OUT aa3
tail -12 $O/cand.txt | cut -c1-180
cat $O/ab1.txt $O/ab2.txt $O/ab3.txt 2>/dev/null
