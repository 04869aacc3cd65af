//! A gated epilogue whose gate and up values sit in two lanes of a warp: where the MMA's tile is
//! the sum's transpose (a program that swaps A and B computes `D^T = B A^T`), the sum's columns
//! `2j` and `2j + 1` are the tile's rows `2j` and `2j + 1`, which the `mma.sync` and `wgmma`
//! accumulator layouts give to lanes `l` and `l ^ 4`.
//!
//! [`gated_lane_pairs`] finds the partner lane and proves, for every thread and value, that it
//! holds the other column of each of the thread's pairs ([`check_lane_pairs`]); on the device
//! ([`store_gated_lanes`]) each lane applies the linear part to its own values, the pair trades
//! one value with one `shfl.sync.bfly`, and each lane of the pair computes and stores one of
//! the two results: the lane of the gate column (`2j`) the row of its value `2p`, the lane of
//! the up column (`2j + 1`) the row of its value `2p + 1`.

use dsl_core::kernel::*;
use dsl_core::layout::Layout;
use dsl_core::tensor::Fragment;
use dsl_core::tiled::TiledMma;

use super::{bias_of, held_by_register, load_if, store_if, AccValue, FusedOperands, ThreadTile};
use crate::gemm::epilogue::DeviceEpilogue;
use crate::gemm::strided::OutElem;

/// How a gated epilogue's pairs sit in the lanes of a warp, for a tile that is the sum's
/// transpose: proved of every thread and value by [`check_lane_pairs`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LanePairs {
    /// Lane `l`'s partner is lane `l ^ xor` of its warp: its value `v` is in the same row of the
    /// sum as lane `l`'s value `v`, in the other column of the gate and up pair.
    pub xor: u32,
    /// How many rows of the sum a thread's value `2p + 1` is below its value `2p` (in the same
    /// column): the up column's lane stores the row of its value `2p + 1`, this many below the
    /// one the gate column's lane stores.
    pub rows: u32,
}

/// The lane pairs of `mma`'s accumulators (the fragment `frag_c`) over a `rows x cols` tile
/// whose transpose is the sum (the tile's rows are the sum's columns): the partner of thread 0's
/// value 0, proved for every thread and value by [`check_lane_pairs`]. The error is a sentence
/// naming the first thread and value that break it.
pub fn gated_lane_pairs(
    mma: &TiledMma,
    frag_c: &Layout,
    dims: (i64, i64),
) -> Result<LanePairs, String> {
    let at = in_sum(held_by_register(mma, frag_c, dims)?);
    let first = at
        .first()
        .and_then(|values| values.get(..2))
        .ok_or("the MMA's threads hold fewer than two accumulators each")?;
    let (g, next) = (&first[0], &first[1]);
    let other = [g[0], g[1] ^ 1];
    let partner = at
        .iter()
        .position(|values| values.first().is_some_and(|c| c[..] == other[..]))
        .ok_or_else(|| {
            format!(
                "no thread's accumulator 0 is at {other:?} of the sum, the other column of \
                 thread 0's accumulator 0 at {g:?}"
            )
        })?;
    let rows = next[0] - g[0];
    if next[1] != g[1] || rows <= 0 {
        return Err(format!(
            "thread 0's accumulator 1 is at {next:?} of the sum, not in the column of its \
             accumulator 0 ({g:?}) below it"
        ));
    }
    let pairs = LanePairs {
        xor: partner as u32,
        rows: rows as u32,
    };
    check_at(&at, pairs)?;
    Ok(pairs)
}

/// Proves `pairs` of `mma`'s accumulators (the fragment `frag_c`) over a `rows x cols` tile
/// whose transpose is the sum: for every thread `t`, thread `t ^ xor` is in its warp and holds
/// each value `v` in the same row of the sum as `t`'s, in the other column of the pair (`2j`
/// and `2j + 1`); `t`'s values are all in columns of one parity; its value `2p + 1` is
/// `pairs.rows` rows below its value `2p`, in the same column. The error is a sentence naming
/// the first thread and value that break it.
pub fn check_lane_pairs(
    mma: &TiledMma,
    frag_c: &Layout,
    dims: (i64, i64),
    pairs: LanePairs,
) -> Result<(), String> {
    check_at(&in_sum(held_by_register(mma, frag_c, dims)?), pairs)
}

