"""Generate layout-algebra cases with pycute (nvidia-cutlass's python/pycute) for
dsl-core/tests/pycute_cross.rs.

Run: python3 dsl-core/tests/data/gen_pycute_cases.py > dsl-core/tests/data/pycute_cases.txt
     python3 dsl-core/tests/data/gen_pycute_cases.py 7 >> dsl-core/tests/data/pycute_cases.txt
Each line: op;arg1;arg2;expected   (expected "ERR" when pycute raises).
Tuple tilers are written as layouts joined by '|'. Seeded (an optional first argument replaces
the default seed 20261129), so the output is reproducible.
"""
import random
import sys

from pycute import (Layout, coalesce, complement, composition, cosize, logical_divide,
                    logical_product, right_inverse, size, zipped_divide, tiled_divide,
                    zipped_product, tiled_product)


def fmt_t(t):
    if isinstance(t, int):
        return str(t)
    return "(" + ",".join(fmt_t(x) for x in t) + ")"


def fmt(layout):
    return fmt_t(layout.shape) + ":" + fmt_t(layout.stride)


def rand_shape(rng, depth, budget):
    """A shape of the given max depth whose size is at most budget."""
    if depth == 0 or rng.random() < 0.3:
        return rng.choice([e for e in (1, 2, 3, 4, 6, 8) if e <= budget] or [1])
    n = rng.randint(1, 3)
    out = []
    for _ in range(n):
        s = rand_shape(rng, depth - 1, max(1, budget // 2))
        out.append(s)
        budget = max(1, budget // max(1, size(Layout(s))))
    return tuple(out)


def leaves(t):
    return [t] if isinstance(t, int) else [x for y in t for x in leaves(y)]


def rebuild(t, it):
    return next(it) if isinstance(t, int) else tuple(rebuild(x, it) for x in t)


def rand_layout(rng, depth=2, budget=512, kind=None):
    shape = rand_shape(rng, depth, budget)
    flat = leaves(shape)
    kind = kind or rng.choice(["compact", "perm", "gappy", "zeros", "random"])
    if kind in ("compact", "perm", "gappy", "zeros"):
        order = list(range(len(flat)))
        if kind != "compact":
            rng.shuffle(order)
        strides = [0] * len(flat)
        cur = 1
        for i in order:
            if kind == "gappy" and rng.random() < 0.3:
                cur *= rng.choice([2, 3])
            strides[i] = cur
            cur *= flat[i]
        if kind == "zeros":
            for i in range(len(flat)):
                if rng.random() < 0.3:
                    strides[i] = 0
    else:
        strides = [rng.choice([0, 1, 2, 3, 4, 8, 16]) for _ in flat]
    return Layout(shape, rebuild(shape, iter(strides)))


def emit(op, a, b, thunk):
    try:
        r = fmt(thunk())
    except Exception:
        r = "ERR"
    print(f"{op};{a};{b};{r}")


def main():
    rng = random.Random(int(sys.argv[1]) if len(sys.argv) > 1 else 20261129)
    for _ in range(120):
        l = rand_layout(rng)
        emit("coalesce", fmt(l), "", lambda: coalesce(l))
    for _ in range(150):
        a = rand_layout(rng, kind=rng.choice(["compact", "perm", "gappy"]))
        b = rand_layout(rng, depth=1, budget=max(1, size(a)), kind=rng.choice(["compact", "perm", "gappy", "zeros"]))
        emit("composition", fmt(a), fmt(b), lambda: composition(a, b))
    for _ in range(100):
        a = rand_layout(rng, kind=rng.choice(["compact", "perm", "gappy", "zeros"]))
        m = cosize(a) * rng.choice([1, 2, 3, 4])
        emit("complement", fmt(a), str(m), lambda: complement(a, m))
    for _ in range(80):
        a = rand_layout(rng, kind=rng.choice(["compact", "perm", "gappy", "zeros"]))
        emit("right_inverse", fmt(a), "", lambda: right_inverse(a))
    for _ in range(100):
        a = rand_layout(rng, kind=rng.choice(["compact", "perm"]))
        n = size(a)
        divs = [d for d in range(1, n + 1) if n % d == 0]
        t = Layout(rng.choice(divs), rng.choice([1, 1, 2]))
        if n % (size(t) * t.stride) != 0:
            t = Layout(size(t), 1)
        emit("logical_divide", fmt(a), fmt(t), lambda: logical_divide(a, t))
    for _ in range(80):
        a = rand_layout(rng, depth=1, budget=64, kind=rng.choice(["compact", "perm", "gappy"]))
        t = rand_layout(rng, depth=1, budget=8, kind=rng.choice(["compact", "perm"]))
        emit("logical_product", fmt(a), fmt(t), lambda: logical_product(a, t))
    for _ in range(60):
        a = rand_layout(rng, depth=1, budget=512, kind=rng.choice(["compact", "perm"]))
        modes = [a[i] for i in range(len(a))] if isinstance(a.shape, tuple) else [a]
        tiler = []
        for m in modes[: rng.randint(1, len(modes))]:
            n = size(m)
            tiler.append(Layout(rng.choice([d for d in range(1, n + 1) if n % d == 0]), 1))
        tiler = tuple(tiler)
        tstr = "|".join(fmt(t) for t in tiler)
        for op, f in (("zipped_divide", zipped_divide), ("tiled_divide", tiled_divide),
                      ("logical_divide_t", logical_divide)):
            emit(op, fmt(a), tstr, lambda: f(a, tiler))
    for _ in range(40):
        a = rand_layout(rng, depth=1, budget=16, kind=rng.choice(["compact", "perm"]))
        modes = [a[i] for i in range(len(a))] if isinstance(a.shape, tuple) else [a]
        tiler = tuple(Layout(rng.choice([1, 2, 3, 4]), 1) for _ in modes[: rng.randint(1, len(modes))])
        tstr = "|".join(fmt(t) for t in tiler)
        for op, f in (("zipped_product", zipped_product), ("tiled_product", tiled_product)):
            emit(op, fmt(a), tstr, lambda: f(a, tiler))


if __name__ == "__main__":
    sys.setrecursionlimit(10000)
    main()
