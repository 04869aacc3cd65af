#!/usr/bin/env python3
"""rute's ratio to cuBLAS over the suites' shapes, as an SVG (Python's standard library only).

Reads the tables `rute gemm --suite bench|llm --dtype D --out FILE.md` writes (one or more, any
dtypes; scripts/gpu_suites.sh makes them) and plots each shape's ratio, one series per dtype,
the shapes in the order the tables list them (the suites' order), a line at 1.0 (cuBLAS), and
each table's geometric mean in the legend. The same tables give the same bytes.

    python3 scripts/plot_ratios.py OUT.svg TABLE.md [TABLE.md ...] [--title TEXT] [--markdown]

--markdown also prints the ratios as markdown tables, one per suite (a column per dtype, the
geometric mean last), for results/README.md.

e.g. python3 scripts/plot_ratios.py results/ratio_to_cublas.svg \
         results/archive/2026-12-04-baseline/{bench,llm}_{bf16,f16}.md
"""

import math
import os
import sys
from xml.sax.saxutils import escape

COLORS = {"bf16": "#1f77b4", "f16": "#d62728"}
OTHER_COLORS = ["#2ca02c", "#9467bd", "#8c564b"]


def read_table(path):
    """(suite, [(m, n, k, dtype, ratio or None)]) of one results file."""
    suite = "?"
    rows = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("# rute gemm --suite "):
                suite = line.split()[-1]
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) < 15 or not cells[0].isdigit():
                continue
            m, n, k, dtype = int(cells[0]), int(cells[1]), int(cells[2]), cells[3]
            try:
                ratio = float(cells[14])
            except ValueError:
                ratio = None  # refused or failed: no ratio
            rows.append((m, n, k, dtype, ratio))
    if not rows:
        sys.exit(f"{path}: no rows of `rute gemm --suite` in it")
    return suite, rows


def shape_label(m, n, k):
    if m == n == k:
        return f"{m}\u00b3"
    return f"{m}x{n}x{k}"


def geomean(values):
    values = [v for v in values if v]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def plot(out, paths, title):
    tables = [(p,) + read_table(p) for p in paths]
    # The shapes, in the tables' order, each once; groups of the llm suite by (N, K).
    shapes = []
    for _, suite, rows in tables:
        for m, n, k, _, _ in rows:
            key = (suite, m, n, k)
            if key not in shapes:
                shapes.append(key)
    dtypes = []
    for _, _, rows in tables:
        for row in rows:
            if row[3] not in dtypes:
                dtypes.append(row[3])
    color = {d: COLORS.get(d, OTHER_COLORS[i % len(OTHER_COLORS)]) for i, d in enumerate(dtypes)}
    ratios = [r[4] for _, _, rows in tables for r in rows if r[4]]
    lo = math.floor(min(ratios + [1.0]) * 20 - 0.5) / 20
    hi = math.ceil(max(ratios + [1.0]) * 20 + 0.5) / 20

    left, right, top, bottom = 64, 24, 84, 118
    step = 26
    width = left + right + step * len(shapes)
    height = 470
    plot_h = height - top - bottom

    def x(i):
        return left + step * i + step / 2

    def y(r):
        return top + plot_h * (hi - r) / (hi - lo)

    svg = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<text x="{left}" y="22" font-size="14" font-weight="bold">{escape(title)}</text>',
    ]
    # Grid and the y axis.
    ticks = int(round((hi - lo) / 0.05))
    for t in range(ticks + 1):
        r = lo + 0.05 * t
        svg.append(
            f'<line x1="{left}" x2="{width - right}" y1="{y(r):.1f}" y2="{y(r):.1f}" '
            f'stroke="#e0e0e0"/>'
        )
        svg.append(
            f'<text x="{left - 6}" y="{y(r) + 4:.1f}" text-anchor="end">{r:.2f}</text>'
        )
    svg.append(
        f'<text x="16" y="{top + plot_h / 2:.1f}" text-anchor="middle" '
        f'transform="rotate(-90 16 {top + plot_h / 2:.1f})">rute / cuBLAS, throughput (1 = cuBLAS, dashed)</text>'
    )
    svg.append(
        f'<line x1="{left}" x2="{width - right}" y1="{y(1.0):.1f}" y2="{y(1.0):.1f}" '
        f'stroke="black" stroke-dasharray="4 3"/>'
    )
    # Separators between the suites and between the llm suite's (N, K) groups.
    for i in range(1, len(shapes)):
        (s0, _, n0, k0), (s1, _, n1, k1) = shapes[i - 1], shapes[i]
        if s0 != s1 or (s1 == "llm" and (n0, k0) != (n1, k1)):
            xs = left + step * i
            svg.append(
                f'<line x1="{xs}" x2="{xs}" y1="{top}" y2="{top + plot_h}" stroke="#bbbbbb"/>'
            )
    # Group captions above the plot.
    groups = []
    for i, (suite, m, n, k) in enumerate(shapes):
        name = suite if suite != "llm" else f"llm N x K = {n} x {k}"
        if groups and groups[-1][0] == name:
            groups[-1][2] = i
        else:
            groups.append([name, i, i])
    for name, a, b in groups:
        svg.append(
            f'<text x="{(x(a) + x(b)) / 2:.1f}" y="{top - 6}" text-anchor="middle" '
            f'fill="#555555">{escape(name)}</text>'
        )
    # Shape labels under the plot.
    for i, (_, m, n, k) in enumerate(shapes):
        lx, ly = x(i) + 3, top + plot_h + 8
        svg.append(
            f'<text x="{lx:.1f}" y="{ly}" text-anchor="end" '
            f'transform="rotate(-60 {lx:.1f} {ly})">{shape_label(m, n, k)}</text>'
        )
    # Points, one series per dtype, offset a little so that both show.
    for j, d in enumerate(dtypes):
        dx = (j - (len(dtypes) - 1) / 2) * 6
        for _, suite, rows in tables:
            for m, n, k, dtype, r in rows:
                if dtype != d or r is None:
                    continue
                i = shapes.index((suite, m, n, k))
                cx, cy = x(i) + dx, y(r)
                svg.append(
                    f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="3.5" fill="{color[d]}">'
                    f"<title>{shape_label(m, n, k)} {d}: {r:.3f}</title></circle>"
                )
    # Legend: each dtype with its tables' geometric means.
    lx = left + 6
    for j, d in enumerate(dtypes):
        means = []
        for _, suite, rows in tables:
            g = geomean([r[4] for r in rows if r[3] == d])
            if g:
                means.append(f"{suite} {g:.3f}")
        ly = 42 + 15 * j
        svg.append(f'<circle cx="{lx}" cy="{ly - 4}" r="4" fill="{color[d]}"/>')
        svg.append(
            f'<text x="{lx + 8}" y="{ly}">{escape(d)}: geometric mean '
            f'{escape(", ".join(means))}</text>'
        )
    svg.append("</svg>")
    with open(out, "w", encoding="utf-8") as f:
        f.write("\n".join(svg) + "\n")