/// Each thread's values in the sum's coordinates: the tile's `[row, column]` transposed.
fn in_sum(at: Vec<Vec<Vec<i64>>>) -> Vec<Vec<Vec<i64>>> {
    at.into_iter()
        .map(|values| {
            values
                .into_iter()
                .map(|c| c.into_iter().rev().collect())
                .collect()
        })
        .collect()
}

/// [`check_lane_pairs`] over each thread's values `at[t][v]`, in the sum's coordinates.
fn check_at(at: &[Vec<Vec<i64>>], pairs: LanePairs) -> Result<(), String> {
    let xor = pairs.xor as usize;
    for (t, mine) in at.iter().enumerate() {
        let p = t ^ xor;
        let theirs = at
            .get(p)
            .filter(|_| p / 32 == t / 32 && p != t)
            .ok_or_else(|| {
                format!(
                    "thread {t}'s partner, thread {p} (lane xor {xor}), is not another lane of \
                     its warp"
                )
            })?;
        if mine.len() % 2 != 0 {
            return Err(format!(
                "thread {t} holds {} accumulators, not pairs",
                mine.len()
            ));
        }
        for (v, (c, o)) in mine.iter().zip(theirs).enumerate() {
            if c.len() != 2 || o[..] != [c[0], c[1] ^ 1] {
                return Err(format!(
                    "thread {t}'s accumulator {v} is at {c:?} of the sum and thread {p}'s at \
                     {o:?}: not the two columns of one gate and up pair"
                ));
            }
            if c[1] % 2 != mine[0][1] % 2 {
                return Err(format!(
                    "thread {t}'s accumulator {v} is at {c:?} of the sum, in a column of the \
                     other parity than its accumulator 0's ({:?})",
                    mine[0]
                ));
            }
            let below = [
                mine[v - v % 2][0] + i64::from(pairs.rows),
                mine[v - v % 2][1],
            ];
            if v % 2 == 1 && c[..] != below {
                return Err(format!(
                    "thread {t}'s accumulator {v} is at {c:?} of the sum, not {} rows below its \
                     accumulator {} ({:?})",
                    pairs.rows,
                    v - 1,
                    mine[v - 1]
                ));
            }
        }
    }
    Ok(())
}

