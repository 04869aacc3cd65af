#!/usr/bin/env python3
"""Check vectors.tsv against CuTe's C++ itself (a developer tool, not run in CI).

Every case becomes a C++ statement over fully static layouts (`Int<N>` shapes and strides), compiled
with g++ against CUTLASS's `include/` and libcu++ (`NVIDIA/cccl` `libcudacxx/include`), and run; its
printed result (static `_` removed) and offsets must equal the file's columns. Each ERROR case is
compiled alone and must fail to compile.

  python3 verify_cxx.py --cutlass DIR/include --cccl DIR/libcudacxx/include --cuda DIR/include \
      [--vectors vectors.tsv] [--chunk 300] [--jobs 2] [--errors]
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

TOKEN = re.compile(r"\s*(Sw<-?\d+,-?\d+,-?\d+>|[A-Za-z_]+|-?\d+|[(),:]|o\b)")


def tokenize(s):
    out, pos = [], 0
    s = s.strip()
    while pos < len(s):
        m = TOKEN.match(s, pos)
        if not m:
            raise ValueError(f"cannot tokenize {s!r} at {pos}")
        out.append(m.group(1))
        pos = m.end()
    return out


class P:
    """Parses the calculator's syntax into C++ expressions over static CuTe types."""

    def __init__(self, toks):
        self.t, self.i = toks, 0

    def peek(self):
        return self.t[self.i] if self.i < len(self.t) else None

    def take(self, want=None):
        tok = self.t[self.i]
        if want is not None and tok != want:
            raise ValueError(f"expected {want}, got {tok}")
        self.i += 1
        return tok

    def term(self):
        """int | tuple of items; returns (kind, cxx) with kind 'int', 'tuple', 'tiler'."""
        tok = self.peek()
        if tok == "(":
            self.take("(")
            items = [self.item()]
            while self.peek() == ",":
                self.take(",")
                items.append(self.item())
            self.take(")")
            if any(k in ("layout", "tiler") for k, _ in items):
                return "tiler", "make_tile(" + ",".join(c for _, c in items) + ")"
            return "tuple", "cute::make_tuple(" + ",".join(c for _, c in items) + ")"
        n = int(self.take())
        return "int", f"Int<{n}>{{}}", n

    def item(self):
        t = self.term()
        if self.peek() == ":":
            self.take(":")
            d = self.term()
            return "layout", f"make_layout({t[1]},{d[1]})"
        return t[0], t[1]

    def arg(self):
        tok = self.peek()
        if tok.startswith("Sw<"):
            self.take()
            b, m, s = re.findall(r"-?\d+", tok)
            sw = f"Swizzle<{b},{m},{s}>{{}}"
            if self.peek() == "o":
                self.take("o")
                off = self.term()
                self.take("o")
                lay = self.item()
                return "composed", f"composition({sw},{off[1]},{lay[1]})"
            return "swizzle", sw
        if tok == "(" or re.fullmatch(r"-?\d+", tok):
            t = self.term()
            if self.peek() == ":":
                self.take(":")
                d = self.term()
                return "layout", f"make_layout({t[1]},{d[1]})"
            if t[0] == "int":
                return "int", t[1], t[2]
            return t[0], t[1]
        name = self.take()
        self.take("(")
        args = [self.arg()]
        while self.peek() == ",":
            self.take(",")
            args.append(self.arg())
        self.take(")")
        return "value", call(name, args)


def call(name, args):
    c = [a[1] for a in args]
    if name in ("upcast", "downcast"):
        return f"{name}<{args[1][2]}>({c[0]})"
    if name == "recast_layout":
        return f"recast_layout<uint_bit_t<{args[1][2]}>,uint_bit_t<{args[2][2]}>>({c[0]})"
    return f"{name}(" + ",".join(c) + ")"


def cxx_of(expr):
    p = P(tokenize(expr))
    a = p.arg()
    if p.peek() is not None:
        raise ValueError(f"trailing tokens in {expr!r}")
    return a[1]


