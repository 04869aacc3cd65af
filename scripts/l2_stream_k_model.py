"""A rough model of the L2 under hopper_ws's persistent walk, for the stream-K tail's order.

Every block does one k-tile per step, all in lockstep, reading A's (m, k) slice (128 x 64
16-bit elements, 16 KB) and B's (n, k) slice (256 x 64, 32 KB) through an LRU cache of the given
size; a miss is a DRAM read. A step lasts a k-tile's wgmma time or its DRAM reads at the given
rate, whichever is longer. It compares whole tiles with the last partial wave shared out by
stream-K, its shares walked in plain order (each block from its own k) or in step (each share's
last piece first, as dsl_core::pipeline::stream_k now walks them). It ignores the output, the
fix-up and the blocks' drift: a direction, not a time.

    python3 scripts/l2_stream_k_model.py 4096 --l2-mb 30
"""
import argparse
from collections import OrderedDict

BM, BN, BK, SMS = 128, 256, 64, 132


def tile_mn(t, tm, tn, group):
    """Tile t of the grouped raster: groups of `group` tile rows, along M within a group."""
    per = group * tn
    first = t // per * group
    rows = min(tm - first, group)
    r = t % per
    return first + r % rows, r // rows


def walk(tiles, kt, sk_tiles, in_step):
    """Per block, its (tile, k) steps: the stream-K shares, then whole tiles round-robin."""
    steps = [[] for _ in range(SMS)]
    if sk_tiles:
        iters = sk_tiles * kt
        per, rem = divmod(iters, SMS)
        for b in range(SMS):
            it = b * per + min(b, rem)
            end = it + per + (b < rem)
            pieces = []
            while it < end:
                t, k0 = divmod(it, kt)
                k1 = min(kt, k0 + end - it)
                pieces.append((t, k0, k1))
                it += k1 - k0
            if in_step and pieces:
                pieces = pieces[-1:] + pieces[:-1]
            steps[b] += [(t, k) for t, k0, k1 in pieces for k in range(k0, k1)]
    for d in range(tiles - sk_tiles):
        steps[d % SMS] += [(sk_tiles + d, k) for k in range(kt)]
    return steps


def run(n, l2_bytes, group, sk_tiles, in_step, step_us, bytes_per_us):
    tm, tn, kt = n // BM, n // BN, n // BK
    steps = walk(tm * tn, kt, sk_tiles, in_step)
    lru, used, miss, t_us = OrderedDict(), 0, 0, 0.0
    for s in range(max(len(x) for x in steps)):
        before = miss
        for b in range(SMS):
            if s >= len(steps[b]):
                continue
            t, k = steps[b][s]
            m, nn = tile_mn(t, tm, tn, group)
            for key, size in ((("A", m, k), BM * BK * 2), (("B", nn, k), BN * BK * 2)):
                if key in lru:
                    lru.move_to_end(key)
                else:
                    miss += size
                    lru[key] = size
                    used += size
                    while used > l2_bytes:
                        used -= lru.popitem(last=False)[1]
        t_us += max(step_us, (miss - before) / bytes_per_us)
    return miss / 2**20, t_us


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("n", type=int, help="the square's side (a multiple of 256)")
    p.add_argument("--l2-mb", type=float, default=30.0, help="effective L2 (MB)")
    p.add_argument("--group", type=int, default=8, help="raster group")
    p.add_argument("--step-us", type=float, default=0.68, help="a k-tile's wgmma time")
    p.add_argument("--dram-tbs", type=float, default=3.6, help="DRAM read rate (TB/s)")
    a = p.parse_args()
    tiles = (a.n // BM) * (a.n // BN)
    rest = tiles % SMS
    for name, sk, in_step in (("whole tiles", 0, False),
                              ("last wave shared, plain order", rest, False),
                              ("last wave shared, in step", rest, True)):
        mb, us = run(a.n, a.l2_mb * 2**20, a.group, sk, in_step, a.step_us, a.dram_tbs * 1e6)
        print(f"{a.n}^3, L2 {a.l2_mb:g} MB, g{a.group}, {name}: DRAM reads {mb:.0f} MB, model {us:.0f} us")


if __name__ == "__main__":
    main()
