#!/usr/bin/env python3
"""Generate rute's layout-algebra conformance vectors (tests/conformance/vectors.tsv).

Each line is `expression<TAB>expected_printed<TAB>expected_values`:
  * expected_printed: the result in CuTe notation as C++ `print` writes it, minus the `_` of static
    integers (`((2,4),8):((1,2),8)`, 1-tuples as `(8)`, composed layouts as `Sw<3,3,3> o 0 o L`);
  * expected_values: the result's offsets at indices 0..size-1, space separated, or the integer for
    size/cosize/rank/depth;
  * or `expression<TAB>ERROR<TAB>` for an input C++ CuTe rejects (a static_assert fires).

Truth is CuTe's C++ (NVIDIA/cutlass `include/cute/layout.hpp`, `int_tuple.hpp`, `stride.hpp`,
`swizzle.hpp`, `swizzle_layout.hpp`) with every integer static, which is how rute treats layouts (host
integers while the kernel is generated). The operations below are a line-by-line port of the C++
definitions built on pycute's primitives (`flatten`, `product`, `crd2idx`, `Layout`). Every case that
pycute also covers is run through pycute's own operation as well; `--report` prints, per operation, how
often pycute agrees with the C++ port (`--diffs` lists each disagreement). Where they differ, C++ wins;
the differences are listed in PYCUTE_FIXUPS below, each with the C++ code it follows. Left out: cases
pycute fails on, and cases where C++'s answer is not the mathematical one (its weak divisibility checks
let some compositions through with a wrong result; see `check_composition`).

`verify_cxx.py` (a developer tool) compiles every case against CuTe's C++ headers with static integers
and checks the printed form and the offsets, and that each ERROR case fails to compile.

Output is deterministic: a fixed seed, one `random.Random`, no iteration over sets or hash-ordered
containers. Run: `python3 gen_vectors.py > vectors.tsv` (or `--out FILE`).
"""

import argparse
import math
import random
import sys

import pycute
from pycute import Layout, crd2idx, flatten, product

SEED = 20261129

# pycute decides which cases are left out (those it fails on), so another pycute may change the file.
PYCUTE_FROM = "4.2.0.0"

# Where pycute (python/pycute/layout.py) and C++ CuTe disagree, the port follows C++:
PYCUTE_FIXUPS = """
1. complement(L) default cotarget: C++ `complement(layout)` uses `cosize(filter(layout))`
   (layout.hpp: `detail::complement(..., cosize(filter_layout))`); pycute defaults max_idx=1.
2. complement: C++ runs on `filter(layout)` and rejects only when a new shape is 0 ("Non-injective
   Layout detected in complement"); pycute asserts `current_idx <= shape*stride` and skips filtering.
3. cosize: C++ is `size(coshape(L))` = 1 + sum((s-1)*|d|) (layout.hpp `coshape`); pycute is L(size-1)+1,
   wrong for negative or non-monotone strides.
4. composition(A, B): C++ first applies `detail::coalesce_x(lhs, coprofile(rhs))` (a trailing shape-1
   becomes 2 so the function is kept outside the domain), skips modes when `next_shape == 1 or
   rest_shape == 1`, checks "Stride Divisibility Condition" as `rest_stride % curr_shape == 0 or
   rest_stride < curr_shape` and "Shape Divisibility Condition" `rest_shape % new_shape == 0`, and
   unwraps a 1-tuple result; pycute uses plain coalesce, `min(max(1, ...))`, and other asserts.
5. composition(A, tiler tuple): C++ drops the modes of A that the tiler does not reach
   (`detail::transform_layout(lhs, rhs, ..., make_seq<tuple_size<Tiler>>, seq<>, seq<>)`,
   "Drop any modes of lhs that aren't hit by rhs"); pycute keeps them.
6. logical_divide(A, T): C++ takes the complement against `shape(coalesce(A))`, a tuple, and
   `ceil_div(tuple, int)` divides mode by mode (int_tuple.hpp `ceil_div` tuple-int fold); pycute uses
   size(A). The results differ when the tile does not divide the modes evenly.
7. right_inverse: C++ coalesces first and *skips* non-matching strides (stride 0, negative) instead of
   stopping (layout.hpp: `if constexpr (is_constant<istride, curr_stride>) ... else return init;`);
   pycute breaks at the first mismatch, so any stride-0 mode empties its result.
8. left_inverse: C++ has its own algorithm (coalesce, sort by stride, skip stride-0, shapes
   `istride / size(result_shape)`, "Left inverse divisibility condition", final mode the shape of the
   largest-stride mode); pycute uses right_inverse(make_layout(L, complement(L))).
9. tiled_divide/tiled_product: C++ slices `result(_, repeat<R1>(_))` where repeat<1>(_) is `_`, so a
   rank-1 rest mode keeps its own nesting; pycute indexes result[1][i].
10. logical_product with an int tiler item: pycute calls logical_divide (a typo); C++ multiplies.
11. Compact strides: C++ `compact_major<LayoutLeft>` (stride.hpp `detail::compact`) gives a static
    shape-1 mode stride 0, so `make_layout(_1)` is `1:0`, complement of an all-stride-0 layout against
    cotarget 1 is `1:0`, and make_ordered_layout/tile_to_shape put 0 on their shape-1 modes; pycute's
    prefix_product gives them the running product.
12. Missing from pycute, ported from C++: flat_divide, flat_product, blocked_product, raked_product,
    tile_to_shape, make_ordered_layout (stride.hpp `compact_order`), upcast, downcast, recast_layout,
    swizzles and composed layouts (values computed with CuTe's Swizzle formula directly: pycute's
    shift-0 swizzle recurses), depth, rank.
"""


class Reject(Exception):
    """C++ CuTe rejects the input (a static_assert or a congruence check fires)."""


class Skip(Exception):
    """C++ accepts the input but its answer is not the mathematical one (its divisibility checks are
    the weak ones: `rest_stride < curr_shape` passes); such cases are left out of the vectors."""


# ---------------------------------------------------------------------------------------------------
# IntTuple helpers (C++ int_tuple.hpp / tuple_algorithms.hpp semantics)

def is_t(x):
    return isinstance(x, tuple)


def wrap(x):
    return x if is_t(x) else (x,)


def unwrap(x):
    return unwrap(x[0]) if is_t(x) and len(x) == 1 else x