PRELUDE = """#include <cute/layout.hpp>
#include <cute/swizzle_layout.hpp>
#include <cstdio>
using namespace cute;
template <class T> void show(T const& v) {
  print(v); printf("\\t");
  if constexpr (is_integral<T>::value) { printf("%d", int(v)); }
  else { for (int i = 0; i < int(size(v)); ++i) printf(i ? " %d" : "%d", int(v(i))); }
  printf("\\n");
}
"""


def compile_run(src, flags, workdir):
    path = os.path.join(workdir, "case.cpp")
    exe = os.path.join(workdir, "case")
    with open(path, "w") as f:
        f.write(src)
    r = subprocess.run(["g++", "-std=c++17", "-O0", *flags, path, "-o", exe],
                       capture_output=True, text=True)
    if r.returncode != 0:
        return None, r.stderr
    r = subprocess.run([exe], capture_output=True, text=True)
    return r.stdout, r.stderr


def run_chunk(cases, flags):
    body = "".join(f"  show({cxx_of(e)});\n" for e, _, _ in cases)
    src = PRELUDE + "int main() {\n" + body + "}\n"
    with tempfile.TemporaryDirectory() as d:
        out, err = compile_run(src, flags, d)
    if out is None:
        return [f"chunk starting {cases[0][0]} does not compile:\n{err[:3000]}"]
    bad = []
    lines = out.splitlines()
    for (e, printed, values), line in zip(cases, lines):
        got_p, _, got_v = line.partition("\t")
        got_p = got_p.replace("_", "")
        if got_p != printed or got_v.split() != values.split():
            bad.append(f"{e}\n  file: {printed}  {values[:200]}\n  C++:  {got_p}  {got_v[:200]}")
    if len(lines) != len(cases):
        bad.append(f"chunk starting {cases[0][0]}: {len(lines)} outputs for {len(cases)} cases")
    return bad


def run_error(expr, flags):
    src = PRELUDE + f"int main() {{ show({cxx_of(expr)}); }}\n"
    with tempfile.TemporaryDirectory() as d:
        out, _ = compile_run(src, flags, d)
    return [] if out is None else [f"{expr}: C++ accepts it and prints {out.strip()}"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cutlass", required=True)
    ap.add_argument("--cccl", required=True)
    ap.add_argument("--cuda", required=True)
    ap.add_argument("--vectors", default=os.path.join(os.path.dirname(__file__), "vectors.tsv"))
    ap.add_argument("--chunk", type=int, default=300)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--errors", action="store_true", help="also compile every ERROR case alone")
    ap.add_argument("--only", help="regex on expressions to check")
    o = ap.parse_args()
    flags = ["-I", o.cutlass, "-I", o.cccl, "-I", o.cuda]
    rows = [l.split("\t") for l in open(o.vectors, encoding="utf-8").read().splitlines()]
    if o.only:
        rows = [r for r in rows if re.search(o.only, r[0])]
    ok = [r for r in rows if r[1] != "ERROR"
          and not re.match(r"Sw<", r[0])]  # bare composed literals: no C++ call to check
    errs = [r[0] for r in rows if r[1] == "ERROR"]
    chunks = [ok[i:i + o.chunk] for i in range(0, len(ok), o.chunk)]
    bad = []
    with ThreadPoolExecutor(o.jobs) as ex:
        for b in ex.map(lambda c: run_chunk(c, flags), chunks):
            bad += b
            print(f"checked a chunk; {len(bad)} problems so far", file=sys.stderr)
        if o.errors:
            for b in ex.map(lambda e: run_error(e, flags), errs):
                bad += b
    for b in bad:
        print(b)
    print(f"{len(ok)} cases{' and %d ERROR cases' % len(errs) if o.errors else ''}: "
          f"{len(bad)} problems", file=sys.stderr)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
