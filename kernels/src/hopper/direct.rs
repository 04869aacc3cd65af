//! D stored from the registers (`_u{B}`): the epilogue without a staging tile. Each consumer
//! thread rounds its accumulators to 16-bit pairs and stores them with `st.global`, `B` bytes
//! (4, 8 or 16) per store, so that the shared memory a staging tile took holds more stages, and
//! no consumer waits for a TMA store to have read its tile (ncu's reading of the short K at
//! 81920 x 256 x 256: each such wait is a wait on D's writes to drain).
//!
//! A `wgmma` accumulator row is spread over a quad of lanes: lane `q` holds columns `2q` and
//! `2q + 1` of every block of 8 columns (CuTe's `SM90` C layout; [`direct_stores`] checks it
//! for each plan). Stored as it is held, each store is 4 bytes and a warp's store covers half
//! sectors. For wider stores the quad first exchanges its pairs ([`quad_exchange`]): with
//! `w = B / 4` blocks per store, lane `q` ends up with block `q % w` of each group of `w` and
//! its pairs `(q / w) * w ..`, `w` contiguous pairs, and the quad's four stores cover `4 B`
//! contiguous bytes of the row: whole 32-byte sectors for 8 and 16.
//!
//! The stores themselves are the epilogue's ([`super::epilogue`]); this module holds the host's
//! part (which accumulators each store takes) and the quad's exchange.
//!
//! ```
//! use kernels::gemm::GemmDtype;
//! use kernels::hopper::direct::lane_column;
//! use kernels::hopper::{HopperPlan, HopperSchedule};
//! let schedule: HopperSchedule = "64x256x64s6_f1_r4_p_u16".parse().unwrap();
//! let plan = HopperPlan::new(schedule, GemmDtype::Bf16).unwrap();
//! // Two rows per thread (r and r + 8), each 256 columns in 16 stores of 4 blocks of 8.
//! assert_eq!(plan.direct.len(), 16);
//! let first = &plan.direct[0];
//! assert_eq!((first.row, first.col), (0, 0));
//! // The row's pairs of blocks 0..4 are accumulators (0, 1), (4, 5), (8, 9), (12, 13).
//! assert_eq!(first.pairs, [0, 2, 4, 6]);
//! // After the exchange lane 2 of a quad stores block 2: columns 16..24.
//! assert_eq!(lane_column(4, 2), 16);
//! ```

use std::collections::{BTreeMap, BTreeSet};

use dsl_core::kernel::*;
use dsl_core::layout::{Layout, LayoutError};
use dsl_core::tiled::{make_identity_tensor, TiledMma};
use thiserror::Error;

use super::schedule::StoreWidth;

/// One store of a consumer thread's part of D: `w` blocks of 8 columns of one row, `w` the
/// store's bytes over 4.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadStore {
    /// The row, from the thread's first (`16 * warp + lane / 4` of the consumer's tile).
    pub row: u32,
    /// The first block's first column in the consumer's tile.
    pub col: u32,
    /// The accumulator pair (registers `2p` and `2p + 1`) each lane holds of the store's
    /// blocks before the exchange: slot `s` is block `col / 8 + s`.
    pub pairs: Vec<u32>,
}

