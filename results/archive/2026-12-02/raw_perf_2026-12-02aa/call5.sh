#!/usr/bin/env bash
# The stream-K shapes: Hilbert order (the default) against grouped, as the suites time them in rotated rounds.
set -u
O=$OUT/aa5; mkdir -p $O
AB_ROUNDS=4 AB_DTYPES="bf16 f16" AB_BUDGET_S=100 bash scripts/gpu_suite_ab.sh $O/ab1 8192x8192x8192 128x256x64s3_h_n 128x256x64s3_n > $O/ab1.txt 2>&1
AB_ROUNDS=3 AB_DTYPES="bf16 f16" AB_BUDGET_S=110 bash scripts/gpu_suite_ab.sh $O/ab2 8192x10240x8192,16384x6144x4096 128x256x64s3_h_n 128x256x64s3_n > $O/ab2.txt 2>&1
tar czf $OUT/aa5.tgz -C $OUT aa5
cat $O/ab1.txt $O/ab2.txt
