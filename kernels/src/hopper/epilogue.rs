//! The epilogue: a consumer's accumulators to D, one of two ways, chosen once by the schedule's
//! [`Store`]: through staging tiles in shared memory (`stmatrix`, or single stores for a swapped
//! tile, then a TMA store of each sub-tile), or from the registers (`_u`), each thread's pairs
//! exchanged in its quad ([`super::direct`]) and stored with `st.global`.

use dsl_core::atom::tma::CacheHint;
use dsl_core::ir::op::StCache;
use dsl_core::kernel::*;
use dsl_core::pipeline::NamedBarrier;
use dsl_core::tensor::{copy, store_fragment_smem, Fragment, STensor};
use dsl_core::tiled::Side;
use dsl_macros::device;

use super::direct::{quad_exchange, DeviceQuad, ThreadStore};
use super::plan::HopperPlan;
use super::roles::{Output, Unit};
use super::schedule::{Consumers, Store, StoreWidth};
use super::HopperError;
use crate::gemm::epilogue::{DeviceEpilogue, Epilogue};
use crate::gemm::fused::{elementwise, store_gated, AccValue, FormParams, ThreadTile};
use crate::gemm::layout::FormParts;
use crate::gemm::GemmElem;
use dsl_core::tensor::{CTensor, Idx};

/// One of a consumer's staging tiles: where it starts, and the thread's part of it.
pub(super) struct StagingTile<T: GemmElem> {
    ptr: SharedPtr<T>,
    part: STensor<T>,
}

/// Consumer `c`'s staging tiles (thread `t`'s part of each); none where D is stored from the
/// registers (`_u`: the shared memory has no staging).
pub(super) fn staging_tiles<T: GemmElem>(
    plan: &HopperPlan,
    out: &Output<T>,
    c: u32,
    t: Var<u32>,
) -> Result<Vec<StagingTile<T>>, HopperError> {
    let s = &plan.schedule;
    if s.sub_tile().is_none() {
        return Ok(Vec::new());
    }
    let first = staging_of(plan, out, c);
    (0..s.staging_buffers())
        .map(|b| {
            let ptr = match b {
                0 => first,
                _ => first + b * s.staging_tile_elems(),
            };
            let sd = STensor::new(ptr, plan.smem_d.clone())?;
            Ok(StagingTile {
                ptr,
                part: staging_partition(plan, &sd, t)?,
            })
        })
        .collect()
}

/// Consumer `c`'s first staging tile in shared memory (with `_o`, the one both share); its
/// second (`_d2`) follows it.
fn staging_of<T: GemmElem>(plan: &HopperPlan, out: &Output<T>, c: u32) -> SharedPtr<T> {
    let s = &plan.schedule;
    if s.shared_staging() {
        return out.staging;
    }
    out.staging + c * s.staging_buffers() * s.staging_tile_elems()
}

/// Thread `t`'s part of a consumer's staging tile `sd`: the `stmatrix` partition, or (swapped,
/// a transposed tile that `stmatrix` cannot write) the accumulators' own.
fn staging_partition<T: GemmElem>(
    plan: &HopperPlan,
    sd: &STensor<T>,
    t: Var<u32>,
) -> Result<STensor<T>, HopperError> {
    Ok(if plan.schedule.swapped() {
        sd.partition_c(&plan.mma, t)?
    } else {
        sd.partition(&plan.r2s, Side::Dst, t)?
    })
}

/// Consumer `c`'s epilogue of the current unit's tile (thread `t`; `staging`, its staging tiles
/// and its part of each; `own`, its warpgroup's barrier): stored from the registers
/// ([`Store::Direct`]), or through the staging ([`Store::Tma`]).
#[device]
pub(super) fn epilogue<T: GemmElem>(
    plan: &HopperPlan,
    c: u32,
    acc: &Fragment<f32>,
    out: &Output<T>,
    unit: &Unit,
    (t, staging, own): (Var<u32>, &[StagingTile<T>], NamedBarrier),
) -> Result<(), HopperError> {
    let s = &plan.schedule;
    let rows = s.consumer_rows();
    // Consumer c's rows of the tile; ping-pong, the tile is c's own.
    let row0 = match s.consumers {
        Consumers::PingPong(_) => 0,
        Consumers::Cooperative(_) => c * rows,
    };
    let stored = match (plan.form, out.form) {
        (Some(parts), Some(params)) => fused(plan, parts, params, acc, out, (unit, row0), t)?,
        _ => Stored::Sums,
    };
    match (stored, s.store()) {
        (Stored::Done, _) => {}
        (Stored::Sums, Store::Direct(width)) => {
            let tile = DirectTile {
                d: out.d_at(unit.z),
                extents: (unit.m_end, out.n),
                origin: (unit.m0 + row0, unit.n0),
                ld: out.ldd,
            };
            store_direct(plan, width, acc, &tile, t);
        }
        (Stored::Sums, Store::Tma(_)) => {
            staged_store(plan, acc, out, (unit, row0), (t, staging, own))?
        }
    }
    Ok(())
}

