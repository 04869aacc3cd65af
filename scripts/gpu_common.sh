# Sourced by the device scripts (scripts/gpu_*.sh) with their arguments: the output folder (the
# first argument, else $OUT, else gpu-out), ptxas for the tests, `fail` (reports a failure and
# marks the run failed in $status) and the staged gpu_hopper test binary in $hopper.
out="${1:-${OUT:-gpu-out}}"
mkdir -p "$out"
export RUTE_PTXAS="${RUTE_PTXAS:-$(command -v ptxas)}"
status=0
fail() { echo "FAIL: $*" >&2; status=1; }
hopper=$(ls .gpu/tests/gpu_hopper-* 2>/dev/null | head -1)
[ -x "$hopper" ] || { echo "FAIL: no .gpu/tests/gpu_hopper-* (stage it: see scripts/gpu_hopper.sh)" >&2; exit 1; }
