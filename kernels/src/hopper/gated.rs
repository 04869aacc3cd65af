//! A gated epilogue's D (SwiGLU, GEGLU: `act(x[2j]) * x[2j + 1]`, half as wide as the sum)
//! stored 16 bytes a lane.
//!
//! A consumer thread holds the gate and up columns `8b + 2q` and `8b + 2q + 1` of each block
//! `b` of 8 columns (lane `q` of its quad): one value of D per block, at D's column `4b + q`.
//! Stored as held, each value is its own 2-byte store and a warp's store writes 8 bytes of each
//! of 8 rows: 64 stores per thread for a 64 x 256 consumer tile, each a partial sector. Here
//! each group of 8 blocks (32 columns of D) is stored in four 16-byte stores per quad: lane `q`
//! packs its values of blocks `2k` and `2k + 1` into word `k` (D's columns `8k + q` and
//! `8k + 4 + q` of the group), the quad transposes the words ([`quad_exchange`]: lane `q` ends
//! up with word `q` of every lane, D's columns `8q .. 8q + 8` of the group, two to a word), and
//! the lane puts the halves in column order ([`in_column_order`]) before one `st.global.v4`:
//! 8 stores per thread for that tile, the quad's four covering 64 contiguous bytes of a row.
//!
//! Values are computed in f32 from the accumulators exactly as the one-at-a-time store computes
//! them and rounded once, to D's type: only where they go differs. Tiles that cross D's edge,
//! D of f32, D's rows off 16 bytes, and the blocks past the tile's last whole group take the
//! one-at-a-time store ([`store_gated`]).

use dsl_core::kernel::*;
use dsl_core::tensor::Fragment;
use dsl_macros::device;

use super::direct::{quad_exchange, DeviceQuad, ThreadStore};
use crate::gemm::epilogue::DeviceEpilogue;
use crate::gemm::fused::{gated_value, store_gated, FusedOperands, ThreadTile};
use crate::gemm::layout::OutType;
use crate::gemm::strided::OutElem;

/// Columns of the sum a store takes: 8 blocks of 8.
pub const GROUP_COLS: u32 = 64;

/// Stores a gated epilogue of a consumer thread's accumulators `acc` (its `tile`; lane `lane`
/// of its warp) to D: the plan's `stores` ([`super::direct::gated_stores`]) 16 bytes a lane
/// where the tile is inside D and D's rows are on 16 bytes, the rest one value at a time.
pub fn store_gated_quads<O: OutElem>(
    epi: &DeviceEpilogue,
    acc: &Fragment<f32>,
    (tile, ops): (&ThreadTile, &FusedOperands<O>),
    stores: &[ThreadStore],
    lane: Var<u32>,
) {
    if O::OUT.bytes() != 2 || stores.is_empty() {
        store_gated(epi, acc, tile, ops);
        return;
    }
    let covered = stores.iter().map(|s| s.col + GROUP_COLS).max().unwrap_or(0);
    // D's rows on 16 bytes: its first element and its leading dimension in bytes.
    let row_bytes = ops.ldd.cast::<u64>() * O::OUT.bytes() as u64;
    let aligned = ((ops.d.addr() | row_bytes) & 15u64).eq_(0u64);
    let q = lane & 3u32;
    let mut quad = DeviceQuad::new(q);
    (tile.whole & aligned).if_else(|arm| match arm {
        Arm::Then => {
            store_groups(epi, acc, (tile, ops), stores, (q, &mut quad));
            // The blocks past the last group, one value at a time; the tile is inside D here,
            // so their store tests nothing.
            let rest = ThreadTile {
                values: tile
                    .values
                    .iter()
                    .filter(|v| v.dc >= covered)
                    .copied()
                    .collect(),
                whole: Var::konst(true),
                ..tile.clone()
            };
            if !rest.values.is_empty() {
                store_gated(epi, acc, &rest, ops);
            }
        }
        Arm::Else => store_gated(epi, acc, tile, ops),
    });
}

