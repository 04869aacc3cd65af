#!/usr/bin/env bash
# The final build's whole sweep (60 configurations): f64, the three sanitizers, the GPU test binaries.
set -u
export RUTE_PTXAS=$(command -v ptxas)
timeout 580 bash scripts/gpu_validate.sh $OUT/aa6 > $OUT/aa6.txt 2>&1; echo "validate rc=$?" >> $OUT/aa6.txt
tar czf $OUT/aa6.tgz -C $OUT aa6 aa6.txt
tail -25 $OUT/aa6.txt | cut -c1-200
