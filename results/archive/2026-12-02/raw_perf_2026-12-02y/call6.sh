#!/usr/bin/env bash
set -u
O=$OUT/y; mkdir -p $O
export RUTE_PTXAS=$(command -v ptxas)
t0=$(date +%s)
for dtype in bf16 f16; do
  timeout 100 .gpu/bin/rute gemm --suite bench --dtype $dtype --out $O/bench_$dtype.md > $O/bench_$dtype.log 2>&1; echo "bench $dtype rc=$? $(( $(date +%s)-t0 ))s"
done
tar czf $OUT/y.tgz -C $OUT y
for f in $O/bench_*.md; do echo "$(basename $f): $(grep -E "shapes timed" $f)"; done
grep -hE "^\| (81920|4096|6144|8192|2048) " $O/bench_*.md | cut -d'|' -f2-5,12-13,16