/// Why the accumulators cannot be stored as [`quad_exchange`] takes them (a bug in the layouts
/// for a schedule that passed the checks).
#[derive(Debug, Error)]
pub enum DirectLayoutError {
    /// A thread's accumulator is not thread 0's moved by the thread's place in the quads.
    #[error(
        "D stored from the registers (_u): thread {thread}'s accumulator {reg} is at {at:?}, not \
         thread 0's {zero:?} moved by {shift:?}"
    )]
    NotShifted {
        /// The thread.
        thread: i64,
        /// The accumulator.
        reg: usize,
        /// Where it is.
        at: Option<Vec<i64>>,
        /// Where thread 0's is.
        zero: Option<Vec<i64>>,
        /// The shift expected of the thread.
        shift: (i64, i64),
    },
    /// Two accumulators that should be a pair at a block's start are not.
    #[error(
        "D stored from the registers (_u): accumulators {first} and {second} are at {at:?} and \
         {next:?}, not a pair at a block's start"
    )]
    NotAPair {
        /// The pair's first accumulator.
        first: usize,
        /// The second.
        second: usize,
        /// Where the first is.
        at: Option<Vec<i64>>,
        /// Where the second is.
        next: Option<Vec<i64>>,
    },
    /// A row lacks a block of columns a store takes.
    #[error("D stored from the registers (_u): row {row} lacks a block of columns {col}..")]
    MissingBlock {
        /// The row.
        row: i64,
        /// The block's first column.
        col: i64,
    },
    /// A layout operation failed.
    #[error("layout: {0}")]
    Layout(#[from] LayoutError),
}

/// The stores of `width` each that write a consumer's accumulators `frag_c` of `mma` over its
/// `rows x bn` tile, rows in order, then columns. An error where the accumulators are not held
/// as [`quad_exchange`] takes them ([`quad_pairs`]).
pub fn direct_stores(
    mma: &TiledMma,
    frag_c: &Layout,
    (rows, bn): (i64, i64),
    width: StoreWidth,
) -> Result<Vec<ThreadStore>, DirectLayoutError> {
    let pair_at = quad_pairs(mma, frag_c, (rows, bn))?;
    grouped(&pair_at, bn, i64::from(width.bytes() / 4))
}

/// Each row's whole groups of `w` blocks of 8 columns of a `bn`-wide tile, as stores of thread
/// 0's pairs there (`pair_at`: [`quad_pairs`]), rows in order, then columns; blocks past the
/// last whole group are left out.
fn grouped(
    pair_at: &BTreeMap<(i64, i64), u32>,
    bn: i64,
    w: i64,
) -> Result<Vec<ThreadStore>, DirectLayoutError> {
    let rows: BTreeSet<i64> = pair_at.keys().map(|(r, _)| *r).collect();
    let mut stores = Vec::new();
    for row in rows {
        for g in 0..bn / 8 / w {
            let pairs = (0..w)
                .map(|s| pair_at.get(&(row, g * w + s)).copied())
                .collect::<Option<Vec<u32>>>()
                .ok_or(DirectLayoutError::MissingBlock {
                    row,
                    col: g * w * 8,
                })?;
            stores.push(ThreadStore {
                row: row as u32,
                col: (g * w * 8) as u32,
                pairs,
            });
        }
    }
    Ok(stores)
}

/// Where thread 0 holds each block of 8 columns of a consumer's `rows x bn` tile: `(row, block)
/// -> p`, its accumulators `2p` and `2p + 1` the block's columns 0 and 1 (thread `t`'s the same
/// registers, at row `16 * (t / 32) + (t % 32) / 4` and column `2 * (t % 4)` from thread 0's).
/// Each thread's accumulator coordinates are its partition of the tile's identity tensor; an
/// error names the first thread and register that break the pattern.
pub fn quad_pairs(
    mma: &TiledMma,
    frag_c: &Layout,
    (rows, bn): (i64, i64),
) -> Result<BTreeMap<(i64, i64), u32>, DirectLayoutError> {
    let id = make_identity_tensor(&[rows, bn])?;
    let regs = frag_c.cosize() as usize;
    let parts = mma.partition_c_each(id.view())?;
    // Register -> [row, column] of thread t's accumulators.
    let at = |t: i64| -> Result<Vec<Option<Vec<i64>>>, LayoutError> {
        let coords = id.coords_of(&parts[t as usize])?;
        let mut at = vec![None; regs];
        for (i, c) in coords.into_iter().enumerate() {
            at[frag_c.eval(i as i64)? as usize] = Some(c);
        }
        Ok(at)
    };
    let first = at(0)?;
    for t in 1..mma.size() {
        let shift = (16 * (t / 32) + (t % 32) / 4, 2 * (t % 4));
        for (reg, (mine, zero)) in at(t)?.into_iter().zip(&first).enumerate() {
            let moved = zero.as_ref().map(|c| vec![c[0] + shift.0, c[1] + shift.1]);
            if mine != moved {
                return Err(DirectLayoutError::NotShifted {
                    thread: t,
                    reg,
                    at: mine,
                    zero: zero.clone(),
                    shift,
                });
            }
        }
    }
    let mut pair_at = BTreeMap::new();
    for p in 0..regs / 2 {
        let (a, b) = (&first[2 * p], &first[2 * p + 1]);
        match (a.as_deref(), b.as_deref()) {
            (Some(&[r, c]), Some(&[r2, c2])) if c % 8 == 0 && (r2, c2) == (r, c + 1) => {
                pair_at.insert((r, c / 8), p as u32);
            }
            _ => {
                return Err(DirectLayoutError::NotAPair {
                    first: 2 * p,
                    second: 2 * p + 1,
                    at: a.clone(),
                    next: b.clone(),
                })
            }
        }
    }
    Ok(pair_at)
}