/// Whether a form's epilogue stored D itself, or left the rewritten sums to the store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stored {
    /// D is stored.
    Done,
    /// The sums were rewritten in their registers (or left as they were): store them.
    Sums,
}

/// A form's epilogue of the current unit: the consumer's accumulators placed in the sum (its
/// tile at `(unit.m0 + row0, unit.n0)`, rows before `unit.m_end`, columns before N), then a
/// gated epilogue's pairs stored to D from the registers, or an elementwise one's values
/// rewritten for the schedule's own store.
fn fused<T: GemmElem>(
    plan: &HopperPlan,
    parts: FormParts,
    params: FormParams,
    acc: &Fragment<f32>,
    out: &Output<T>,
    (unit, row0): (&Unit, u32),
    t: Var<u32>,
) -> Result<Stored, HopperError> {
    if parts.epilogue == Epilogue::Plain {
        return Ok(Stored::Sums);
    }
    let s = &plan.schedule;
    let (rows, bn) = (s.consumer_rows(), s.tile.n());
    // The consumer's tile at (unit.m0 + row0, unit.n0), the thread's first value within it, the
    // plan's offsets from there.
    let first = CTensor::new(&[Var::konst(rows), Var::konst(bn)])
        .local_tile(&[i64::from(rows), i64::from(bn)], &[Idx::At(0), Idx::At(0)])?
        .partition_c(&plan.mma, t)?
        .origin();
    let (m0, n0) = (unit.m0 + row0, unit.n0);
    let whole = (m0 + rows).le(unit.m_end) & (n0 + bn).le(out.n);
    let (base, extents) = ((m0 + first[0], n0 + first[1]), (unit.m_end, out.n));
    // Swapped (`_t`), the kernel's tile is D's transposed: D's rows run along its columns.
    let tile = if s.swapped() {
        ThreadTile {
            base: (base.1, base.0),
            values: plan
                .acc_offsets
                .iter()
                .map(|v| AccValue {
                    dr: v.dc,
                    dc: v.dr,
                    ..*v
                })
                .collect(),
            extents: (extents.1, extents.0),
            whole,
        }
    } else {
        ThreadTile {
            base,
            values: plan.acc_offsets.clone(),
            extents,
            whole,
        }
    };
    let epi = DeviceEpilogue {
        epilogue: &parts.epilogue,
        alpha: params.alpha,
        beta: params.beta,
    };
    let ops = params.operands::<T>(out.d.cast::<u32>(), unit.z);
    if parts.epilogue.is_gated() {
        store_gated(&epi, acc, &tile, &ops);
        return Ok(Stored::Done);
    }
    elementwise(&epi, acc, &tile, &ops);
    Ok(Stored::Sums)
}

/// The epilogue through the staging: registers -> shared (`stmatrix`, or single stores for a
/// swapped tile) -> global (TMA store), one sub-tile of the staging's width at a time, the
/// staging tiles in turn; the stores are not waited for, only their reads of a staging tile
/// before it is written again (with two, the store before last: sub-tiles per tile are even,
/// so a tile's first takes the tile its last but one did).
#[device]
fn staged_store<T: GemmElem>(
    plan: &HopperPlan,
    acc: &Fragment<f32>,
    out: &Output<T>,
    (unit, row0): (&Unit, u32),
    (t, staging, own): (Var<u32>, &[StagingTile<T>], NamedBarrier),
) -> Result<(), HopperError> {
    let s = &plan.schedule;
    let bn = s.tile.n();
    let epi = s.epilogue_cols();
    let turns = staging.len() as u32;
    for j in 0..bn / epi {
        let StagingTile {
            ptr: sd_ptr,
            part: t_cs_d,
        } = &staging[(j % turns) as usize];
        if t.eq_(0u32) {
            // The store that last read this staging tile has read it.
            bulk_wait_group_read(turns - 1);
        }
        own.sync();
        if s.swapped() {
            // D's transposed tile: its rows are the accumulators' columns.
            store_fragment_smem(acc, t_cs_d)?;
        } else {
            let sub = sub_tile(acc, plan, j).to_pairs::<T>()?;
            copy(&plan.r2s.atom, &sub, t_cs_d)?;
        }
        // The TMA store reads through the async proxy.
        fence_proxy_async_shared();
        own.sync();
        if t.eq_(0u32) {
            let n0 = column(unit.n0, j * epi);
            // Of a batch, the unit's GEMM is the map's third coordinate.
            let origin = [unit.m0 + row0, n0, unit.z];
            if s.row_split() {
                // A piece ends inside D: its boxes past its rows are the next piece's.
                let rows = unit.m_end - origin[0];
                plan.tma_d
                    .store_within(out.d_map, &origin, *sd_ptr, (0, rows));
            } else {
                plan.tma_d.store(out.d_map, &origin, *sd_ptr);
            }
            bulk_commit_group();
        }
    }
    Ok(())
}

/// Column `n0 + off` (`n0` itself for the first sub-tile: no instruction).
fn column(n0: Var<u32>, off: u32) -> Var<u32> {
    if off == 0 {
        n0
    } else {
        n0 + off
    }
}

