#!/usr/bin/env python3
"""The metrics of ncu's details page that tell where a kernel's time goes, one column per kernel.

    ncu -i REPORT.ncu-rep --page details --csv > D.csv
    python3 scripts/ncu_details.py D.csv

Prints, for every profiled launch (ID and a short name), the duration, the SM and memory
throughputs, the L2 and DRAM rates, issue-slot use, warps eligible per cycle, registers and
occupancy: a fused epilogue that costs more than its instructions explain shows up as fewer
eligible warps or a lower issue rate than the plain kernel beside it.
"""
import csv
import sys

WANTED = [
    "Duration",
    "Elapsed Cycles",
    "SM Frequency",
    "Compute (SM) Throughput",
    "Memory Throughput",
    "L2 Cache Throughput",
    "DRAM Throughput",
    "Issue Slots Busy",
    "Issued Ipc Active",
    "Executed Ipc Active",
    "Eligible Warps Per Scheduler",
    "No Eligible",
    "Active Warps Per Scheduler",
    "Registers Per Thread",
    "Achieved Occupancy",
    "L2 Hit Rate",
]


def main():
    rows = list(csv.DictReader(open(sys.argv[1])))
    kernels, values = [], {}
    for r in rows:
        key = (r.get("ID", ""), r.get("Kernel Name", "")[:32])
        if key not in values:
            kernels.append(key)
            values[key] = {}
        name = r.get("Metric Name", "")
        if name in WANTED and name not in values[key]:
            values[key][name] = f"{r.get('Metric Value', '')} {r.get('Metric Unit', '')}".strip()
    if not kernels:
        print(f"{sys.argv[1]}: no kernels", file=sys.stderr)
        sys.exit(1)
    print("| metric | " + " | ".join(f"{i} {n}" for i, n in kernels) + " |")
    print("|---|" + "---:|" * len(kernels))
    for name in WANTED:
        print(f"| {name} | " + " | ".join(values[k].get(name, "") for k in kernels) + " |")


if __name__ == "__main__":
    main()
