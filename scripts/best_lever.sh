#!/usr/bin/env bash
# The fastest configurations of a lever run (levers.log of scripts/gpu_levers.sh or
# scripts/gpu_candidates.sh) at one shape and dtype, by their ratio to cuBLAS, one spelling a
# line: the arguments for the next step's timing, e.g.
#   bash scripts/gpu_short_k_scaling.sh OUT D $(bash scripts/best_lever.sh OUT/cand/levers.log 81920x256x256 bf16 D)
#   bash scripts/best_lever.sh LEVERS_LOG SHAPE [DTYPE (default bf16)] [EXCEPT (a spelling left out)] [COUNT (default 1)]
set -uo pipefail
log="$1"; shape="$2"; dtype="${3:-bf16}"; except="${4:-}"; count="${5:-1}"
[ -f "$log" ] || { echo "no lever log at $log" >&2; exit 1; }
# A row: | dtype | shape | spelling@kernel ... | ... | ratio (9th field) |
grep -E "^\| $dtype \| $shape" "$log" \
    | { if [ -n "$except" ]; then grep -v -- "$except@"; else cat; fi; } \
    | sort -t'|' -k9 -r | head -"$count" \
    | awk -F'|' '{ print $4 }' | sed 's/@.*//; s/ //g'