/// The 16-byte stores of a tile inside D whose rows are on 16 bytes, by lane `q` of its quad.
#[device]
fn store_groups<O: OutElem>(
    epi: &DeviceEpilogue,
    acc: &Fragment<f32>,
    (tile, ops): (&ThreadTile, &FusedOperands<O>),
    stores: &[ThreadStore],
    (q, quad): (Var<u32>, &mut DeviceQuad),
) {
    let bf16 = O::OUT == OutType::Bf16;
    let d_rows = tile.row_ptrs(ops.d, ops.ldd, 2);
    let r_rows = epi
        .epilogue
        .adds_residual()
        .then(|| tile.row_ptrs(ops.residual, ops.ldr, 2));
    // The row pointers are at the thread's first column of D (q: block 0's value); after the
    // exchange lane q stores from column 8q of the group, 7q further.
    let shift = q * 7u32;
    let value_of = |reg: usize| {
        tile.values
            .iter()
            .find(|v| v.reg == reg)
            .expect("the plan's pairs are the thread's values")
    };
    for s in stores {
        let words: Vec<Var<u32>> = (0..4)
            .map(|k| {
                let value = |block: usize| {
                    let p = s.pairs[block] as usize;
                    let (gate, up) = (value_of(2 * p), value_of(2 * p + 1));
                    gated_value(epi, acc, (tile, ops), (gate, up), None, r_rows.as_ref())
                };
                pack_pair_bits(bf16, value(2 * k), value(2 * k + 1))
            })
            .collect();
        let words = exchanged(quad, words);
        let p = (d_rows.at(s.row) + s.col / 2 + shift).cast::<u32>();
        p.store_vec(words);
    }
}

/// A lane's four packed words of a group, exchanged in the quad and put in column order.
fn exchanged(quad: &mut DeviceQuad, mut words: Vec<Var<u32>>) -> [Var<u32>; 4] {
    quad_exchange(quad, &mut words);
    in_column_order(&DeviceHalves, &words)
}

/// 32-bit words as pairs of 16-bit halves (the low half the first element), as the device
/// joins them ([`DeviceHalves`]) or a host model does.
pub trait Halves {
    /// A word.
    type Word: Copy;
    /// The word of `a`'s low half, then `b`'s.
    fn lows(&self, a: Self::Word, b: Self::Word) -> Self::Word;
    /// The word of `a`'s high half, then `b`'s.
    fn highs(&self, a: Self::Word, b: Self::Word) -> Self::Word;
}

/// After the exchange slot `s` holds D's columns `s` (low half) and `4 + s` (high half) of the
/// lane's 8; the words of columns `0, 1`, `2, 3`, `4, 5` and `6, 7`, in that order.
pub fn in_column_order<H: Halves>(h: &H, slots: &[H::Word]) -> [H::Word; 4] {
    [
        h.lows(slots[0], slots[1]),
        h.lows(slots[2], slots[3]),
        h.highs(slots[0], slots[1]),
        h.highs(slots[2], slots[3]),
    ]
}

/// The device's halves: shifts and masks (one `prmt` each after ptxas).
pub struct DeviceHalves;

