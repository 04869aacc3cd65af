#!/usr/bin/env python3
"""Per shape and GEMM kernel: time, DRAM bytes read against the minimum, DRAM rate, L2 traffic, grid.

    python3 scripts/ncu_shapes.py NCU_SHAPES.csv DTYPE [BENCH_DIR]

NCU_SHAPES.csv is what scripts/gpu_ncu_shapes.sh writes: for each shape a line `# shape MxNxK`, then
ncu's raw page (--csv --page raw) for every kernel of one `rute gemm --check`. The minimum read is
A and B once, (M + N) K elements of the 16-bit type. Kernels that are not a GEMM (fills, copies,
the f64 reference's helpers) are left out by name. L2 TB/s is every byte the L2 served or took
over the kernel's time, L2 % its throughput against its peak: what tells a kernel bound by operands
re-read from L2 (small tiles at mid-size M) from one bound by DRAM. With BENCH_DIR, the ratio to cuBLAS that
`rute gemm --bench` printed for the shape (bench_MxNxK.log) is shown beside.
"""
import csv
import io
import os
import re
import sys

SKIP = re.compile(r"fill|poison|copy|memset|reduce|convert|elementwise|splitKreduce", re.I)


def blocks(path):
    shape, lines = None, []
    for line in open(path):
        if line.startswith("# shape "):
            if shape:
                yield shape, lines
            shape, lines = line.split()[2], []
        else:
            lines.append(line)
    if shape:
        yield shape, lines


def num(x):
    try:
        return float(x.replace(",", ""))
    except ValueError:
        return float("nan")


def ratio_of(bench_dir, shape):
    p = os.path.join(bench_dir, f"bench_{shape}.log")
    if not os.path.exists(p):
        return ""
    m = re.findall(r"ratio[^0-9]*([0-9]+\.[0-9]+)", open(p).read())
    return m[-1] if m else ""


def main():
    path, dtype = sys.argv[1], sys.argv[2]
    bench_dir = sys.argv[3] if len(sys.argv) > 3 else None
    print("| shape | kernel | us | read MB | min MB | read/min | DRAM % peak | GB/s | L2 TB/s | L2 % "
          "| grid | ratio |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for shape, lines in blocks(path):
        m, n, k = (int(v) for v in shape.split("x"))
        min_mb = (m + n) * k * 2 / 1e6
        rows = list(csv.reader(io.StringIO("".join(lines))))
        if len(rows) < 3:
            print(f"| {shape} | (no kernels) | | | | | | | | |")
            continue
        head = rows[0]
        col = {h: i for i, h in enumerate(head)}
        for r in rows[2:]:
            name = r[col["Kernel Name"]]
            if SKIP.search(name):
                continue
            us = num(r[col["gpu__time_duration.sum"]]) / 1e3
            rd = num(r[col["dram__bytes_read.sum"]]) / 1e6
            pct = num(r[col["dram__throughput.avg.pct_of_peak_sustained_elapsed"]])
            grid = r[col["launch__grid_size"]]
            gbs = rd / 1e3 / (us / 1e6) if us > 0 else float("nan")
            l2_bytes = num(r[col["lts__t_bytes.sum"]]) if "lts__t_bytes.sum" in col else float("nan")
            l2_tbs = l2_bytes / 1e12 / (us / 1e6) if us > 0 else float("nan")
            l2_key = "lts__throughput.avg.pct_of_peak_sustained_elapsed"
            l2_pct = num(r[col[l2_key]]) if l2_key in col else float("nan")
            ratio = ratio_of(bench_dir, shape) if bench_dir and "hopper" in name else ""
            print(f"| {shape} | {name[:40]} | {us:.1f} | {rd:.1f} | {min_mb:.1f} | "
                  f"{rd / min_mb:.2f} | {pct:.0f} | {gbs:.0f} | {l2_tbs:.1f} | {l2_pct:.0f} | {grid} | {ratio} |")


if __name__ == "__main__":
    main()
