#!/usr/bin/env python3
"""Warp-stall samples per kernel, from ncu's source page as CSV.

    ncu -i REPORT.ncu-rep --page source --csv --print-source sass > K.csv
    python3 scripts/ncu_stalls.py K.csv [TOP]

For each kernel in the file (a block that starts with a "Kernel Name" row), prints the samples
summed by SASS opcode (the text before the first '.'), then the TOP (default 12) instructions with
the most samples and their addresses: what tells a barrier's wait from a tensor-core wait from a
fence (it found hopper_ws's cluster-scope release, see results/h200_ncu_cluster_release.md).
Then the kernel's code footprint: its SASS instructions, how many of them ran at all, and the
samples stalled with no instruction to issue (ncu's `stall_no_inst`: an instruction-cache miss),
what a long straight-line epilogue run once per tile costs (results/blas.md, 2026-12-06, fifth
session: bias + GELU at one tile a block ran 1,600 more instructions once each, and its
`stall_no_inst` samples went from 59 to 633).
"""
import csv
import sys
from collections import Counter


def report(name: str, rows: list, top: int) -> bool:
    header_at = next((i for i, r in enumerate(rows) if "Address" in r and "Source" in r), None)
    if header_at is None:
        print(f"{name}: no 'Address' and 'Source' header: not ncu's source page", file=sys.stderr)
        return False
    header, data = rows[header_at], rows[header_at + 1 :]
    col = header.index("Warp Stall Sampling (All Samples)")
    src = header.index("Source")
    samples = [(float(r[col] or 0), r[0], r[src]) for r in data if len(r) > col]
    total = sum(s for s, _, _ in samples) or 1.0
    by_op = Counter()
    for s, _, text in samples:
        words = [w for w in text.split() if not w.startswith("@")]
        by_op[words[0].split(".")[0] if words else "?"] += s
    print(f"== {name}: {total:.0f} samples over {len(samples)} instructions")
    for op, s in by_op.most_common(top):
        print(f"  {op:<20} {s:8.0f} {100 * s / total:5.1f}%")
    print("  top instructions:")
    for s, addr, text in sorted(samples, reverse=True)[:top]:
        print(f"  {100 * s / total:5.1f}%  {addr}  {text.strip()[:100]}")
    footprint(header, data)
    return True


def footprint(header: list, data: list) -> None:
    """The code that ran and the samples that waited for instructions to be fetched."""
    if "Instructions Executed" not in header or "stall_no_inst" not in header:
        return
    executed, no_inst = header.index("Instructions Executed"), header.index("stall_no_inst")
    cells = [r for r in data if len(r) > max(executed, no_inst)]
    ran = sum(1 for r in cells if float(r[executed] or 0) > 0)
    waited = sum(float(r[no_inst] or 0) for r in cells)
    print(f"  code: {len(cells)} instructions, {ran} executed; {waited:.0f} samples with no instruction")


def main() -> int:
    if len(sys.argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    top = int(sys.argv[2]) if len(sys.argv) > 2 else 12
    with open(sys.argv[1], newline="") as f:
        rows = list(csv.reader(f))
    starts = [i for i, r in enumerate(rows) if r and r[0] == "Kernel Name"] or [0]
    ok = True
    for n, start in enumerate(starts):
        end = starts[n + 1] if n + 1 < len(starts) else len(rows)
        name = rows[start][1] if rows[start] and rows[start][0] == "Kernel Name" else sys.argv[1]
        ok &= report(name, rows[start:end], top)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