def rank(x):
    return len(x) if is_t(x) else 1


def depth(x):
    return 1 + max((depth(e) for e in x), default=0) if is_t(x) else 0


def fmt(x):
    """C++ print of an IntTuple: no spaces, 1-tuples as `(8)`."""
    if is_t(x):
        return "(" + ",".join(fmt(e) for e in x) + ")"
    return str(x)


def ceil_div(a, b):
    """int_tuple.hpp ceil_div: tuple/int folds the divisor through the modes."""
    if is_t(a):
        if is_t(b):
            b = b + (1,) * (len(a) - len(b))
            return tuple(ceil_div(x, y) for x, y in zip(a, b))
        out = []
        for ai in a:
            out.append(ceil_div(ai, b))
            b = ceil_div(b, ai)
        return tuple(out)
    if is_t(b):
        return ceil_div(a, product(b))
    return (a + b - 1) // b


def congruent(a, b):
    if is_t(a) != is_t(b):
        return False
    if is_t(a):
        return len(a) == len(b) and all(congruent(x, y) for x, y in zip(a, b))
    return True


def append_n(t, n, x):
    """append<N>(t, x): pad to rank n (an int stays an int when n == 1)."""
    if not is_t(t):
        if n == 1:
            return t
        t = (t,)
    return t + (x,) * (n - len(t))


def zip_t(t0, t1):
    """zip(t0, t1) = zip(make_tuple(t0, t1))."""
    if is_t(t0):
        if not (is_t(t1) and len(t0) == len(t1)):
            raise Reject("Mismatched Ranks")
        return tuple((a, b) for a, b in zip(t0, t1))
    return ((t0, t1),)


def lift_slice(a, b):
    if is_t(a):
        return tuple(e for x, y in zip(a, b) for e in lift_slice(x, y))
    if a is None:
        return (b,)
    return ()


def slice_t(a, b):
    """underscore.hpp slice: `None` plays `_`; slice(_, b) == b."""
    if is_t(a):
        assert len(a) == len(b)
        return tuple(e for x, y in zip(a, b) for e in lift_slice(x, y))
    return b if a is None else ()


def repeat(n, x):
    return x if n == 1 else (x,) * n


# ---------------------------------------------------------------------------------------------------
# Layout basics

def fmt_layout(l):
    return fmt(l.shape) + ":" + fmt(l.stride)


def mode(l, i):
    if is_t(l.shape):
        return Layout(l.shape[i], l.stride[i])
    assert i == 0
    return l


def make_layout(*ls):
    return Layout(tuple(l.shape for l in ls), tuple(l.stride for l in ls))


def size(l):
    return product(l.shape)


def cosize(l):
    # layout.hpp coshape: 1 + sum((s-1)*|d|)
    return 1 + sum((s - 1) * abs(d) for s, d in zip(flatten(l.shape), flatten(l.stride)))


def values(l):
    return [crd2idx(i, l.shape, l.stride) for i in range(size(l))]


def sl(l, crd):
    return Layout(slice_t(crd, l.shape), slice_t(crd, l.stride))


# ---------------------------------------------------------------------------------------------------
# The operations, ported from layout.hpp with static integers

def bw_coalesce(fs, fd, new_s, new_d):
    new_s, new_d = [new_s], [new_d]
    for s, d in zip(reversed(fs[:-1]), reversed(fd[:-1])):
        if s == 1:
            continue
        if len(new_s) == 1 and new_s[0] == 1:
            new_s, new_d = [s], [d]
        elif s * d == new_d[0]:
            new_s[0] = s * new_s[0]
            new_d[0] = d
        else:
            new_s.insert(0, s)
            new_d.insert(0, d)
    if len(new_s) == 1 and new_s[0] == 1:
        return Layout(1, 0)
    return Layout(unwrap(tuple(new_s)), unwrap(tuple(new_d)))


def coalesce(l, profile=None):
    if is_t(profile):
        if len(profile) > rank(l.shape):
            raise Reject("profile rank")
        mods = [coalesce(mode(l, i), profile[i]) for i in range(len(profile))]
        mods += [mode(l, i) for i in range(len(profile), rank(l.shape))]
        return make_layout(*mods)
    fs, fd = flatten(l.shape), flatten(l.stride)
    return bw_coalesce(fs, fd, fs[-1], fd[-1])


def coalesce_x(l):
    fs, fd = flatten(l.shape), flatten(l.stride)
    return bw_coalesce(fs, fd, 2 if fs[-1] == 1 else fs[-1], fd[-1])


def filter_(l):
    fs = tuple(1 if d == 0 else s for s, d in zip(flatten(l.shape), flatten(l.stride)))
    return coalesce(Layout(fs, flatten(l.stride)))


def composition_impl(ls, ld, rs, rd):
    if is_t(rs):
        return make_layout(*[composition_impl(ls, ld, s, d) for s, d in zip(rs, rd)])
    if rd == 0:
        return Layout(rs, rd)
    if not is_t(ls):
        return Layout(rs, rd * ld)
    res_s, res_d = [], []
    rest_s, rest_d = rs, rd
    for cs, cd in zip(ls[:-1], ld[:-1]):
        if not (rest_d % cs == 0 or rest_d < cs):
            raise Reject("Stride Divisibility Condition")
        next_s = ceil_div(cs, abs(rest_d))
        next_d = ceil_div(abs(rest_d), cs) * (1 if rest_d > 0 else -1)
        if next_s == 1 or rest_s == 1:
            rest_d = next_d
            continue
        new_s = min(next_s, rest_s)
        if rest_s % new_s != 0:
            raise Reject("Shape Divisibility Condition")
        res_s.append(new_s)
        res_d.append(rest_d * cd)
        rest_s = rest_s // new_s
        rest_d = next_d
    if not res_s:
        return Layout(rest_s, rest_d * ld[-1])
    if rest_s == 1:
        return Layout(unwrap(tuple(res_s)), unwrap(tuple(res_d)))
    return Layout(tuple(res_s) + (rest_s,), tuple(res_d) + (rest_d * ld[-1],))