/// A gated epilogue's stores of whole groups of 8 blocks of 8 columns of a consumer's `rows x
/// bn` tile ([`super::gated`]): each thread's 8 gate and up pairs of a row's group give 8
/// values of D, which the quad's exchange makes one 16-byte store per lane. Blocks past the
/// last whole group are not listed (they are stored one value at a time).
pub fn gated_stores(
    mma: &TiledMma,
    frag_c: &Layout,
    (rows, bn): (i64, i64),
) -> Result<Vec<ThreadStore>, DirectLayoutError> {
    grouped(&quad_pairs(mma, frag_c, (rows, bn))?, bn, 8)
}

/// The four lanes of a quad as the exchange sees them: values one per lane, the lane's own
/// index bits, a lane-wise select and the value of the lane whose index differs by `mask`. A
/// device thread is one lane ([`DeviceQuad`]); a host model can be all four at once.
pub trait QuadLanes {
    /// A value (one per lane).
    type Value: Copy;
    /// A condition (one per lane).
    type Bit: Copy;
    /// Bit `i` of the lane's index in its quad.
    fn bit(&self, i: u32) -> Self::Bit;
    /// `one` where `b` holds, else `zero`.
    fn select(&self, b: Self::Bit, one: Self::Value, zero: Self::Value) -> Self::Value;
    /// The value `v` of the lane `lane ^ mask`.
    fn exchange(&mut self, v: Self::Value, mask: u32) -> Self::Value;
}

/// Transposes `slots` (`w` of them, 1, 2 or 4: lane `q`'s pair `q` of blocks `0..w`) within
/// each group of `w` lanes of the quad, one butterfly step per bit of `w`: at step `i` a lane
/// gives the partner across bit `i` the slot whose bit `i` is not its own and takes that
/// partner's in its place. After, lane `q` holds block `q % w`, its pairs `(q / w) * w + s` in
/// slot `s`.
pub fn quad_exchange<L: QuadLanes>(lanes: &mut L, slots: &mut [L::Value]) {
    let w = slots.len();
    for i in 0..w.trailing_zeros() {
        let bit = 1usize << i;
        let mine = lanes.bit(i);
        for s in (0..w).filter(|s| s & bit == 0) {
            let (lo, hi) = (slots[s], slots[s | bit]);
            let give = lanes.select(mine, lo, hi);
            let got = lanes.exchange(give, bit as u32);
            slots[s] = lanes.select(mine, got, lo);
            slots[s | bit] = lanes.select(mine, hi, got);
        }
    }
}

/// A device thread as its quad's lane `q` (`shfl.sync.bfly` and `selp`).
pub struct DeviceQuad {
    bits: [Var<bool>; 2],
}

