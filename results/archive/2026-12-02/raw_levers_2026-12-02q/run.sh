#!/usr/bin/env bash
set -u
O=$OUT/w; mkdir -p $O
t0=$(date +%s); el() { echo $(( $(date +%s)-t0 )); }
D=64x256x64s6_f1_e128_r4_p_l256_vnnf
LEVER_RUNS=.gpu/levers8.txt timeout 250 bash scripts/gpu_candidates.sh $O/cand > $O/cand.txt 2>&1; echo "cand rc=$? $(el)s" >> $O/cand.txt
hop=$(ls .gpu/tests/gpu_hopper-*)
{ RUTE_TRACE_CONFIGS=$D,${D}_k4,64x256x64s8_c2x1_f1_e128_r4_p_l256_vnnf RUTE_TRACE_SHAPES=81920x256x256 timeout 40 $hop --include-ignored --test-threads=1 --nocapture trace_of_the_phases
  RUTE_TRACE_CONFIGS=128x256x64s3 RUTE_TRACE_SHAPES=6144x6144x6144 timeout 40 $hop --include-ignored --test-threads=1 --nocapture trace_of_the_phases; } > $O/trace.txt 2>&1; echo "trace rc=$? $(el)s" >> $O/trace.txt
B=$(grep -E "^\| bf16 \| 81920x256x256" $O/cand/levers.log | grep -v "$D@" | sort -t'|' -k9 -r | head -2 | awk -F'|' '{print $4}' | sed 's/@.*//;s/ //g' | tr '\n' ' ')
echo "best: $B" > $O/scaling.txt
for rep in 1 2; do
  [ $(el) -gt 300 ] && break
  echo "== rep $rep"; SCALING_DTYPES="bf16 f16" SCALING_MS="81920 163840" timeout 60 bash scripts/gpu_short_k_scaling.sh $O/s_$rep $D $B
done >> $O/scaling.txt 2>&1
echo "scaling $(el)s" >> $O/scaling.txt
if [ $(el) -lt 380 ]; then
  "$hop" --include-ignored --test-threads=1 host_time_to_queue > $O/tests.log 2>&1 || echo "FAIL host_time_to_queue" >> $O/tests.log
  for t in .gpu/tests/*; do case "$t" in *gpu_hopper-*) continue ;; esac; timeout 100 "$t" --include-ignored --test-threads=1 >> $O/tests.log 2>&1 || echo "FAIL $t" >> $O/tests.log; done
fi
echo "total $(el)s" >> $O/scaling.txt
tar czf $OUT/w.tgz -C $OUT w
tail -3 $O/cand.txt; grep -E "^\| (bf16|f16) " $O/cand/levers.log | sed -E 's/@Auto \(([0-9]+) resident\)/ \1/' | cut -d'|' -f2-4,6-7,9
grep -E "^\||^trace" $O/trace.txt | cut -c1-80
sed -E 's/\| (rute|cuBLAS) [^|]*//;s/64x256x64s[68]_f1_//' $O/scaling.txt | sed -E 's/rute ([0-9.]+) ms ([0-9]+) GB.s cuBLAS ([0-9.]+) ms ratio/\2 GB\/s r/' | cut -c1-90
grep -E "^test result|FAIL" $O/tests.log