def composition(a, b):
    """b: a Layout, or a tiler tuple (list) whose items are Layouts or tiler tuples."""
    if isinstance(b, list):
        if len(b) > rank(a.shape):
            raise Reject("tiler rank")
        return make_layout(*[composition(mode(a, i), t) for i, t in enumerate(b)])
    f = coalesce_x(a)
    res = composition_impl(f.shape, f.stride, b.shape, b.stride)
    check_composition(a, b, res)
    return res


def check_composition(a, b, res):
    """The post-condition res(i) == a(b(i)) for i < size(b); a is evaluated past its size through
    its last mode, as C++ does. Negative b(i) is only meaningful for an a that is linear. When a ends
    in extent-1 modes, C++ lets b run past a's last other mode (coalesce_x keeps the extent-1 mode
    as a mode of extent 2, which the rest of b fills), so there the post-condition is asked only of
    the i with b(i) < size(a): rute's documented exception (`composition`'s doc)."""
    bv = values(b)
    linear = not is_t(coalesce(a).shape)
    if not linear and any(x < 0 for x in bv):
        raise Skip("a(b(i)) with b(i) < 0")
    unit_tail = flatten(a.shape)[-1] == 1
    want = [x * coalesce(a).stride if linear else crd2idx(x, a.shape, a.stride) for x in bv]
    if size(res) != size(b):
        raise Skip("C++ result is not the composition")
    got = values(res)
    for x, w, r in zip(bv, want, got):
        if r != w and not (unit_tail and not 0 <= x < size(a)):
            raise Skip("C++ result is not the composition")


def complement(l, cotarget=None):
    f = filter_(l)
    if cotarget is None:
        cotarget = cosize(f)
    if f.stride == 0:
        n = product(cotarget)
        return Layout(n, compact_col_major(n, 1))  # make_layout(coalesce(cotarget))
    shape, stride = list(wrap(f.shape)), list(wrap(f.stride))
    r = len(shape)
    res_s, res_d = [], [1]
    for i in range(r - 1):
        m = min(stride)
        k = stride.index(m)
        new_s = m // res_d[i]
        if new_s == 0:
            raise Reject("Non-injective Layout detected in complement.")
        res_s.append(new_s)
        res_d.append(m * shape[k])
        del shape[k]
        del stride[k]
    new_s = stride[0] // res_d[r - 1]
    if new_s == 0:
        raise Reject("Non-injective Layout detected in complement.")
    res_s.append(new_s)
    new_d = stride[0] * shape[0]
    rest_s = product(ceil_div(cotarget, new_d))
    return coalesce(Layout((tuple(res_s), rest_s), (tuple(res_d), new_d)))


def sorted_modes(strides):
    """SortByKey over strides; callers avoid equal keys so stability never matters."""
    return sorted(range(len(strides)), key=lambda i: strides[i])


def right_inverse(l):
    c = coalesce(l)
    ls, ld = wrap(c.shape), wrap(c.stride)
    pre = [1]
    for s in ls:
        pre.append(pre[-1] * s)
    res_s, res_d, curr = [1], [0], 1
    for i in sorted_modes(ld):
        if ld[i] == curr:
            res_s.append(ls[i])
            res_d.append(pre[i])
            curr = ls[i] * ld[i]
    r = coalesce(Layout(tuple(res_s), tuple(res_d)))
    assert all(crd2idx(crd2idx(i, r.shape, r.stride), l.shape, l.stride) == i for i in range(size(r)))
    return r


