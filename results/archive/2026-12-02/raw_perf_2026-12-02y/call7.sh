export RUTE_PTXAS=$(command -v ptxas); mkdir -p $OUT/pe; RUTE_DTYPE=f16 timeout 190 bash scripts/gpu_peers.sh $OUT/pe > $OUT/pe/peers.log 2>&1; echo rc=$?; tail -32 $OUT/pe/peers.log
