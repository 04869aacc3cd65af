#!/usr/bin/env bash
# The final build: the suites (scripts/gpu_perf.sh), 81920 x 256 x 256 new default against the old
# in rounds, then the correctness suite while time is left.
set -u
O=$OUT/aa4; mkdir -p $O
export RUTE_PTXAS=$(command -v ptxas)
t0=$(date +%s); el() { echo $(( $(date +%s)-t0 )); }
timeout 330 bash scripts/gpu_perf.sh $O > $O/perf.txt 2>&1; echo "perf rc=$? $(el)s" >> $O/perf.txt
AB_ROUNDS=8 AB_DTYPES="bf16 f16" AB_BUDGET_S=60 bash scripts/gpu_suite_ab.sh $O/ab 81920x256x256 64x256x64s7_f1_e64_d2_r4_p_ql_l256_vnnf 64x256x64s7_f1_e128_r4_p_ql_l256_vnnf > $O/ab.txt 2>&1; echo "ab rc=$? $(el)s" >> $O/ab.txt
for dt in bf16 f16; do
  [ $(el) -gt 420 ] && break
  timeout 80 .gpu/bin/rute gemm --suite correctness --kernel hopper_ws --dtype $dt --out $O/correctness_$dt.md > /dev/null 2>&1; echo "correctness $dt rc=$? $(el)s" >> $O/perf.txt
done
tar czf $OUT/aa4.tgz -C $OUT aa4
cat $O/perf.txt | cut -c1-200 | tail -45
cat $O/ab.txt
for f in $O/correctness_*.md; do [ -f $f ] && echo "$(basename $f): $(grep -cE '\| PASS \|' $f) PASS, $(grep -cE '\| FAIL \|' $f) FAIL"; done
