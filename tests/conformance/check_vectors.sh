#!/usr/bin/env bash
# Regenerate the layout conformance vectors and fail if they differ from the checked-in file, proving
# that tests/conformance/vectors.tsv comes from gen_vectors.py (needs `import pycute`:
# `pip install --no-deps nvidia-cutlass==4.2.0.0`, the version it was generated with).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
tmp="$(mktemp)"
trap 'rm -f "$tmp"' EXIT
PYTHONHASHSEED=0 python3 "$here/gen_vectors.py" --out "$tmp"
if ! diff -u "$here/vectors.tsv" "$tmp" > "$tmp.diff"; then
    head -40 "$tmp.diff"
    rm -f "$tmp.diff"
    echo "tests/conformance/vectors.tsv is stale: run python3 tests/conformance/gen_vectors.py --out tests/conformance/vectors.tsv" >&2
    exit 1
fi
rm -f "$tmp.diff"
echo "conformance vectors: up to date ($(wc -l < "$here/vectors.tsv") cases)"
