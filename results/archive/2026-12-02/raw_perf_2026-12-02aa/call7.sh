#!/usr/bin/env bash
# The bench suite again, twice per type, in turns: the spread of 8192^3 and 81920 x 256 x 256.
set -u
O=$OUT/aa7; mkdir -p $O
t0=$(date +%s); el() { echo $(( $(date +%s)-t0 )); }
for rep in 1 2; do for dt in bf16 f16; do
  [ $(el) -gt 230 ] && break 2
  timeout 100 .gpu/bin/rute gemm --suite bench --dtype $dt --out $O/bench_${dt}_$rep.md > /dev/null 2>&1; echo "bench $dt $rep rc=$? $(el)s"
done; done
tar czf $OUT/aa7.tgz -C $OUT aa7
for f in $O/bench_*.md; do echo "$(basename $f)"; grep -hE "^\| (81920|4096|6144|8192|2048) " $f | cut -d'|' -f2-5,12-13,16; done
