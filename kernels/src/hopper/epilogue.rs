//! The epilogue: a consumer's accumulators to D, one of two ways, chosen once by the schedule's
//! [`Store`]: through staging tiles in shared memory (`stmatrix`, or single stores for a swapped
//! tile, then a TMA store of each sub-tile), or from the registers (`_u`), each thread's pairs
//! exchanged in its quad ([`super::direct`]) and stored with `st.global`. A form's epilogue runs
//! on the accumulators first; where D is f32, or the epilogue is gated, the form's values go to
//! D from the registers instead ([`FormStore`]).

use dsl_core::atom::tma::CacheHint;
use dsl_core::ir::op::StCache;
use dsl_core::kernel::*;
use dsl_core::layout::LayoutError;
use dsl_core::pipeline::WARPGROUP_THREADS;
use dsl_core::tensor::{copy, store_fragment_smem, Fragment, STensor};
use dsl_core::tiled::Side;
use dsl_macros::device;
use half::{bf16, f16};

use super::consumer::OwnBarrier;
use super::direct::{quad_exchange, DeviceQuad, ThreadStore};
use super::epilogue_warps::{Finisher, HandOff};
use super::gated::store_gated_quads;
use super::plan::{HopperPlan, StagingWrite, StmatrixCopy};
use super::roles::{Output, Unit};
use super::schedule::{Consumers, Store, StoreWidth};
use super::staged_residual::plus_residual;
use super::HopperError;
use crate::gemm::epilogue::{DeviceEpilogue, Epilogue};
use crate::gemm::fused::{
    check_gated_pairs, elementwise, gated_lane_pairs, store_each, store_gated_lanes, store_pairs,
    AccValue, FormParams, LanePairs, ThreadTile,
};
use crate::gemm::layout::{FormParts, OutType};
use crate::gemm::strided::OutElem;
use crate::gemm::{GemmDtype, GemmElem};
use dsl_core::tensor::{CTensor, Idx};

/// How the epilogue's values leave a consumer's registers, chosen once per plan from D's type,
/// the epilogue and whether the schedule swaps A and B (its tile is then D's transpose), each
/// layout it relies on proved on the host ([`FormStore::of`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FormStore {
    /// The schedule's own store (staging and a TMA store, or `_u` from the registers), the
    /// values rounded to D's 16-bit type: the input type, or the other one (a TMA store moves
    /// 16-bit elements as they are).
    Schedule(GemmDtype),
    /// f32 values to D from the registers, through no staging and no tensor map (both hold
    /// 16-bit elements).
    F32(F32Store),
    /// A gated epilogue's results to D from the registers (D half as wide as the sum).
    Gated(GatedPairs),
}

/// How an f32 D is stored from the registers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum F32Store {
    /// A thread's values `v` (even) and `v + 1`, adjacent columns of one row, as one 8-byte store
    /// ([`store_pairs`]; D's rows on 8 bytes).
    Pairs,
    /// Each value alone ([`store_each`]): a swapped tile's pairs are adjacent rows of D.
    Each,
}

/// Where a gated epilogue's gate and up columns (`2j`, `2j + 1`) are held.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GatedPairs {
    /// In one thread, values `v` (even) and `v + 1`: stored 16 bytes a lane through the quad's
    /// exchange where the tile is inside D ([`store_gated_quads`]), else one value at a time.
    InThread,
    /// In two lanes of a warp, the swapped tile's rows `2j` and `2j + 1`
    /// ([`store_gated_lanes`]).
    Lanes(LanePairs),
}

impl FormStore {
    /// The store of `plan`'s accumulators (its MMA's fragment over a consumer's `rows x cols`)
    /// for a form's `parts` (`None`: the packed form, the schedule's store in the input type),
    /// or why the layouts do not hold what the store needs, naming the thread and value.
    pub fn of(
        parts: Option<FormParts>,
        plan: &HopperPlan,
        dims: (i64, i64),
    ) -> Result<FormStore, String> {
        let swapped = plan.schedule.swapped();
        let Some(parts) = parts else {
            return Ok(FormStore::Schedule(plan.dtype));
        };
        let pairs_in_thread = || check_gated_pairs(&plan.mma, &plan.frag_c, dims);
        if parts.epilogue.is_gated() {
            return Ok(FormStore::Gated(if swapped {
                GatedPairs::Lanes(gated_lane_pairs(&plan.mma, &plan.frag_c, dims)?)
            } else {
                pairs_in_thread()?;
                GatedPairs::InThread
            }));
        }
        Ok(match parts.out {
            OutType::F16 => FormStore::Schedule(GemmDtype::F16),
            OutType::Bf16 => FormStore::Schedule(GemmDtype::Bf16),
            OutType::F32 if !swapped && pairs_in_thread().is_ok() => {
                FormStore::F32(F32Store::Pairs)
            }
            OutType::F32 => FormStore::F32(F32Store::Each),
        })
    }

