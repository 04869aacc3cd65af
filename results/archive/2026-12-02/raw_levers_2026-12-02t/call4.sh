#!/usr/bin/env bash
set -u
O=$OUT/y; mkdir -p $O
export RUTE_PTXAS=$(command -v ptxas)
t0=$(date +%s); el() { echo $(( $(date +%s)-t0 )); }
D=64x256x64s6_f1_e128_r4_p_l256_vnnf
Q=64x256x64s6_f1_e128_r4_p_q_l256_vnnf
LEVER_RUNS=.gpu/levers21b.txt timeout 250 bash scripts/gpu_candidates.sh $O/cand > $O/cand.txt 2>&1; echo "cand rc=$? $(el)s" >> $O/cand.txt
hop=$(ls .gpu/tests/gpu_hopper-*)
RUTE_TRACE_CONFIGS=$D,$Q RUTE_TRACE_SHAPES=81920x256x256 timeout 40 $hop --include-ignored --test-threads=1 --nocapture trace_of_the_phases > $O/trace.txt 2>&1; echo "trace rc=$? $(el)s" >> $O/trace.txt
B=$(grep -E "^\| bf16 \| 81920x256x256" $O/cand/levers.log | grep -v "$D@" | sort -t'|' -k9 -r | head -1 | awk -F'|' '{print $4}' | sed 's/@.*//;s/ //g')
echo "best: $B" > $O/scaling.txt
for rep in 1 2 3; do
  [ $(el) -gt 330 ] && break
  echo "== rep $rep"; SCALING_DTYPES="bf16 f16" SCALING_MS="81920 163840" timeout 60 bash scripts/gpu_short_k_scaling.sh $O/s_$rep $D ${B:-$Q}
done >> $O/scaling.txt 2>&1
[ $(el) -lt 400 ] && SCALING_MS="8448 40960" timeout 40 bash scripts/gpu_short_k_scaling.sh $O/s_small $D ${B:-$Q} >> $O/scaling.txt 2>&1
echo "total $(el)s" >> $O/scaling.txt
tar czf $OUT/y.tgz -C $OUT y
tail -4 $O/cand.txt; grep -E "^\| (bf16|f16) " $O/cand/levers.log | sed -E 's/@Auto \(([0-9]+) resident\)/ \1/' | cut -d'|' -f2-4,6-7,9
grep -E "^\||^trace" $O/trace.txt | cut -c1-100
sed -E 's/\| (rute|cuBLAS) [^|]*//' $O/scaling.txt | sed -E 's/rute ([0-9.]+) ms ([0-9]+) GB.s cuBLAS ([0-9.]+) ms ratio/\2 GB\/s r/' | cut -c1-100