/// Epilogue sub-tile `j` of a consumer's accumulators, as the sub-tile's `stmatrix` copy reads
/// it: the registers [`HopperPlan::epilogue_source`] names (the plan checked that they hold the
/// sub-tile's columns), so that only they are rounded and packed.
fn sub_tile(acc: &Fragment<f32>, plan: &HopperPlan, j: u32) -> Fragment<f32> {
    Fragment {
        regs: (0..plan.epilogue_values())
            .map(|v| acc.regs[plan.epilogue_source(j, v) as usize])
            .collect(),
        ..acc.with_layout(plan.retile_c.clone())
    }
}

/// Where a consumer's tile of D is: D (row-major, `n` columns), the row the tile's output ends
/// before (M, or the end of a piece of rows: [`super::row_split`]) and the tile's first row and
/// column.
pub(super) struct DirectTile<T> {
    /// D's first element.
    pub(super) d: GlobalPtr<T>,
    /// `(the row the output ends before, n)`.
    pub(super) extents: (Var<u32>, Var<u32>),
    /// The consumer tile's origin in D.
    pub(super) origin: (Var<u32>, Var<u32>),
    /// D's row stride: `n`, or a form's `ldd`.
    pub(super) ld: Var<u32>,
}

/// Consumer thread `t`'s part of the epilogue: its accumulators `acc` rounded to `T`, exchanged
/// in its quad and stored to `tile` as [`HopperPlan::direct`] lists, each store `_u`'s bytes.
/// A tile inside D is stored without predicates; one that crosses D's edge stores where each
/// row and block of 8 columns exists (N is a multiple of 8: a store's columns are all in or all
/// out). With `_v..f`, the stores are streaming (`st.global.cs`).
fn store_direct<T: GemmElem>(
    plan: &HopperPlan,
    width: StoreWidth,
    acc: &Fragment<f32>,
    tile: &DirectTile<T>,
    t: Var<u32>,
) {
    let schedule = &plan.schedule;
    let w = width.bytes() / 4;
    let bf16 = T::TY == dsl_core::ir::Type::BF16;
    let lane = t & 31u32;
    let q = lane & 3u32;
    let mut quad = DeviceQuad::new(q);
    // Round and exchange every store's pairs first: both paths below store the same registers.
    let values: Vec<Vec<Var<u32>>> = plan
        .direct
        .iter()
        .map(|s| {
            let mut slots: Vec<Var<u32>> = s
                .pairs
                .iter()
                .map(|&p| {
                    let (lo, hi) = (acc.regs[2 * p as usize], acc.regs[2 * p as usize + 1]);
                    pack_pair_bits(bf16, lo, hi)
                })
                .collect();
            quad_exchange(&mut quad, &mut slots);
            slots
        })
        .collect();
    let (m, n) = tile.extents;
    let (row0, col0) = tile.origin;
    let row = row0 + (t >> 5u32) * 16u32 + (lane >> 2u32);
    // Lane q's columns: block q % w of each group, pairs from (q / w) * w.
    // (lane_column's arithmetic, on the device: w is a power of 2.)
    let lane_col = (q & (w - 1)) * 8u32 + (q >> w.trailing_zeros()) * (2 * w);
    let col = col0 + lane_col;
    let ld = tile.ld;
    let base = tile.d + row.cast::<u64>() * ld.cast::<u64>() + col;
    let cache = (schedule.l2.hints.d == Some(CacheHint::EvictFirst)).then_some(StCache::Cs);
    // One row pointer per row the thread holds (0, 8; 64, 72 for 128 rows), each made once.
    let held: std::collections::BTreeSet<u32> = plan.direct.iter().map(|s| s.row).collect();
    let row_ptr: std::collections::BTreeMap<u32, GlobalPtr<T>> = held
        .into_iter()
        .map(|r| (r, if r == 0 { base } else { base + ld * r }))
        .collect();
    let ptr_of = |s: &ThreadStore| row_ptr[&s.row] + s.col;
    let store = |s: &ThreadStore, v: &[Var<u32>]| {
        let p = ptr_of(s).cast::<u32>();
        match v {
            [a] => p.store_vec_cached([*a], cache),
            [a, b] => p.store_vec_cached([*a, *b], cache),
            [a, b, c, d] => p.store_vec_cached([*a, *b, *c, *d], cache),
            _ => unreachable!("a store is 1, 2 or 4 words (StoreWidth)"),
        }
    };
    let (rows, bn) = (schedule.consumer_rows(), schedule.tile.n());
    let whole = (row0 + rows).le(m) & (col0 + bn).le(n);
    whole.if_else(|arm| match arm {
        Arm::Then => {
            for (s, v) in plan.direct.iter().zip(&values) {
                store(s, v);
            }
        }
        Arm::Else => {
            for (s, v) in plan.direct.iter().zip(&values) {
                let inside = (row + s.row).lt(m) & (col + s.col).lt(n);
                inside.if_(|_| store(s, v));
            }
        }
    });
}
