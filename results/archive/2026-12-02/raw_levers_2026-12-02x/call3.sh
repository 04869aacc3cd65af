#!/usr/bin/env bash
set -u
O=$OUT/x3; mkdir -p $O
export RUTE_PTXAS=$(command -v ptxas)
t0=$(date +%s); el() { echo $(( $(date +%s)-t0 )); }
timeout 500 bash scripts/gpu_validate.sh $O/val > $O/val.txt 2>&1; echo "validate rc=$? $(el)s" >> $O/val.txt
C="64x256x64s7_f1_e128_r4_p_q_l256_vnnf 64x256x64s7_f1_e128_r4_p_q_l256_vfnf 64x256x64s7_f1_e128_r4_p_q_l256_vnnn 64x256x64s7_f1_e128_r4_p_q_vnnf 64x256x64s7_f1_e128_r4_p_q_l256_vnnl"
if [ $(el) -lt 470 ]; then
LEVER_RUNS=.gpu/levers_x3.txt timeout 60 bash scripts/gpu_candidates.sh $O/cand > $O/cand.txt 2>&1; rc=$?; echo "cand rc=$rc $(el)s" >> $O/cand.txt
for rep in 1 2 3; do
  [ $(el) -gt 545 ] && break
  [ $rc -eq 0 ] || break
  echo "== rep $rep"; SCALING_DTYPES="bf16 f16" SCALING_MS="81920" timeout 30 bash scripts/gpu_short_k_scaling.sh $O/s_$rep $C
done > $O/scaling.txt 2>&1
fi
echo "total $(el)s" >> $O/scaling.txt
tar czf $OUT/x3.tgz -C $OUT x3
tail -12 $O/val.txt | cut -c1-200
tail -4 $O/cand.txt | cut -c1-200
sed -E 's/\| (rute|cuBLAS) [^|]*//' $O/scaling.txt | sed -E 's/rute ([0-9.]+) ms ([0-9]+) GB.s cuBLAS ([0-9.]+) ms ratio/\2 GB\/s r/;s/_f1_e128_r4//' | cut -c1-100