/// A gated epilogue over lane pairs ([`LanePairs`], proved of the MMA's layout): each lane
/// applies the linear part to its own values (its bias read where its value is inside); for
/// each pair of its values `2p`, `2p + 1` the lane of the gate column gives its gate of value
/// `2p + 1`'s row and the lane of the up column its up of value `2p`'s row, in one
/// `shfl.sync.bfly` that every lane runs (only loads and stores are predicated); then the gate
/// column's lane stores `act(gate) * up + R` to D's row of its value `2p`, the up column's lane
/// to the row of its value `2p + 1`, column `j`, where inside.
pub fn store_gated_lanes<O: OutElem>(
    epi: &DeviceEpilogue,
    acc: &Fragment<f32>,
    tile: &ThreadTile,
    ops: &FusedOperands<O>,
    pairs: LanePairs,
) {
    let (r0, c0) = tile.base;
    // This lane holds the up columns (2j + 1); its partner the gates.
    let up_lane = (c0 & 1u32).ne_(0u32);
    let own = tile.by_register();
    // The rows this lane stores: its values 2p's, or (the up lane) 2p + 1's; both lanes' columns
    // are j = c0 / 2 + dc / 2 (the values' offsets are even).
    let stored = ThreadTile {
        base: (r0 + select(up_lane, pairs.rows, 0u32), c0),
        values: own.values.iter().copied().step_by(2).collect(),
        ..tile.clone()
    };
    let d_rows = stored.row_ptrs(ops.d, ops.ldd, 2);
    let r_rows = epi
        .epilogue
        .adds_residual()
        .then(|| stored.row_ptrs(ops.residual, ops.ldr, 2));
    own.split(|values, inside| {
        for pair in values.chunks_exact(2) {
            let (v, w) = (&pair[0], &pair[1]);
            let linear = |x: &AccValue, inside| {
                epi.linear(
                    acc.regs[x.reg],
                    || Var::konst(0.0),
                    || bias_of(epi, &own, ops, x, inside),
                )
            };
            let (iv, iw) = (inside(v), inside(w));
            let (xv, xw) = (linear(v, iv), linear(w, iw));
            let got = shfl_xor(select(up_lane, xv, xw), pairs.xor);
            let gate = select(up_lane, got, xv);
            let up = select(up_lane, xw, got);
            // The stored element is this lane's own value's place, 2p's or 2p + 1's.
            let at = iv.zip(iw).map(|(iv, iw)| select(up_lane, iw, iv));
            let j = v.dc / 2;
            let value = epi.residual(epi.gate(gate, up), || {
                load_if(at, r_rows.as_ref().expect("R is added").at(v.dr) + j)
            });
            store_if(at, d_rows.at(v.dr) + j, value);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::super::tests::{fragment, gmma, sm80};
    use super::*;

    /// `wgmma`'s and `mma.sync`'s accumulators, seen transposed: the sum's columns 2j and
    /// 2j + 1 are the tile's rows, lanes `l` and `l ^ 4`; a thread's values 2p and 2p + 1 are
    /// the tile's columns c and c + 1, the sum's rows one apart.
    #[test]
    fn transposed_accumulators_pair_across_lanes_four_apart() {
        let want = LanePairs { xor: 4, rows: 1 };
        for n in [16, 64, 208] {
            let mma = gmma(n);
            let frag = fragment(&mma, 64, n);
            assert_eq!(gated_lane_pairs(&mma, &frag, (64, n)), Ok(want), "n {n}");
        }
        let sm80 = sm80();
        let frag = fragment(&sm80, 128, 128);
        assert_eq!(gated_lane_pairs(&sm80, &frag, (128, 128)), Ok(want));
    }

    /// A wrong partner or a wrong distance between a thread's pair is refused with a sentence
    /// naming the thread and the value.
    #[test]
    fn a_wrong_partner_is_refused_naming_the_thread_and_value() {
        let mma = gmma(64);
        let frag = fragment(&mma, 64, 64);
        let check = |xor, rows| check_lane_pairs(&mma, &frag, (64, 64), LanePairs { xor, rows });
        assert_eq!(check(4, 1), Ok(()));
        let e = check(1, 1).unwrap_err();
        assert!(
            e.starts_with("thread 0's accumulator 0 is at [0, 0] of the sum and thread 1's at")
                && e.ends_with("not the two columns of one gate and up pair"),
            "{e}"
        );
        let e = check(8, 1).unwrap_err();
        assert!(
            e.starts_with("thread 0's accumulator 0 is at [0, 0]"),
            "{e}"
        );
        // Lane 0's partner in the next warp: a shuffle does not reach it.
        let e = check(36, 1).unwrap_err();
        assert_eq!(
            e,
            "thread 0's partner, thread 36 (lane xor 36), is not another lane of its warp"
        );
        let e = check(4, 2).unwrap_err();
        assert_eq!(
            e,
            "thread 0's accumulator 1 is at [1, 0] of the sum, not 2 rows below its \
             accumulator 0 ([0, 0])"
        );
        // Seen untransposed, the pairs are in one thread: no lane holds the other column.
        let rows_first = check_at(
            &held_by_register(&mma, &frag, (64, 64)).unwrap(),
            LanePairs { xor: 4, rows: 1 },
        )
        .unwrap_err();
        assert!(
            rows_first.contains("thread 0's accumulator 0"),
            "{rows_first}"
        );
    }
}
