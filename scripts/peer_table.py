"""rute beside Triton, shape by shape, from the two tables one device call wrote.

    python3 scripts/peer_table.py shapes RUTE.md          # the shapes of rute's table, MxNxK
    python3 scripts/peer_table.py merge RUTE.md TRITON.md # one row per shape, counts last

RUTE.md is `rute gemm --suite llm|bench --out` (ratio = cuBLAS time over rute's), TRITON.md is
scripts/triton_peer.py's output (triton/cuBLAS, the same method) or the older peer script's. Each ratio is against cuBLAS
in its own process: the two compare through that common yardstick, not directly.
"""
import math
import sys


def table(path):
    """The header and the rows of a markdown file's table, as lists of stripped cells."""
    out = []
    for line in open(path):
        line = line.strip()
        if not line.startswith("|") or line.startswith("|---"):
            continue
        out.append([c.strip() for c in line.strip("|").split("|")])
    return (out[0], out[1:]) if out else ([], [])


def rows(path):
    """The table rows of a markdown file (header and rule dropped)."""
    return table(path)[1]


def rute_ratios(path):
    """{MxNxK: (ratio, TFLOP/s)} from rute's table (columns M, N, K, ..., rute TFLOP/s at 9, ratio last)."""
    got = {}
    for c in rows(path):
        if len(c) >= 14 and c[0].isdigit():
            got[f"{c[0]}x{c[1]}x{c[2]}"] = (float(c[-1]), float(c[9]))
    return got


def triton_ratios(path):
    """{MxNxK: (ratio, TFLOP/s)} from triton_peer.py's table (or the older
    ../shared/peers/triton_matmul.py's: the columns are found by their names); shapes that
    failed are left out."""
    head, body = table(path)
    if "triton/cuBLAS" not in head or "triton TFLOP/s" not in head:
        return {}
    r, t = head.index("triton/cuBLAS"), head.index("triton TFLOP/s")
    got = {}
    for c in body:
        if len(c) > max(r, t) and "x" in c[0]:
            try:
                got[c[0]] = (float(c[r]), float(c[t]))
            except ValueError:
                pass
    return got


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def merge(rute_md, triton_md):
    rute, tri = rute_ratios(rute_md), triton_ratios(triton_md)
    print("| shape | rute/cuBLAS | Triton/cuBLAS | rute TFLOP/s | Triton TFLOP/s | ahead |")
    print("|---|---:|---:|---:|---:|---|")
    ahead, both = 0, []
    for shape, (r, rt) in rute.items():
        if shape not in tri:
            print(f"| {shape} | {r:.3f} | - | {rt:.0f} | - | no Triton result |")
            continue
        t, tt = tri[shape]
        both.append((r, t))
        lead = r > t
        ahead += lead
        print(f"| {shape} | {r:.3f} | {t:.3f} | {rt:.0f} | {tt:.0f} | {'rute' if lead else 'Triton'} |")
    print()
    print(f"rute ahead on {ahead} of {len(both)} shapes; geometric means over them: rute "
          f"{geomean([r for r, _ in both]):.3f}, Triton {geomean([t for _, t in both]):.3f}")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "shapes":
        print(" ".join(rute_ratios(sys.argv[2])))
    elif len(sys.argv) == 4 and sys.argv[1] == "merge":
        merge(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)
