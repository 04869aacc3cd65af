#!/usr/bin/env bash
set -u
O=$OUT/z1; mkdir -p $O
export RUTE_PTXAS=$(command -v ptxas)
t0=$(date +%s); el() { echo $(( $(date +%s)-t0 )); }
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,power.limit,temperature.gpu,clocks_throttle_reasons.active --format=csv -lms 200 > $O/smi.csv 2>&1 &
smi=$!
LEVER_RUNS=.gpu/levers_z1.txt timeout 330 bash scripts/gpu_candidates.sh $O/cand > $O/cand.txt 2>&1; rc=$?; echo "cand rc=$rc $(el)s" >> $O/cand.txt
echo "== suites' method $(el)s" > $O/bench.txt
for rep in 1 2 3; do
  for c in 128x256x64s3 128x256x64s3_n 128x256x64s3_c2x1_n 128x256x64s3_c2x1_h_n; do
    [ $(el) -gt 520 ] && break
    printf '%s %s ' $rep $c >> $O/bench.txt
    timeout 40 .gpu/bin/rute gemm --m 6144 --n 6144 --k 6144 --dtype bf16 --kernel hopper_ws --config $c --bench --repeats 30 2>&1 | grep '^bench:' >> $O/bench.txt || echo FAIL >> $O/bench.txt
  done
done
kill $smi
echo "total $(el)s" >> $O/bench.txt
tar czf $OUT/z1.tgz -C $OUT z1
tail -12 $O/cand.txt | cut -c1-160
sed -E 's/bench: rute ([0-9.]+) ms .* cuBLAS ([0-9.]+) ms .* ratio ([0-9.]+).*/\1 \2 r\3/' $O/bench.txt
awk -F', ' 'NR>1 && $3+0>0 {n++; c+=$2; p+=$3} END {if(n) printf "smi samples %d: mean clock %.0f MHz, mean power %.0f W\n", n, c/n, p/n}' $O/smi.csv
sort -t, -k6 $O/smi.csv | awk -F', ' '{print $6}' | uniq -c | sort -rn | head -4