def markdown(paths):
    """The ratios of the tables as markdown, one table per suite, a column per dtype."""
    by_suite = {}
    for p in paths:
        suite, rows = read_table(p)
        by_suite.setdefault(suite, []).append(rows)
    out = []
    for suite, tables in by_suite.items():
        dtypes, shapes, ratio = [], [], {}
        for rows in tables:
            for m, n, k, d, r in rows:
                if d not in dtypes:
                    dtypes.append(d)
                if (m, n, k) not in shapes:
                    shapes.append((m, n, k))
                ratio[(m, n, k, d)] = r
        out.append(f"| {suite}: M x N x K | " + " | ".join(dtypes) + " |")
        out.append("| --- | " + " | ".join("---:" for _ in dtypes) + " |")
        for m, n, k in shapes:
            cells = [ratio.get((m, n, k, d)) for d in dtypes]
            cells = [f"{c:.3f}" if c else "-" for c in cells]
            out.append(f"| {m} x {n} x {k} | " + " | ".join(cells) + " |")
        means = [geomean([ratio.get((m, n, k, d)) for m, n, k in shapes]) for d in dtypes]
        out.append(
            "| geometric mean | "
            + " | ".join(f"**{g:.3f}**" if g else "-" for g in means)
            + " |"
        )
        out.append("")
    return "\n".join(out)


def main(argv):
    args = list(argv)
    tables = "--markdown" in args
    if tables:
        args.remove("--markdown")
    title = "rute's hopper_ws against cuBLAS on the H200, the suites' shapes"
    if "--title" in args:
        i = args.index("--title")
        if i + 1 >= len(args):
            sys.exit("--title needs a value")
        title = args[i + 1]
        del args[i : i + 2]
    if len(args) < 2:
        sys.exit(__doc__)
    out, paths = args[0], args[1:]
    for p in paths:
        if not os.path.isfile(p):
            sys.exit(f"{p}: no such file")
    plot(out, paths, title)
    if tables:
        print(markdown(paths))


if __name__ == "__main__":
    main(sys.argv[1:])
