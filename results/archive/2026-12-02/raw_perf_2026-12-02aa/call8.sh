#!/usr/bin/env bash
# 8192^3's two modes: rute's and cuBLAS's times over rounds, Hilbert against grouped, with clocks.
set -u
O=$OUT/aa8; mkdir -p $O
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active --format=csv -lms 100 > $O/smi.csv 2>&1 &
smi=$!
AB_ROUNDS=10 AB_DTYPES="f16 bf16" AB_BUDGET_S=150 bash scripts/gpu_suite_ab.sh $O/ab 8192x8192x8192 128x256x64s3_h_n 128x256x64s3_n > $O/ab.txt 2>&1
kill $smi
tar czf $OUT/aa8.tgz -C $OUT aa8
cat $O/ab.txt
awk '{for(i=5;i<NF;i++){ if($i=="rute") a=$(i+1); if($i=="cuBLAS") b=$(i+1); if($i=="ratio") r=$(i+1)} print $1,$2,$4,a,b,r}' $O/ab/ab.log
