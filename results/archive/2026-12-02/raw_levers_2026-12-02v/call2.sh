#!/usr/bin/env bash
set -u
O=$OUT/v2; mkdir -p $O
export RUTE_PTXAS=$(command -v ptxas)
t0=$(date +%s); el() { echo $(( $(date +%s)-t0 )); }
S=64x256x64s%d_f1_e128_r4_p_q_l256_vnnf
C="$(printf $S 5) $(printf $S 6) $(printf $S 7) $(printf $S 8) 64x256x64s6_f1_e128_r4_p_q_o_l256_vnnf"
LEVER_RUNS=.gpu/levers_v2.txt timeout 200 bash scripts/gpu_candidates.sh $O/cand > $O/cand.txt 2>&1; echo "cand rc=$? $(el)s" >> $O/cand.txt
for rep in 1 2 3 4; do
  [ $(el) -gt 400 ] && break
  echo "== rep $rep"; SCALING_DTYPES="bf16 f16" SCALING_MS="81920" timeout 80 bash scripts/gpu_short_k_scaling.sh $O/s_$rep $C
done > $O/scaling.txt 2>&1
for rep in 1 2; do
  [ $(el) -gt 450 ] && break
  echo "== rep L$rep"; SCALING_DTYPES="bf16 f16" SCALING_MS="163840" timeout 80 bash scripts/gpu_short_k_scaling.sh $O/l_$rep $C
done >> $O/scaling.txt 2>&1
echo "total $(el)s" >> $O/scaling.txt
tar czf $OUT/v2.tgz -C $OUT v2
tail -6 $O/cand.txt | cut -c1-160
sed -E 's/\| (rute|cuBLAS) [^|]*//' $O/scaling.txt | sed -E 's/rute ([0-9.]+) ms ([0-9]+) GB.s cuBLAS ([0-9.]+) ms ratio/\2 GB\/s r/;s/_f1_e128_r4_p_q//' | cut -c1-100
