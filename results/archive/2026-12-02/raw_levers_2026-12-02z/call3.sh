#!/usr/bin/env bash
# The suites' method on the shapes whose default is 128x256x64s3 (and 512 x 28672 x 4096's
# 128x224), the default against evened waves (_n) and evened waves in Hilbert order (_h_n).
set -u
O=$OUT/z3; mkdir -p $O
export RUTE_PTXAS=$(command -v ptxas)
t0=$(date +%s); el() { echo $(( $(date +%s)-t0 )); }
S="2048x6144x4096 2048x28672x4096 2048x4096x14336 2048x10240x8192 8192x6144x4096 8192x28672x4096 8192x4096x14336 8192x10240x8192 16384x6144x4096 16384x28672x4096 16384x4096x14336 16384x10240x8192 8192x8192x8192 2048x2048x2048 128x28672x4096"
one() { # rep dtype shape config
  local m n k; IFS=x read m n k <<< "$3"
  printf '%s %s %s %s ' $1 $2 $3 $4
  timeout 60 .gpu/bin/rute gemm --m $m --n $n --k $k --dtype $2 --kernel hopper_ws --config $4 --bench --repeats 30 2>&1 | grep '^bench:' || echo FAIL
}
for pass in "1 bf16" "1 f16" "2 bf16" "2 f16"; do
  set -- $pass
  for s in $S 512x28672x4096; do
    cs="128x256x64s3 128x256x64s3_n 128x256x64s3_h_n"
    [ $s = 512x28672x4096 ] && cs="128x224x64s4_e112 128x224x64s4_e112_n 128x224x64s4_h_e112_n"
    for c in $cs; do
      [ $(el) -gt 470 ] && break 3
      one $1 $2 $s $c
    done
  done
done > $O/bench.txt 2>&1
echo "total $(el)s" >> $O/bench.txt
tar czf $OUT/z3.tgz -C $OUT z3
sed -E 's/bench: rute ([0-9.]+) ms .* cuBLAS ([0-9.]+) ms .* ratio ([0-9.]+).*/r\3/' $O/bench.txt | awk '{v=$4; sub(/^128x2[25][46]x64s[34]/,"",v); if(v=="" || v=="_e112") v="default"; k=$2" "$3" "v; r[k]=r[k]" "$5} END {for (x in r) print x, r[x]}' | sort -k2,2 -k1,1 -k3,3
tail -1 $O/bench.txt
