#!/usr/bin/env bash
bash .gpu/call4.sh > $OUT/call4.out 2>&1
timeout 380 bash scripts/gpu_perf.sh $OUT/perf > $OUT/perf.out 2>&1; echo "perf rc=$?" >> $OUT/perf.out
tar czf $OUT/p.tgz -C $OUT perf perf.out
cat $OUT/call4.out | tail -60; tail -45 $OUT/perf.out