impl DeviceQuad {
    /// Lane `lane % 4` of its quad.
    pub fn new(lane: Var<u32>) -> DeviceQuad {
        DeviceQuad {
            bits: [(lane & 1u32).ne_(0u32), (lane & 2u32).ne_(0u32)],
        }
    }
}

impl QuadLanes for DeviceQuad {
    type Value = Var<u32>;
    type Bit = Var<bool>;
    fn bit(&self, i: u32) -> Var<bool> {
        self.bits[i as usize]
    }
    fn select(&self, b: Var<bool>, one: Var<u32>, zero: Var<u32>) -> Var<u32> {
        select(b, one, zero)
    }
    fn exchange(&mut self, v: Var<u32>, mask: u32) -> Var<u32> {
        shfl_xor(v, mask)
    }
}

/// The first column of lane `q`'s store in a group of `w` blocks of 8 after
/// [`quad_exchange`]: block `q % w`, from pair `(q / w) * w`.
pub fn lane_column(w: u32, q: u32) -> u32 {
    8 * (q % w) + 2 * w * (q / w)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::gemm::GemmDtype;
    use crate::hopper::{HopperPlan, HopperSchedule, Store};
    use dsl_core::layout::IntTuple;
    use dsl_core::tiled::View;

    /// The four lanes of a quad in lockstep, each value tagged with where it started.
    pub(crate) struct Host;
    impl QuadLanes for Host {
        type Value = [(u32, u32); 4];
        type Bit = [bool; 4];
        fn bit(&self, i: u32) -> [bool; 4] {
            std::array::from_fn(|q| q & (1 << i) != 0)
        }
        fn select(&self, b: [bool; 4], one: Self::Value, zero: Self::Value) -> Self::Value {
            std::array::from_fn(|q| if b[q] { one[q] } else { zero[q] })
        }
        fn exchange(&mut self, v: Self::Value, mask: u32) -> Self::Value {
            std::array::from_fn(|q| v[q ^ mask as usize])
        }
    }

    /// After the exchange lane `q` holds block `q % w`, pairs `(q / w) * w ..` in order: the
    /// columns `lane_column` names, contiguous.
    #[test]
    fn the_exchange_gives_each_lane_contiguous_pairs_of_one_block() {
        for w in [1u32, 2, 4] {
            // Slot s of lane q: (block s, pair q).
            let mut slots: Vec<[(u32, u32); 4]> = (0..w)
                .map(|s| std::array::from_fn(|q| (s, q as u32)))
                .collect();
            quad_exchange(&mut Host, &mut slots);
            for q in 0..4u32 {
                let got: Vec<(u32, u32)> = slots.iter().map(|v| v[q as usize]).collect();
                let want: Vec<(u32, u32)> = (0..w).map(|s| (q % w, (q / w) * w + s)).collect();
                assert_eq!(got, want, "w {w}, lane {q}");
                // Block q % w's columns from 2 * its first pair.
                let (block, pair) = want[0];
                assert_eq!(lane_column(w, q), 8 * block + 2 * pair, "w {w}, lane {q}");
            }
        }
    }

    /// Where CuTe's `partition_C` puts each consumer thread's accumulator over a `rows x bn`
    /// tile: `(thread, register) -> (row, column)`.
    pub(crate) fn homes(
        plan: &HopperPlan,
        (rows, bn): (i64, i64),
    ) -> std::collections::HashMap<(u32, u32), (i64, i64)> {
        let view =
            View::from(Layout::new(IntTuple::ints(&[rows, bn]), IntTuple::ints(&[bn, 1])).unwrap());
        let mut home = std::collections::HashMap::new();
        for t in 0..128 {
            let part = plan.mma.get_slice(t).unwrap().partition_c(&view).unwrap();
            for i in 0..plan.frag_c.size() {
                let off = part.base + part.layout.eval(i).unwrap();
                let r = plan.frag_c.eval(i).unwrap() as u32;
                home.insert((t as u32, r), (off / bn, off % bn));
            }
        }
        home
    }

    /// Every element of a consumer's tile is stored once, from the accumulator CuTe's
    /// partition puts there: the stores of `direct_stores`, the exchange and `lane_column`
    /// simulated for all 128 threads, against `partition_C` of each thread.
    #[test]
    fn the_stores_write_each_element_once_from_its_accumulator() {
        for spec in [
            "64x256x64s12_f1_r4_p_u16",
            "64x256x64s12_f1_r4_p_u8",
            "64x256x64s12_f1_r4_p_u4",
            "128x128x64s6_p_u16",
            "128x256x64s4_u8",
            "128x48x64s8_u8",
        ] {
            let cfg: HopperSchedule = spec.parse().unwrap();
            let plan = HopperPlan::new(cfg, GemmDtype::Bf16).unwrap();
            let (rows, bn) = (cfg.consumer_rows() as i64, cfg.tile.n() as i64);
            let Store::Direct(width) = cfg.store() else {
                panic!("{spec} stores from the registers")
            };
            let w = width.bytes() / 4;
            let home = homes(&plan, (rows, bn));
            let mut written = vec![0u32; (rows * bn) as usize];
            for warp_quad in 0..32u32 {
                // The quad's lanes, threads 4 * warp_quad + q.
                let t0 = 4 * warp_quad;
                for s in &plan.direct {
                    let mut slots: Vec<[(u32, u32); 4]> = s
                        .pairs
                        .iter()
                        .map(|&p| std::array::from_fn(|q| (t0 + q as u32, p)))
                        .collect();
                    quad_exchange(&mut Host, &mut slots);
                    for q in 0..4u32 {
                        let t = t0 + q;
                        let row = 16 * (t / 32) + (t % 32) / 4 + s.row;
                        let col = s.col + lane_column(w, q);
                        for (k, v) in slots.iter().enumerate() {
                            let (from, pair) = v[q as usize];
                            for e in 0..2u32 {
                                let at = (row as i64, (col + 2 * k as u32 + e) as i64);
                                assert_eq!(home[&(from, 2 * pair + e)], at, "{spec}: thread {t}");
                                written[(at.0 * bn + at.1) as usize] += 1;
                            }
                        }
                    }
                }
            }
            assert!(written.iter().all(|&n| n == 1), "{spec}");
        }
    }

    /// `_u` spells, refuses what has a staging tile or a width the quads cannot make, and
    /// takes the staging's shared memory off.
    #[test]
    fn direct_stores_spell_and_free_the_staging() {
        let cfg: HopperSchedule = "64x256x64s12_f1_r4_p_l0_vfnf_u16".parse().unwrap();
        assert_eq!(cfg.to_string(), "64x256x64s12_f1_r4_p_l0_vfnf_u16");
        assert_eq!(cfg.staging_tiles(), 0);
        assert_eq!(cfg.smem_bytes(), (12 * 64 + 4 * 256) * 64 * 2);
        let staged: HopperSchedule = "64x256x64s8_f1_e128_r4_p_l0_vfnf".parse().unwrap();
        assert_eq!(
            staged.smem_bytes() - 8 * 64 * 64 * 2,
            cfg.smem_bytes() - 12 * 64 * 64 * 2 + 2 * 64 * 128 * 2
        );
        for (spec, why) in [
            ("64x256x64s8_r4_p_u2", "4, 8 or 16 bytes"),
            ("64x256x64s8_e128_r4_p_u16", "no _t, _eE, _d2 or _o"),
            ("64x256x64s8_r4_p_o_u16", "no _t, _eE, _d2 or _o"),
            ("128x64x64s8_u16_t", "no _t, _eE, _d2 or _o"),
            ("128x48x64s8_u16", "a multiple of 32"),
            ("64x256x64s8_r4_p_vnnl_u16", "D's hint f"),
            ("64x256x64s8_r4_p_ux", "_u takes the bytes"),
        ] {
            let e = spec.parse::<HopperSchedule>().unwrap_err().to_string();
            assert!(e.contains(why), "{spec}: {e}");
        }
    }
}
