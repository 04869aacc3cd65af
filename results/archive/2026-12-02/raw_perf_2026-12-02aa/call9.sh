#!/usr/bin/env bash
# The final build: the suites (scripts/gpu_perf.sh), then the bench suite once more per type.
set -u
O=$OUT/aa9; mkdir -p $O
export RUTE_PTXAS=$(command -v ptxas)
t0=$(date +%s); el() { echo $(( $(date +%s)-t0 )); }
timeout 300 bash scripts/gpu_perf.sh $O > $O/perf.txt 2>&1; echo "perf rc=$? $(el)s" >> $O/perf.txt
for dt in bf16 f16; do
  timeout 40 .gpu/bin/rute gemm --suite bench --dtype $dt --out $O/bench2_$dt.md > /dev/null 2>&1; echo "bench2 $dt rc=$? $(el)s" >> $O/perf.txt
done
tar czf $OUT/aa9.tgz -C $OUT aa9
cat $O/perf.txt | cut -c1-200 | tail -46
for f in $O/bench2_*.md; do grep -hE "^\| (81920|4096|6144|8192|2048) " $f | cut -d'|' -f2-5,12-13,16; done
grep -hE "geometric|smallest|^\| (8192|16384) \| (8192|6144|10240|28672) " $O/perf/llm_bf16.md | cut -c1-160 | head -12