    /// Whether D is written through its tensor map (from the staging, or `_u` beside it): else
    /// the kernel never reads the map, nor stages D.
    pub fn maps_d(&self) -> bool {
        matches!(self, FormStore::Schedule(_))
    }

    /// The alignment in bytes the rows of D (of `out`) need: a TMA map's 16, or the register
    /// stores' width.
    pub fn d_row_bytes(&self, out: OutType) -> u64 {
        let elem = out.bytes() as u64;
        match self {
            FormStore::Schedule(_) => 16,
            FormStore::F32(F32Store::Pairs) => 2 * elem,
            FormStore::F32(F32Store::Each) | FormStore::Gated(_) => elem,
        }
    }
}

/// One of a consumer's staging tiles: where it starts, and the thread's part of it.
pub(super) struct StagingTile<T: GemmElem> {
    ptr: SharedPtr<T>,
    part: STensor<T>,
}

/// Consumer `c`'s staging tiles (thread `t`'s part of each); none where D is stored from the
/// registers (`_u`: the shared memory has no staging; or a form's [`FormStore`] other than the
/// schedule's).
pub(super) fn staging_tiles<T: GemmElem>(
    plan: &HopperPlan,
    out: &Output<T>,
    c: Var<u32>,
    t: Var<u32>,
) -> Result<Vec<StagingTile<T>>, HopperError> {
    let s = &plan.schedule;
    if s.sub_tile().is_none() || !plan.form_store.maps_d() {
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
pub(super) fn staging_of<T: GemmElem>(
    plan: &HopperPlan,
    out: &Output<T>,
    c: Var<u32>,
) -> SharedPtr<T> {
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
    Ok(match &plan.staging_write {
        StagingWrite::Stmatrix(stmatrix) => sd.partition(&stmatrix.r2s, Side::Dst, t)?,
        StagingWrite::Single => sd.partition_c(&plan.mma, t)?,
    })
}

/// Consumer `c`'s epilogue of the current unit's tile (thread `t`; `staging`, its staging tiles
/// and its part of each; `own`, its warpgroup's barrier; `handoff`, the epilogue warps' with
/// `_x`): a form's epilogue, then the sums stored from the registers ([`Store::Direct`]), or
/// through the staging ([`Store::Tma`]), unless the form stored D itself; or (`_x`) the sums
/// staged for the epilogue warps ([`handed_store`]).
#[device]
pub(super) fn epilogue<T: GemmElem>(
    plan: &HopperPlan,
    c: Var<u32>,
    acc: &Fragment<f32>,
    out: &Output<T>,
    unit: &Unit,
    (t, staging, own, handoff): (Var<u32>, &[StagingTile<T>], &OwnBarrier, Option<HandOff>),
    last: Var<bool>,
) -> Result<(), HopperError> {
    if let Some(handoff) = handoff {
        let helper = c * WARPGROUP_THREADS + t;
        return handed_store(plan, (acc, out, unit), staging, &handoff, (last, helper));
    }
    let s = &plan.schedule;
    let rows = s.consumer_rows();
    // Consumer c's rows of the tile; ping-pong, the tile is c's own.
    let row0 = match s.consumers {
        Consumers::PingPong(_) => Var::konst(0u32),
        Consumers::Cooperative(_) => c * rows,
    };
    let stored = match plan.form.zip(out.form) {
        Some((parts, params)) => {
            let at = (unit, row0);
            match parts.out {
                OutType::F16 => fused::<T, f16>(plan, parts, params, acc, out, at, t)?,
                OutType::Bf16 => fused::<T, bf16>(plan, parts, params, acc, out, at, t)?,
                OutType::F32 => fused::<T, f32>(plan, parts, params, acc, out, at, t)?,
            }
        }
        None => Stored::Sums(T::DTYPE),
    };
    match (stored, s.store()) {
        (Stored::Done, _) => {}
        (Stored::Sums(d16), Store::Direct(width)) => {
            let tile = DirectTile {
                d: out.d_at(unit.z),
                extents: (unit.m_end, out.n),
                origin: (unit.m0 + row0, unit.n0),
                ld: out.ldd,
            };
            store_direct(plan, (width, d16), acc, &tile, t);
        }
        (Stored::Sums(d16), Store::Tma(_)) => {
            staged_store(plan, (acc, d16), out, (unit, row0), (t, staging, own))?
        }
        (Stored::Sums(_), Store::EpilogueWarps) => {
            unreachable!("with _x the consumers hand the tile over (handed_store)")
        }
    }
    Ok(())
}

/// Whether a form's epilogue stored D itself, or left the rewritten sums to the store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stored {
    /// D is stored.
    Done,
    /// The sums were rewritten in their registers (or left as they were): store them, rounded
    /// to this 16-bit type.
    Sums(GemmDtype),
}

/// A form's epilogue of the current unit, D of type `O`: the consumer's accumulators placed in
/// the sum (its tile at `(unit.m0 + row0, unit.n0)`, rows before `unit.m_end`, columns before
/// N), then as the plan's [`FormStore`] says: an elementwise epilogue's values rewritten for the
/// schedule's own store, or stored to D from the registers (f32), or a gated epilogue's pairs
/// stored from the registers (in one thread, or across two lanes for a swapped tile).
fn fused<T: GemmElem, O: OutElem>(
    plan: &HopperPlan,
    parts: FormParts,
    params: FormParams,
    acc: &Fragment<f32>,
    out: &Output<T>,
    (unit, row0): (&Unit, Var<u32>),
    t: Var<u32>,
) -> Result<Stored, HopperError> {
    let plain = parts.epilogue == Epilogue::Plain;
    if let (FormStore::Schedule(d16), true) = (plan.form_store, plain) {
        return Ok(Stored::Sums(d16));
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
    let ops = params.operands::<O>(out.d.cast::<u32>(), unit.z);
    let rewrite = || {
        if !plain {
            elementwise(&epi, acc, &tile, &ops);
        }
    };
    Ok(match plan.form_store {
        FormStore::Schedule(d16) => {
            rewrite();
            Stored::Sums(d16)
        }
        FormStore::F32(each) => {
            rewrite();
            match each {
                F32Store::Pairs => store_pairs(acc, &tile, &ops),
                F32Store::Each => store_each(acc, &tile, &ops),
            }
            Stored::Done
        }
        FormStore::Gated(GatedPairs::InThread) => {
            store_gated_quads(&epi, acc, (&tile, &ops), &plan.gated, t & 31u32);
            Stored::Done
        }
        FormStore::Gated(GatedPairs::Lanes(pairs)) => {
            store_gated_lanes(&epi, acc, &tile, &ops, pairs);
            Stored::Done
        }
    })
}

/// With the epilogue warps (`_x`): `alpha * acc` (an elementwise form's alpha; the sums as
/// they are otherwise) rounded to D's 16-bit type into the consumer's staging tile, once the
/// epilogue warps have freed it, then handed to them ([`super::epilogue_warps`]), who apply
/// the rest of the form and store the tile; on the block's `last` tile the consumers help
/// them (thread `helper` of the consumers').
#[device]
fn handed_store<T: GemmElem>(
    plan: &HopperPlan,
    (acc, out, unit): (&Fragment<f32>, &Output<T>, &Unit),
    staging: &[StagingTile<T>],
    handoff: &HandOff,
    (last, helper): (Var<bool>, Var<u32>),
) -> Result<(), HopperError> {
    let FormStore::Schedule(d16) = plan.form_store else {
        return Err(HopperError::Plan(super::PlanError::EpilogueWarps));
    };
    let finisher = Finisher::new(plan, out)?;
    if let (Some(parts), Some(params)) = (plan.form, out.form) {
        // A linear layer's alpha is 1: its 128 multiplies a thread are skipped.
        if matches!(parts.epilogue, Epilogue::Elementwise(_)) {
            if params.alpha.ne_(1.0f32) {
                scale(acc, params.alpha);
            }
        }
    }
    let StagingTile { part, .. } = &staging[0];
    let stmatrix = plan.stmatrix()?;
    let sub = sub_tile(acc, plan, stmatrix, 0);
    let sums = match &out.residual {
        // R is loaded into the staging once it is free: the sums wait for it there.
        Some(r) => {
            handoff.wait_free();
            rounded_pairs(&plus_residual(r, plan, (part, &sub), d16)?, d16)?
        }
        None => {
            let sums = rounded_pairs(&sub, d16)?;
            handoff.wait_free();
            sums
        }
    };
    copy(&stmatrix.r2s.atom, &sums, part)?;
    // The TMA store reads what is left as staged (rows past M) through the async proxy.
    fence_proxy_async_shared();
    handoff.staged(&finisher, unit, (last, helper));
    Ok(())
}

/// Multiplies each of `acc`'s registers by `alpha` in place. (A plain function: in a
/// `#[device]` body, `let mut` copies a value into a register of its own.)
fn scale(acc: &Fragment<f32>, alpha: Var<f32>) {
    for reg in &acc.regs {
        let mut reg = *reg;
        reg.set(reg * alpha);
    }
}

/// `acc`'s values rounded to the 16-bit `d16` and packed in pairs.
fn rounded_pairs(acc: &Fragment<f32>, d16: GemmDtype) -> Result<Fragment<u32>, LayoutError> {
    match d16 {
        GemmDtype::F16 => acc.to_pairs::<f16>(),
        GemmDtype::Bf16 => acc.to_pairs::<bf16>(),
    }
}

/// The epilogue through the staging, the values rounded to `d16`: registers -> shared
/// (`stmatrix`, or single stores for a swapped tile) -> global (TMA store), one sub-tile of the staging's width at a time, the
/// staging tiles in turn; the stores are not waited for, only their reads of a staging tile
/// before it is written again (with two, the store before last: sub-tiles per tile are even,
/// so a tile's first takes the tile its last but one did).
#[device]
fn staged_store<T: GemmElem>(
    plan: &HopperPlan,
    (acc, d16): (&Fragment<f32>, GemmDtype),
    out: &Output<T>,
    (unit, row0): (&Unit, Var<u32>),
    (t, staging, own): (Var<u32>, &[StagingTile<T>], &OwnBarrier),
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
        match &plan.staging_write {
            StagingWrite::Stmatrix(stmatrix) => {
                let sub = rounded_pairs(&sub_tile(acc, plan, stmatrix, j), d16)?;
                copy(&stmatrix.r2s.atom, &sub, t_cs_d)?;
            }
            // D's transposed tile: its rows are the accumulators' columns. (D of the other
            // 16-bit type: rounded to it first, the staging's elements moved as they are.)
            StagingWrite::Single if d16 == T::DTYPE => store_fragment_smem(acc, t_cs_d)?,
            StagingWrite::Single => store_fragment_smem(&rounded_pairs(acc, d16)?, t_cs_d)?,
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

/// Epilogue sub-tile `j` of a consumer's accumulators, as the sub-tile's `stmatrix` copy (the
/// plan's) reads it: the registers [`HopperPlan::epilogue_source`] names (the plan checked that
/// they hold the sub-tile's columns), so that only they are rounded and packed.
fn sub_tile(
    acc: &Fragment<f32>,
    plan: &HopperPlan,
    stmatrix: &StmatrixCopy,
    j: u32,
) -> Fragment<f32> {
    Fragment {
        regs: (0..plan.epilogue_values())
            .map(|v| acc.regs[plan.epilogue_source(j, v) as usize])
            .collect(),
        ..acc.with_layout(stmatrix.retile_c.clone())
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

/// Consumer thread `t`'s part of the epilogue: its accumulators `acc` rounded to the 16-bit
/// `d16`, exchanged in its quad and stored to `tile` as [`HopperPlan::direct`] lists, each
/// store `_u`'s bytes (`width`).
/// A tile inside D is stored without predicates; one that crosses D's edge stores where each
/// row and block of 8 columns exists (N is a multiple of 8: a store's columns are all in or all
/// out). With `_v..f`, the stores are streaming (`st.global.cs`).
fn store_direct<T: GemmElem>(
    plan: &HopperPlan,
    (width, d16): (StoreWidth, GemmDtype),
    acc: &Fragment<f32>,
    tile: &DirectTile<T>,
    t: Var<u32>,
) {
    let schedule = &plan.schedule;
    let w = width.bytes() / 4;
    let bf16 = d16 == GemmDtype::Bf16;
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
