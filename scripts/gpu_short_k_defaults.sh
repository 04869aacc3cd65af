#!/usr/bin/env bash
# The short K's default candidates retimed where the default is chosen: the candidates of
# scripts/levers.txt validated (scripts/gpu_candidates.sh), then each configuration timed as the
# suites time it (`rute gemm --bench`), twice, at 20000, 40960, 81920 x 256 x 256 (bf16, f16) and
# 163840 x 256 x 128 (bf16). Writes cand.txt and scaling.txt under $OUT.
#   OUT=dir [C="CONFIG ..."] bash scripts/gpu_short_k_defaults.sh
# (163840 x 256 x 128 by scripts/gpu_suite_ab.sh, its ab.log under $OUT/k128.)
export OUT
LEVER_RUNS=scripts/levers.txt timeout 300 bash scripts/gpu_candidates.sh $OUT > $OUT/cand.txt 2>&1; echo "cand rc=$?" >> $OUT/cand.txt
C="${C:-64x256x64s8_f1_e128_r4_p_l0_vfnf 64x256x64s6_f1_e128_r4_p_l256_vnnf 64x256x64s6_f1_e128_r4_p_l0_vnnf}"
for rep in 1 2; do SCALING_DTYPES="bf16 f16" SCALING_MS="20000 40960 81920" timeout 250 bash scripts/gpu_short_k_scaling.sh $OUT/s$rep $C; done > $OUT/scaling.txt 2>&1
# shellcheck disable=SC2086 # one argument per configuration
AB_ROUNDS=1 AB_DTYPES=bf16 bash scripts/gpu_suite_ab.sh $OUT/k128 163840x256x128 $C >> $OUT/scaling.txt 2>&1
