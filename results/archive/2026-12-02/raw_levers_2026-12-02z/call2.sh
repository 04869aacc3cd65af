#!/usr/bin/env bash
# The suites' method (rute gemm --bench: cuBLAS interleaved, inputs rotated past L2) on the
# squares, evened waves (_n) against the default, four rounds in turn.
set -u
O=$OUT/z2; mkdir -p $O
export RUTE_PTXAS=$(command -v ptxas)
t0=$(date +%s); el() { echo $(( $(date +%s)-t0 )); }
for rep in 1 2 3 4; do
  for s in 6144 4096; do
    for dt in bf16 f16; do
      for c in 128x256x64s3 128x256x64s3_n 128x256x64s3_h_n 256x128x64s3 256x128x64s3_n; do
        [ $(el) -gt 400 ] && break
        printf '%s %s %s %s ' $rep $s $dt $c
        timeout 40 .gpu/bin/rute gemm --m $s --n $s --k $s --dtype $dt --kernel hopper_ws --config $c --bench --repeats 30 2>&1 | grep '^bench:' || echo FAIL
      done
    done
  done
done > $O/bench.txt 2>&1
echo "total $(el)s" >> $O/bench.txt
tar czf $OUT/z2.tgz -C $OUT z2
sed -E 's/bench: rute ([0-9.]+) ms .* cuBLAS ([0-9.]+) ms .* ratio ([0-9.]+).*/\1 \2 r\3/' $O/bench.txt | awk '{k=$2" "$3" "$4; r[k]=r[k]" "$7} END {for (k in r) print k, r[k]}' | sort
tail -1 $O/bench.txt
