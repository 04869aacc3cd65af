#!/usr/bin/env bash
# The new defaults (evened waves) against f64 and under the three sanitizers, then the suites
# (scripts/gpu_perf.sh: bench in bf16 and f16, llm in bf16, llm in f16 beside Triton), then
# the correctness suite while time is left.
set -u
O=$OUT/z4; mkdir -p $O
export RUTE_PTXAS=$(command -v ptxas)
t0=$(date +%s); el() { echo $(( $(date +%s)-t0 )); }
LEVER_RUNS=.gpu/levers_z4.txt timeout 90 bash scripts/gpu_candidates.sh $O/cand > $O/cand.txt 2>&1; rc=$?; echo "cand rc=$rc $(el)s" >> $O/cand.txt
if [ $rc -eq 0 ]; then
  timeout 330 bash scripts/gpu_perf.sh $O > $O/perf.txt 2>&1; echo "perf rc=$? $(el)s" >> $O/perf.txt
  for dt in bf16 f16; do
    [ $(el) -gt 250 ] && break
    timeout 90 .gpu/bin/rute gemm --suite correctness --kernel hopper_ws --dtype $dt --out $O/correctness_$dt.md > /dev/null 2>&1; echo "correctness $dt rc=$? $(el)s" >> $O/perf.txt
  done
fi
tar czf $OUT/z4.tgz -C $OUT z4
tail -9 $O/cand.txt | cut -c1-160
cat $O/perf.txt | cut -c1-200 | tail -60
for f in $O/correctness_*.md; do [ -f $f ] && echo "$(basename $f): $(grep -cE '\| PASS \|' $f) PASS, $(grep -cE '\| FAIL \|' $f) FAIL"; done
