#!/usr/bin/env bash
set -u
O=$OUT/v4; mkdir -p $O
export RUTE_PTXAS=$(command -v ptxas)
t0=$(date +%s); el() { echo $(( $(date +%s)-t0 )); }
D=64x256x64s7_f1_e128_r4_p_q_l256_vnnf
A=64x256x64s7_f1_e128_r4_p_q_a%d_l256_vnnf
C="$D $(printf $A 1) $(printf $A 2) $(printf $A 3)"
LEVER_RUNS=.gpu/levers_v4.txt timeout 200 bash scripts/gpu_candidates.sh $O/cand > $O/cand.txt 2>&1; rc=$?; echo "cand rc=$rc $(el)s" >> $O/cand.txt
if [ $rc -eq 0 ]; then
hop=$(ls .gpu/tests/gpu_hopper-*)
RUTE_TRACE_CONFIGS=$D,$(printf $A 2) RUTE_TRACE_SHAPES=81920x256x256 timeout 40 $hop --include-ignored --test-threads=1 --nocapture trace_of_the_phases > $O/trace.txt 2>&1; echo "trace rc=$? $(el)s" >> $O/trace.txt
for rep in 1 2 3 4; do
  [ $(el) -gt 150 ] && break
  echo "== rep $rep"; SCALING_DTYPES="bf16 f16" SCALING_MS="81920" timeout 80 bash scripts/gpu_short_k_scaling.sh $O/s_$rep $C
done > $O/scaling.txt 2>&1
for rep in 1 2; do
  [ $(el) -gt 170 ] && break
  echo "== rep L$rep"; SCALING_DTYPES="bf16 f16" SCALING_MS="163840" timeout 80 bash scripts/gpu_short_k_scaling.sh $O/l_$rep $C
done >> $O/scaling.txt 2>&1
[ $(el) -lt 180 ] && { echo "== small"; SCALING_MS="8448 40960" timeout 60 bash scripts/gpu_short_k_scaling.sh $O/small $C; } >> $O/scaling.txt 2>&1
fi
echo "total $(el)s" >> $O/scaling.txt
tar czf $OUT/v4.tgz -C $OUT v4
tail -8 $O/cand.txt | cut -c1-200
grep -E "^\||^trace" $O/trace.txt | cut -c1-100
sed -E 's/\| (rute|cuBLAS) [^|]*//' $O/scaling.txt | sed -E 's/rute ([0-9.]+) ms ([0-9]+) GB.s cuBLAS ([0-9.]+) ms ratio/\2 GB\/s r/;s/_f1_e128_r4_p//;s/_l256_vnnf//' | cut -c1-100
