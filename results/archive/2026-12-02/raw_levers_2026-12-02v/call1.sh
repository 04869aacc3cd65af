#!/usr/bin/env bash
set -u
O=$OUT/v1; mkdir -p $O
export RUTE_PTXAS=$(command -v ptxas)
t0=$(date +%s); el() { echo $(( $(date +%s)-t0 )); }
D=64x256x64s8_f1_e128_r4_p_q_l256_vnnf
P=64x256x64s8_f1_e128_r4_p_l256_vnnf
LEVER_RUNS=scripts/levers.txt timeout 300 bash scripts/gpu_candidates.sh $O/cand > $O/cand.txt 2>&1; echo "cand rc=$? $(el)s" >> $O/cand.txt
hop=$(ls .gpu/tests/gpu_hopper-*)
B=$(grep -E "^\| bf16 \| 81920x256x256" $O/cand/levers.log | grep -v "$D@" | sort -t'|' -k9 -r | head -1 | awk -F'|' '{print $4}' | sed 's/@.*//;s/ //g')
RUTE_TRACE_CONFIGS=$D,${B:-$P} RUTE_TRACE_SHAPES=81920x256x256 timeout 40 $hop --include-ignored --test-threads=1 --nocapture trace_of_the_phases > $O/trace.txt 2>&1; echo "trace rc=$? $(el)s" >> $O/trace.txt
echo "best: $B" > $O/scaling.txt
for rep in 1 2 3; do
  [ $(el) -gt 450 ] && break
  echo "== rep $rep"; SCALING_DTYPES="bf16 f16" SCALING_MS="81920 163840" timeout 60 bash scripts/gpu_short_k_scaling.sh $O/s_$rep $D ${B:-$P}
done >> $O/scaling.txt 2>&1
echo "total $(el)s" >> $O/scaling.txt
tar czf $OUT/v1.tgz -C $OUT v1
tail -12 $O/cand.txt | cut -c1-160; grep -E "^\| (bf16|f16) " $O/cand/levers.log | sed -E 's/@Auto \(([0-9]+) resident\)/ \1/' | cut -d'|' -f2-4,6-7,9
grep -E "^\||^trace" $O/trace.txt | cut -c1-100
sed -E 's/\| (rute|cuBLAS) [^|]*//' $O/scaling.txt | sed -E 's/rute ([0-9.]+) ms ([0-9]+) GB.s cuBLAS ([0-9.]+) ms ratio/\2 GB\/s r/' | cut -c1-100