def left_inverse(l):
    c = coalesce(l)
    ls, ld = wrap(c.shape), wrap(c.stride)
    pre = [1]
    for s in ls:
        pre.append(pre[-1] * s)
    order = sorted_modes(ld)
    res_s, res_d = [], [0]
    for i in order:
        if ld[i] == 0:
            continue
        sz = product(tuple(res_s))
        if ld[i] % sz != 0:
            raise Reject("Left inverse divisibility condition")
        res_s.append(ld[i] // sz)
        res_d.append(pre[i])
    r = coalesce(Layout(tuple(res_s) + (ls[order[-1]],), tuple(res_d)))
    # The quasi-inverse post-condition l(r(l(i))) == l(i); C++ does not promise it for every
    # non-injective layout that passes its divisibility check, and such cases are left out.
    lv = values(l)
    back = [crd2idx(x, r.shape, r.stride) for x in lv]
    if any(not 0 <= j < len(lv) or lv[j] != x for j, x in zip(back, lv)):
        raise Skip("left_inverse post-condition")
    return r


def transform_tiler(a, t, f):
    """transform_layout(layout, tiler, f): f on the leading modes, the rest of `a` kept."""
    if len(t) > rank(a.shape):
        raise Reject("Too many modes in tiler.")
    mods = [f(mode(a, i), x) for i, x in enumerate(t)]
    mods += [mode(a, i) for i in range(len(t), rank(a.shape))]
    return make_layout(*mods)


def logical_divide(a, t):
    if isinstance(t, list):
        return transform_tiler(a, t, logical_divide)
    comp = complement(t, coalesce(a).shape)
    return composition(a, make_layout(t, comp))


def zip2_by(x, guide):
    if isinstance(guide, list):
        split = [zip2_by(x[i], g) for i, g in enumerate(guide)]
        return (tuple(s[0] for s in split), tuple(s[1] for s in split) + x[len(guide):])
    assert is_t(x) and len(x) == 2, "Mismatched ranks"
    return x


def tile_unzip(l, t):
    return Layout(zip2_by(l.shape, t), zip2_by(l.stride, t))


def zipped_divide(a, t):
    return tile_unzip(logical_divide(a, t), t)


def tiled_of(z):
    return sl(z, (None, repeat(rank(z.shape[1]), None)))


def flat_of(z):
    return sl(z, (repeat(rank(z.shape[0]), None), repeat(rank(z.shape[1]), None)))


def tiled_divide(a, t):
    return tiled_of(zipped_divide(a, t))


def flat_divide(a, t):
    return flat_of(zipped_divide(a, t))


def logical_product(a, t):
    if isinstance(t, list):
        return transform_tiler(a, t, logical_product)
    return make_layout(a, composition(complement(a, size(a) * cosize(t)), t))


def zipped_product(a, t):
    return tile_unzip(logical_product(a, t), t)


def tiled_product(a, t):
    return tiled_of(zipped_product(a, t))


def flat_product(a, t):
    return flat_of(zipped_product(a, t))


def pad(l, r):
    return Layout(append_n(l.shape, r, 1), append_n(l.stride, r, 0))


def blocked_product(a, b):
    r = max(rank(a.shape), rank(b.shape))
    res = logical_product(pad(a, r), pad(b, r))
    return Layout(zip_t(res.shape[0], res.shape[1]), zip_t(res.stride[0], res.stride[1]))


def raked_product(a, b):
    r = max(rank(a.shape), rank(b.shape))
    res = logical_product(pad(a, r), pad(b, r))
    return Layout(zip_t(res.shape[1], res.shape[0]), zip_t(res.stride[1], res.stride[0]))


def compact_col_major(shape, start):
    """stride.hpp compact_major<LayoutLeft>: a static shape-1 mode gets stride 0."""
    if is_t(shape):
        out = []
        for s in shape:
            out.append(compact_col_major(s, start))
            start *= product(s)
        return tuple(out)
    return 0 if shape == 1 else start


def make_ordered_layout(shape, order):
    """stride.hpp compact_order with a static order congruent to the top level of `shape`."""
    if order is None:
        return Layout(shape, compact_col_major(shape, 1))
    if rank(shape) != rank(order):
        raise Reject("Need equal rank of shape and order")
    ref = [product(s) for s in wrap(shape)]
    orders = list(wrap(order))
    strides = []
    for s, o in zip(wrap(shape), orders):
        start = product(tuple(r for r, q in zip(ref, orders) if q < o))
        strides.append(compact_col_major(s, start))
    return Layout(shape, tuple(strides) if is_t(shape) else strides[0])


def tile_to_shape(block, trg, order=None):
    if rank(block.shape) > rank(trg):
        raise Reject("Rank of layout must be <= rank of target shape.")
    r = rank(trg)
    padded = pad(block, r)
    bshape = tuple(product(s) for s in wrap(padded.shape))
    tshape = tuple(product(s) for s in wrap(trg))
    if any(t % b != 0 for t, b in zip(tshape, bshape)):
        raise Reject("tile_to_shape: block shape does not divide the target shape.")
    pshape = ceil_div(tshape, bshape)
    return blocked_product(padded, make_ordered_layout(pshape, order))


def map_leaves(shape, stride, f):
    if is_t(shape):
        parts = [map_leaves(s, d, f) for s, d in zip(shape, stride)]
        return tuple(p[0] for p in parts), tuple(p[1] for p in parts)
    return f(shape, stride)


def upcast(l, n):
    def one(s, d):
        if d == 0:
            return s, d
        # C++ `%` truncates toward zero; with n > 0 only the sign of the remainder differs.
        if not (abs(d) % n == 0 or n % d == 0):
            raise Reject("Divisibility condition")
        return ceil_div(s, ceil_div(n, abs(d))), (1 if d > 0 else -1) * ceil_div(abs(d), n)
    return Layout(*map_leaves(l.shape, l.stride, one))


def downcast(l, n):
    if 1 not in flatten(l.stride):
        raise Reject("Downcast requires adjacent elements")
    def one(s, d):
        return (s * n, d) if d in (1, -1) else (s, d * n)
    return Layout(*map_leaves(l.shape, l.stride, one))


def recast_layout(l, old_bits, new_bits):
    g = math.gcd(new_bits, old_bits)
    num, den = new_bits // g, old_bits // g
    if num == 1 and den == 1:
        return l
    if num == 1:
        return downcast(l, den)
    if den == 1:
        return upcast(l, num)
    return downcast(upcast(l, num), den)


def swizzle(b, m, s, x):
    """swizzle.hpp: x ^ shiftr(x & yyy_msk, s), yyy_msk = ((1<<b)-1) << (m + max(0,s))."""
    yyy = ((1 << b) - 1) << (m + max(0, s))
    y = x & yyy
    return x ^ (y >> s if s >= 0 else y << -s)


def sw_ok(b, m, s):
    return b >= 0 and m >= 0 and abs(s) >= b


# ---------------------------------------------------------------------------------------------------
# Expression text

def fmt_tiler(t):
    if isinstance(t, list):
        return "(" + ",".join(fmt_tiler(x) for x in t) + ")"
    return fmt_layout(t)


def fmt_arg(x):
    if isinstance(x, Layout):
        return fmt_layout(x)
    if isinstance(x, list):
        return fmt_tiler(x)
    return fmt(x)


def call(name, *args):
    return f"{name}(" + ",".join(fmt_arg(a) for a in args) + ")"


# ---------------------------------------------------------------------------------------------------
# pycute cross-check (statistics only; the C++ port is what is emitted)

def to_pycute_tiler(t):
    return tuple(to_pycute_tiler(x) for x in t) if isinstance(t, list) else t


PYCUTE_OPS = {
    "coalesce": lambda a, *p: pycute.coalesce(a, *p),
    "filter": lambda a: pycute.filter(a),
    "composition": lambda a, b: pycute.composition(a, to_pycute_tiler(b)),
    "complement": lambda a, *c: pycute.complement(a, *c),
    "right_inverse": lambda a: pycute.right_inverse(a),
    "left_inverse": lambda a: pycute.left_inverse(a),
    "logical_divide": lambda a, b: pycute.logical_divide(a, to_pycute_tiler(b)),
    "zipped_divide": lambda a, b: pycute.zipped_divide(a, to_pycute_tiler(b)),
    "tiled_divide": lambda a, b: pycute.tiled_divide(a, to_pycute_tiler(b)),
    "logical_product": lambda a, b: pycute.logical_product(a, to_pycute_tiler(b)),
    "zipped_product": lambda a, b: pycute.zipped_product(a, to_pycute_tiler(b)),
    "tiled_product": lambda a, b: pycute.tiled_product(a, to_pycute_tiler(b)),
    "size": lambda a: pycute.size(a),
    "cosize": lambda a: pycute.cosize(a),
}


class Out:
    def __init__(self):
        self.lines = []
        self.seen = set()
        self.count = {}
        self.agree = {}
        self.diffs = []

    def note(self, op, key, expr="", mine="", theirs=""):
        d = self.agree.setdefault(op, {"same": 0, "values": 0, "differs": 0, "fails": 0})
        d[key] += 1
        if key != "same":
            self.diffs.append(f"{op} {key}: {expr}  C++ {mine}  pycute {theirs}")

    def cross_check(self, op, args, res):
        """Run pycute's own operation too; False (leave the case out) when pycute fails on it."""
        f = PYCUTE_OPS.get(op)
        if f is None:
            return True
        expr = call(op, *args)
        mine = res if isinstance(res, int) else fmt_layout(res)
        try:
            p = f(*args)
        except Exception as e:  # pycute asserts or recurses where C++ may not: counted, not emitted
            self.note(op, "fails", expr, mine, repr(e))
            return False
        if op == "composition" and isinstance(args[1], list):
            p = make_layout(*[mode(p, i) for i in range(len(args[1]))])  # fix-up 5
        theirs = p if isinstance(p, int) else fmt_layout(p)
        if isinstance(res, int):
            self.note(op, "same" if p == res else "differs", expr, mine, theirs)
        elif isinstance(p, Layout) and theirs == mine:
            self.note(op, "same", expr)
        elif isinstance(p, Layout) and size(p) == size(res) and values(p) == values(res):
            self.note(op, "values", expr, mine, theirs)
        else:
            self.note(op, "differs", expr, mine, theirs)
        return True

    def emit(self, op, expr, printed, vals):
        if expr in self.seen:
            return False
        self.seen.add(expr)
        self.lines.append(f"{expr}\t{printed}\t{vals}")
        self.count[op] = self.count.get(op, 0) + 1
        return True

    def case(self, op, args, fn=None, limit=512):
        """Evaluate op(*args) with the C++ port and emit it; False when skipped or rejected."""
        expr = call(op, *args)
        if expr in self.seen:
            return False
        fn = fn or OPS[op]
        try:
            res = fn(*args)
        except (Reject, Skip):
            return False
        if not self.cross_check(op, args, res):
            return False
        if isinstance(res, int):
            ok = self.emit(op, expr, str(res), str(res))
        else:
            if size(res) > limit:
                return False
            ok = self.emit(op, expr, fmt_layout(res), " ".join(map(str, values(res))))
        return ok

    def error(self, op, expr):
        if expr in self.seen:
            return False
        self.seen.add(expr)
        self.lines.append(f"{expr}\tERROR\t")
        self.count[op + " (ERROR)"] = self.count.get(op + " (ERROR)", 0) + 1
        return True


OPS = {
    "size": size,
    "cosize": cosize,
    "rank": lambda l: rank(l.shape),
    "depth": lambda l: depth(l.shape),
    "coalesce": coalesce,
    "filter": filter_,
    "composition": composition,
    "complement": complement,
    "right_inverse": right_inverse,
    "left_inverse": left_inverse,
    "logical_divide": logical_divide,
    "zipped_divide": zipped_divide,
    "tiled_divide": tiled_divide,
    "flat_divide": flat_divide,
    "logical_product": logical_product,
    "zipped_product": zipped_product,
    "tiled_product": tiled_product,
    "flat_product": flat_product,
    "blocked_product": blocked_product,
    "raked_product": raked_product,
    "tile_to_shape": tile_to_shape,
    "make_ordered_layout": make_ordered_layout,
    "recast_layout": recast_layout,
    "upcast": upcast,
    "downcast": downcast,
}


# ---------------------------------------------------------------------------------------------------
# Random inputs

SMALL = [1, 2, 2, 2, 3, 4, 4, 4, 5, 6, 8, 8]


def rand_shape(rng, max_size, max_rank=3, nest=True):
    """A shape of depth <= 2 (an int, or a tuple of ints and tuples of ints), size <= max_size."""
    for _ in range(100):
        r = rng.choice([1, 1, 2, 2, 2, 3][: 2 + 2 * max_rank - 2])
        if r == 1 and rng.random() < 0.6:
            shp = rng.choice(SMALL + [16, 32])
        else:
            modes = []
            for _ in range(r):
                if nest and rng.random() < 0.3:
                    modes.append(tuple(rng.choice(SMALL) for _ in range(rng.choice([2, 2, 3]))))
                else:
                    modes.append(rng.choice(SMALL))
            shp = tuple(modes)
        if product(shp) <= max_size:
            return shp
    return rng.choice([2, 4, 8])


def strides_like(shape, flat_strides):
    it = iter(flat_strides)

    def go(s):
        return tuple(go(x) for x in s) if is_t(s) else next(it)

    return go(shape)


def rand_stride(rng, shape, kind=None):
    fs = flatten(shape)
    kind = kind or rng.choice(["col", "col", "perm", "perm", "gappy", "zero", "neg", "any"])
    n = len(fs)
    if kind == "col":
        return pycute.prefix_product(shape)
    if kind in ("perm", "gappy", "zero"):
        order = list(range(n))
        rng.shuffle(order)
        d = [0] * n
        cur = 1
        for i in order:
            if kind == "gappy" and rng.random() < 0.3:
                cur *= rng.choice([2, 3])
            d[i] = cur
            cur *= fs[i]
        if kind == "zero":
            d[rng.randrange(n)] = 0
        return strides_like(shape, d)
    if kind == "neg":
        d = list(flatten(pycute.prefix_product(shape)))
        d[rng.randrange(n)] *= -1
        return strides_like(shape, d)
    return strides_like(shape, [rng.choice([0, 1, 2, 3, 4, 8, 16, -1, -2]) for _ in range(n)])


def rand_layout(rng, max_size=64, kind=None, **kw):
    shp = rand_shape(rng, max_size, **kw)
    return Layout(shp, rand_stride(rng, shp, kind))


def nonneg(l):
    return all(d >= 0 for d in flatten(l.stride))


def distinct_strides(l):
    d = wrap(coalesce(l).stride)
    return len(set(d)) == len(d)


def divisors(n):
    return [k for k in range(1, n + 1) if n % k == 0]


def rand_tile_layout(rng, n, allow_stride=True):
    """A layout tile for an n-sized mode: d:s with d*s dividing n mostly (or not, sometimes)."""
    d = rng.choice(divisors(n))
    if allow_stride and rng.random() < 0.35:
        rest = n // d
        s = rng.choice(divisors(rest))
        if rng.random() < 0.3 and rest // s > 1:
            sub = rng.choice(divisors(rest // s))
            return Layout((d, sub), (s, s * d * rng.choice([1, 1, 2])))
        return Layout(d, s)
    return Layout(d, 1)


def rand_tiler(rng, a):
    """A layout tiler (whole-layout) or a tuple tiler of per-mode layouts."""
    if rng.random() < 0.35 or rank(a.shape) == 1 and rng.random() < 0.5:
        return rand_tile_layout(rng, size(a))
    k = rng.randint(1, rank(a.shape))
    return [rand_tile_layout(rng, product(wrap(a.shape)[i])) for i in range(k)]


def rand_block_tiler(rng, max_size=16):
    shp = rand_shape(rng, max_size, nest=False)
    return Layout(shp, rand_stride(rng, shp, rng.choice(["col", "perm", "gappy"])))


# ---------------------------------------------------------------------------------------------------
# The canonical examples from CuTe's documentation (media/docs/cute/02_layout_algebra.md, 01_layout.md)

DOC_CASES = [
    ("coalesce", (Layout((2, (1, 6)), (1, (6, 2))),)),
    ("coalesce", (Layout((2, (1, 6)), (1, (6, 2))), (1, 1))),
    ("coalesce", (Layout((2, (1, 6)), (1, (6, 2))), (1,))),
    ("composition", (Layout((6, 2), (8, 2)), Layout((4, 3), (3, 1)))),
    ("composition", (Layout(20, 2), Layout((5, 4), (4, 1)))),
    ("composition", (Layout((10, 2), (16, 4)), Layout((5, 4), (1, 5)))),
    ("composition", (Layout((12, (4, 8)), (59, (13, 1))), [Layout(3, 4), Layout(8, 2)])),
    ("composition", (Layout((12, (4, 8)), (59, (13, 1))), [Layout(3, 1), Layout(8, 1)])),
    ("complement", (Layout(4, 1), 24)),
    ("complement", (Layout(6, 4), 24)),
    ("complement", (Layout((4, 6), (1, 4)), 24)),
    ("complement", (Layout(4, 2), 24)),
    ("complement", (Layout((2, 4), (1, 6)), 24)),
    ("complement", (Layout((2, 2), (1, 6)), 24)),
    ("logical_divide", (Layout((4, 2, 3), (2, 1, 8)), Layout(4, 2))),
    ("logical_divide", (Layout((9, (4, 8)), (59, (13, 1))), [Layout(3, 3), Layout((2, 4), (1, 8))])),
    ("zipped_divide", (Layout((9, (4, 8)), (59, (13, 1))), [Layout(3, 3), Layout((2, 4), (1, 8))])),
    ("tiled_divide", (Layout((9, (4, 8)), (59, (13, 1))), [Layout(3, 3), Layout((2, 4), (1, 8))])),
    ("flat_divide", (Layout((9, (4, 8)), (59, (13, 1))), [Layout(3, 3), Layout((2, 4), (1, 8))])),
    ("logical_product", (Layout((2, 2), (4, 1)), Layout(6, 1))),
    ("logical_product", (Layout((2, 2), (4, 1)), Layout((4, 2), (2, 1)))),
    ("logical_product", (Layout((2, 5), (5, 1)), [Layout(3, 5), Layout(4, 6)])),
    ("blocked_product", (Layout((2, 5), (5, 1)), Layout((3, 4), (1, 3)))),
    ("raked_product", (Layout((2, 5), (5, 1)), Layout((3, 4), (1, 3)))),
    ("zipped_product", (Layout((2, 5), (5, 1)), [Layout(3, 5), Layout(4, 6)])),
    ("tiled_product", (Layout((2, 5), (5, 1)), [Layout(3, 5), Layout(4, 6)])),
    ("flat_product", (Layout((2, 5), (5, 1)), [Layout(3, 5), Layout(4, 6)])),
    ("right_inverse", (Layout((4, (2, 2)), (2, (1, 8))),)),
    ("left_inverse", (Layout((4, (2, 2)), (2, (1, 8))),)),
    ("make_ordered_layout", ((2, 2, 2, 2), (0, 2, 3, 1))),
    ("tile_to_shape", (Layout((8, 8), (8, 1)), (32, 64))),
    ("tile_to_shape", (Layout((8, 8), (8, 1)), (32, 64), (1, 0))),
    ("upcast", (Layout((4, 8), (8, 1)), 2)),
    ("downcast", (Layout((4, 8), (8, 1)), 2)),
    ("recast_layout", (Layout((8, 64), (64, 1)), 16, 128)),
    ("recast_layout", (Layout((8, 64), (64, 1)), 16, 8)),
]


# Divides of a layout ending in an extent-1 mode by a tile whose stride neither divides nor is
# divided by the extent before it, so that the tile's rest runs past that mode (C++ fills the kept
# extent-1 mode with it). Checked against CuTe's C++ with verify_cxx.py; emitted last, so that the
# random cases above do not depend on them.
UNIT_TAIL_CASES = [
    ("tiled_divide", (Layout((7, 1), (4, 3)), Layout(8, 2))),
    ("logical_divide", (Layout((7, 1), (4, 3)), Layout(8, 2))),
    ("zipped_divide", (Layout((7, 1), (4, 3)), Layout(8, 2))),
    ("flat_divide", (Layout((7, 1), (4, 3)), Layout(8, 2))),
    ("composition", (Layout((7, 1), (4, 3)), Layout((8, 2), (2, 1)))),
    ("tiled_divide", (Layout((7, 1, 1), (4, 3, 5)), Layout(8, 2))),
    ("tiled_divide", (Layout(((7, 1), 3), ((4, 3), 100)), [Layout(8, 2)])),
    ("logical_divide", (Layout(((5, 1),), ((1, 0),)), [Layout(6, 2)])),
    ("tiled_divide", (Layout((4, (3, 1)), (3, (1, 16))), [Layout(2, 3), Layout(4, 2)])),
]


def gen(out, rng):
    for op, args in DOC_CASES:
        out.case(op, args)

    def many(op, n, make, tries=20):
        got = 0
        for _ in range(n * tries):
            if got >= n:
                return
            args = make()
            if args is not None and out.case(op, args):
                got += 1

    many("size", 150, lambda: (rand_layout(rng, 512),))
    many("cosize", 200, lambda: (rand_layout(rng, 512),))
    many("rank", 100, lambda: (rand_layout(rng, 512),))
    many("depth", 100, lambda: (rand_layout(rng, 512),))
    many("coalesce", 400, lambda: (rand_layout(rng, 128),))

    def coal_prof():
        a = rand_layout(rng, 128)
        r = rank(a.shape)
        return (a, tuple(1 for _ in range(rng.randint(1, r))))

    many("coalesce", 150, coal_prof)
    many("filter", 300, lambda: (rand_layout(rng, 128, kind=rng.choice(["zero", "any", "col"])),))

    def comp():
        a = rand_layout(rng, 256, kind=rng.choice(["col", "perm", "gappy", "zero", "neg"]))
        if rng.random() < 0.3:
            return (a, rand_tiler(rng, a))
        b = rand_layout(rng, 64, kind=rng.choice(["col", "perm", "gappy", "zero", "neg", "any"]))
        if size(a) % size(b) != 0 and rng.random() < 0.7:
            return None
        return (a, b)

    many("composition", 900, comp)

    def compl():
        a = rand_layout(rng, 64, kind=rng.choice(["col", "perm", "gappy", "zero"]))
        if rng.random() < 0.5:
            return (a,)
        return (a, cosize(a) * rng.choice([1, 2, 3, 4]) + rng.choice([0, 0, 1, 5]))

    many("complement", 500, compl)
    nonneg_inj = lambda: rand_layout(rng, 256, kind=rng.choice(["col", "perm", "gappy", "zero", "neg"]))

    def inv_case(require_nonneg):
        a = nonneg_inj()
        if not distinct_strides(a) or (require_nonneg and not nonneg(a)):
            return None
        return (a,)

    many("right_inverse", 400, lambda: inv_case(False))
    many("left_inverse", 350, lambda: inv_case(True))

    def div():
        a = rand_layout(rng, 256, kind=rng.choice(["col", "col", "perm", "gappy", "zero", "neg"]))
        return (a, rand_tiler(rng, a))

    for op in ["logical_divide", "zipped_divide", "tiled_divide", "flat_divide"]:
        many(op, 350, div)

    def prod():
        a = rand_layout(rng, 16, kind=rng.choice(["col", "perm", "gappy"]), max_rank=2)
        if rng.random() < 0.5:
            return (a, rand_block_tiler(rng, 16))
        k = rng.randint(1, rank(a.shape))
        return (a, [rand_block_tiler(rng, 6) if rng.random() < 0.3 else Layout(rng.choice([1, 2, 3, 4]), 1)
                    for _ in range(k)])

    for op in ["logical_product", "zipped_product", "tiled_product", "flat_product"]:
        many(op, 250, prod)

    def bprod():
        a = rand_layout(rng, 16, kind=rng.choice(["col", "perm"]), nest=rng.random() < 0.3)
        b = rand_block_tiler(rng, 16)
        return (a, b)

    many("blocked_product", 300, bprod)
    many("raked_product", 300, bprod)

    def t2s():
        a = rand_layout(rng, 32, kind=rng.choice(["col", "perm"]), max_rank=2)
        r = rng.choice([2, 2, 3]) if rank(a.shape) <= 2 else 3
        r = max(r, rank(a.shape))
        base = [product(s) for s in wrap(pad(a, r).shape)]
        trg = tuple(b * rng.choice([1, 2, 3, 4]) for b in base)
        if product(trg) > 512:
            return None
        if rng.random() < 0.4:
            order = list(range(r))
            rng.shuffle(order)
            return (a, trg, tuple(order))
        return (a, trg)

    many("tile_to_shape", 300, t2s)

    def ordered():
        shp = rand_shape(rng, 512, nest=rng.random() < 0.3)
        r = rank(shp)
        order = list(range(r))
        rng.shuffle(order)
        if r == 1:
            return None
        return (shp, tuple(order))

    many("make_ordered_layout", 200, ordered)

    def rec():
        a = rand_layout(rng, 128, kind=rng.choice(["col", "perm", "gappy", "zero"]))
        bits = [4, 8, 16, 32, 64, 128]
        return (a, rng.choice(bits), rng.choice(bits))

    many("recast_layout", 300, rec)
    many("upcast", 250, lambda: (rand_layout(rng, 256, kind=rng.choice(["col", "perm", "gappy", "zero", "neg"])),
                                 rng.choice([2, 4, 8])))
    many("downcast", 250, lambda: (rand_layout(rng, 64, kind=rng.choice(["col", "perm", "zero", "neg"])),
                                   rng.choice([2, 4, 8])))

    gen_swizzles(out, rng)
    gen_errors(out, rng)
    gen_unit_tails(out, rng)
    for op, args in UNIT_TAIL_CASES:
        out.case(op, args)


def gen_swizzles(out, rng):
    canon = [
        ((3, 3, 3), 0, Layout((8, 64), (64, 1))),
        ((3, 3, 3), 0, Layout((8, 32), (32, 1))),
        ((2, 3, 3), 0, Layout((8, 32), (32, 1))),
        ((3, 4, 3), 0, Layout((8, 64), (64, 1))),
        ((2, 4, 3), 0, Layout((8, 32), (32, 1))),
        ((1, 4, 3), 0, Layout((8, 16), (16, 1))),
        ((3, 3, 3), 0, Layout((64, 8), (1, 64))),
    ]
    cases = list(canon)
    for _ in range(400):
        b = rng.randint(0, 3)
        m = rng.randint(0, 4)
        s = rng.choice([b, b + 1, b + 2, -b, -b - 1]) if b else rng.choice([1, 2, 3, -2])
        if not sw_ok(b, m, s) or m + b + abs(s) > 12:
            continue
        l = rand_layout(rng, 512, kind=rng.choice(["col", "perm", "gappy"]))
        off = rng.choice([0, 0, 0, 8, 16, 64, 3])
        cases.append(((b, m, s), off, l))
    for (b, m, s), off, l in cases:
        sw = f"Sw<{b},{m},{s}>"
        vals = " ".join(str(swizzle(b, m, s, off + v)) for v in values(l))
        if len(out.lines) and out.count.get("swizzle", 0) >= 300:
            break
        printed = f"{sw} o {off} o {fmt_layout(l)}"
        out.emit("swizzle", printed, printed, vals)
        if off == 0 and out.count.get("composition(Sw)", 0) < 150:
            expr = f"composition({sw},{fmt_layout(l)})"
            # swizzle_layout.hpp: composition(Swizzle<0,M,S>, Int<0>, layout) is the layout itself
            res = fmt_layout(l) if b == 0 else printed
            out.emit("composition(Sw)", expr, res, vals)
        if out.count.get("size(composed)", 0) < 40:
            out.emit("size(composed)", f"size({printed})", str(size(l)), str(size(l)))
            out.emit("cosize(composed)", f"cosize({printed})", str(cosize(l)), str(cosize(l)))


def gen_errors(out, rng):
    errs = [
        ("layout", "(4,2):(1,2,3)"),
        ("layout", "(2,(2,2)):(1,2)"),
        ("layout", "((2,2),2):(1,(2,4))"),
        ("layout", "4:(1,2)"),
        ("swizzle", "Sw<3,3,2> o 0 o (8,64):(64,1)"),
        ("swizzle", "composition(Sw<3,3,1>,(8,64):(64,1))"),
        ("make_ordered_layout", "make_ordered_layout((2,3,4),(0,1))"),
    ]
    for op, e in errs:
        out.error(op, e)

    def try_err(op, make, n):
        got = 0
        for _ in range(n * 200):
            if got >= n:
                return
            args = make()
            if args is None:
                continue
            try:
                OPS[op](*args)
            except Skip:
                continue
            except Reject:
                if out.error(op, call(op, *args)):
                    got += 1

    try_err("complement", lambda: (rand_layout(rng, 64, kind="any"),), 25)
    try_err("composition", lambda: (rand_layout(rng, 256, kind=rng.choice(["perm", "gappy"])),
                                    rand_layout(rng, 64, kind=rng.choice(["gappy", "any"]))), 30)
    try_err("left_inverse", lambda: (lambda a: (a,) if nonneg(a) and distinct_strides(a) else None)(
        rand_layout(rng, 64, kind="any")), 15)
    try_err("upcast", lambda: (rand_layout(rng, 64, kind="any"), rng.choice([4, 8])), 15)
    try_err("downcast", lambda: (rand_layout(rng, 64, kind="gappy"), 2), 10)
    try_err("tile_to_shape", lambda: (rand_layout(rng, 16, kind="col", max_rank=2),
                                      (rng.choice([3, 5, 6, 12]), rng.choice([5, 7, 10]))), 15)
    try_err("logical_divide", lambda: (Layout(8, 1), [Layout(2, 1), Layout(2, 1)]), 1)
    try_err("logical_divide", lambda: (Layout((4, 8), (1, 4)), [Layout(2, 1), Layout(2, 1), Layout(2, 1)]), 1)


def with_unit_tail(rng, a):
    """`a` ending in extent-1 modes: one or two appended (any stride), or its last extent set to 1."""
    fs, fd = list(flatten(a.shape)), list(flatten(a.stride))
    how = rng.choice(["append", "append", "append2", "last", "nested"])
    if how == "last" and len(fs) > 1:
        fs[-1] = 1
        return Layout(strides_like(a.shape, fs), a.stride)
    d1, d2 = rng.choice([0, 0, 1, 2, 3, 16]), rng.choice([0, 1, 5])
    if how == "nested" and is_t(a.shape):
        last_s, last_d = a.shape[-1], a.stride[-1]
        return Layout(a.shape[:-1] + ((last_s, 1),), a.stride[:-1] + ((last_d, d1),))
    extra_s, extra_d = ((1, 1), (d1, d2)) if how == "append2" else ((1,), (d1,))
    return Layout(wrap(a.shape) + extra_s, wrap(a.stride) + extra_d)


def gen_unit_tails(out, rng):
    """Divides of layouts that end in extent-1 modes by tiles that need not divide them: C++ drops
    the extent-1 modes (the cotarget is `shape(coalesce(A))`) and lets the rest mode run past A's
    last other mode, which extends (composition_impl has no carry check)."""
    def tile(n):
        d = rng.randint(2, n + 2)
        return Layout(d, rng.choice([1, 1, 1, 2])) if d > 1 else Layout(1, 0)

    def div():
        a = with_unit_tail(rng, rand_layout(rng, 64, kind=rng.choice(["col", "col", "perm", "gappy"])))
        if rng.random() < 0.6:
            return (a, tile(size(a)))
        k = rng.randint(1, rank(a.shape))
        return (a, [tile(product(wrap(a.shape)[i])) for i in range(k)])

    def comp():
        a = with_unit_tail(rng, rand_layout(rng, 64, kind=rng.choice(["col", "perm", "gappy"])))
        t = tile(size(a))
        return (a, make_layout(t, complement(t, coalesce(a).shape)))

    for op in ["logical_divide", "zipped_divide", "tiled_divide", "flat_divide"]:
        many_of(out, op, 60, div)
    many_of(out, "composition", 60, comp)


def many_of(out, op, n, make, tries=40):
    """Emit up to n cases of op(*make()) that C++ computes (those it rejects are not emitted)."""
    got = 0
    for _ in range(n * tries):
        if got >= n:
            return
        args = make()
        if args is not None and out.case(op, args):
            got += 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", help="output file (default: stdout)")
    ap.add_argument("--diffs", action="store_true",
                    help="print every case where pycute disagrees with the C++ port to stderr")
    ap.add_argument("--report", action="store_true",
                    help="print per-operation counts and pycute agreement to stderr")
    opts = ap.parse_args()
    try:
        from importlib.metadata import version
        have = version("nvidia-cutlass")
    except Exception:  # pycute installed some other way
        have = "unknown"
    if have != PYCUTE_FROM:
        print(f"warning: vectors.tsv was generated with pycute from nvidia-cutlass {PYCUTE_FROM}, "
              f"this is {have}; install `pip install --no-deps nvidia-cutlass=={PYCUTE_FROM}`",
              file=sys.stderr)
    rng = random.Random(SEED)
    out = Out()
    gen(out, rng)
    text = "\n".join(out.lines) + "\n"
    if opts.out:
        with open(opts.out, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    if opts.report:
        for op in sorted(out.count):
            a = out.agree.get(op)
            extra = f"  pycute: {a}" if a else ""
            print(f"{op:24} {out.count[op]:5}{extra}", file=sys.stderr)
        print(f"total {len(out.lines)} lines, {len(text)} bytes", file=sys.stderr)
    if opts.diffs:
        for d in out.diffs:
            print(d, file=sys.stderr)


if __name__ == "__main__":
    main()