impl Halves for DeviceHalves {
    type Word = Var<u32>;
    fn lows(&self, a: Var<u32>, b: Var<u32>) -> Var<u32> {
        (a & 0xffffu32) | (b << 16u32)
    }
    fn highs(&self, a: Var<u32>, b: Var<u32>) -> Var<u32> {
        (a >> 16u32) | (b & 0xffff_0000u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gemm::epilogue::Epilogue;
    use crate::gemm::layout::{FormParts, Major};
    use crate::gemm::GemmDtype;
    use crate::hopper::direct::tests::{homes, Host};
    use crate::hopper::{HopperPlan, HopperSchedule};

    /// A word's halves, each tagged `(thread, gate register)`, all four lanes at once.
    type Tagged = [((u32, u32), (u32, u32)); 4];

    /// The host's halves of four lanes' words at once.
    struct HostHalves;
    impl Halves for HostHalves {
        type Word = Tagged;
        fn lows(&self, a: Tagged, b: Tagged) -> Tagged {
            std::array::from_fn(|q| (a[q].0, b[q].0))
        }
        fn highs(&self, a: Tagged, b: Tagged) -> Tagged {
            std::array::from_fn(|q| (a[q].1, b[q].1))
        }
    }

    /// The quad exchange's host model moves pairs of `u32` tags: a half's tag packs its thread
    /// and register into one.
    fn pack((t, r): (u32, u32)) -> u32 {
        t << 16 | r
    }
    fn unpack(v: u32) -> (u32, u32) {
        (v >> 16, v & 0xffff)
    }

    /// Every column of D in a consumer's tile is written once, from the thread and gate
    /// register whose home is the sum's column `2j` of that row: the plan's 16-byte stores
    /// (packing, the quad's exchange and [`in_column_order`] run for all 128 threads, each
    /// lane's store at the group's column `8q`), and the blocks past the last whole group one
    /// value at a time; for tiles that are 1 to 4 groups wide, with and without a rest, and
    /// for 64-row ping-pong consumers.
    #[test]
    fn the_stores_write_each_column_of_d_once_from_its_gate() {
        for spec in [
            "128x256x64s3",
            "128x224x64s4_e112",
            "128x96x64s5",
            "128x64x64s6",
            "64x256x64s4_f1_r4_p",
            "128x128x64s5",
        ] {
            let cfg: HopperSchedule = spec.parse().unwrap();
            let parts = FormParts {
                a: Major::K,
                b: Major::K,
                epilogue: Epilogue::SWIGLU,
                out: crate::gemm::layout::OutType::Bf16,
            };
            let plan = HopperPlan::with_form(cfg, GemmDtype::Bf16, Some(parts)).unwrap();
            let (rows, bn) = (cfg.consumer_rows() as i64, cfg.tile.n() as i64);
            assert_eq!(plan.gated.len() as i64, 2 * (bn / 64), "{spec}");
            let home = homes(&plan, (rows, bn));
            let mut written = vec![0u32; (rows * bn / 2) as usize];
            let mut write = |(row, col): (i64, i64), from: (u32, u32)| {
                let (hr, hc) = home[&from];
                assert_eq!((hr, hc), (row, 2 * col), "{spec}: {from:?}");
                assert_eq!(from.1 % 2, 0, "{spec}: a gate's register is even");
                written[(row * bn / 2 + col) as usize] += 1;
            };
            for warp_quad in 0..32u32 {
                let t0 = 4 * warp_quad;
                let first_row = |t: u32| i64::from(16 * (t / 32) + (t % 32) / 4);
                for s in &plan.gated {
                    let words: Vec<[(u32, u32); 4]> = (0..4)
                        .map(|k| {
                            let gate = |b: usize| 2 * s.pairs[b];
                            std::array::from_fn(|q| {
                                let t = t0 + q as u32;
                                (pack((t, gate(2 * k))), pack((t, gate(2 * k + 1))))
                            })
                        })
                        .collect();
                    let mut slots = words;
                    quad_exchange(&mut Host, &mut slots);
                    let slots: Vec<Tagged> = slots
                        .iter()
                        .map(|w| std::array::from_fn(|q| (unpack(w[q].0), unpack(w[q].1))))
                        .collect();
                    let ordered = in_column_order(&HostHalves, &slots);
                    for q in 0..4u32 {
                        let t = t0 + q;
                        let row = first_row(t) + i64::from(s.row);
                        let col = i64::from(s.col / 2 + 8 * q);
                        for (i, word) in ordered.iter().enumerate() {
                            let (lo, hi) = word[q as usize];
                            write((row, col + 2 * i as i64), lo);
                            write((row, col + 2 * i as i64 + 1), hi);
                        }
                    }
                }
                // The rest, one value at a time at its gate's column over 2.
                let covered = plan.gated.iter().map(|s| s.col + GROUP_COLS).max().unwrap();
                for q in 0..4u32 {
                    let t = t0 + q;
                    for v in plan.acc_offsets.iter().filter(|v| v.reg % 2 == 0) {
                        if v.dc >= covered {
                            let row = first_row(t) + i64::from(v.dr);
                            let col = i64::from((2 * q + v.dc) / 2);
                            write((row, col), (t, v.reg as u32));
                        }
                    }
                }
            }
            assert!(written.iter().all(|&n| n == 1), "{spec}");
        }
    }
}
