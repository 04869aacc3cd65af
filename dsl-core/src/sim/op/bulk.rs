//! Tensor copies of the Tensor Memory Accelerator and their bulk groups (PTX ISA 9.7.9.27:
//! `cp.async.bulk.tensor`, `cp.async.bulk.prefetch.tensor`, `cp.async.bulk.commit_group`,
//! `cp.async.bulk.wait_group`; `prefetch.tensormap`; tensors and tensor maps per chapter 5.5).
//!
//! A copy reads its tensor map ([`TmaMap`]: the description the kernel's tensor-map argument
//! was encoded from, [`Arg::Tma`](crate::sim::Arg::Tma)) and walks its box innermost dimension
//! first; elements outside the tensor read as zeros (loads) or are not written (stores, which
//! clip at the tensor's bounds). In shared memory the box lies packed from the destination,
//! each 16-byte chunk moved by the map's swizzle (5.5.7, on the byte address).
//!
//! - A load (`.shared::cluster.global.mbarrier::complete_tx::bytes`) is performed by a TMA agent
//!   of the issuing block: when it completes (as late as the run allows, or where the
//!   scheduler picks), it writes the box to the destination block, or with
//!   `.multicast::cluster` to every block of the mask at the same offset, in the async proxy,
//!   and performs complete-tx of the box's bytes on the mbarrier: in each destination block at
//!   the barrier's offset; with `.cta_group::2` on the barrier's block (the destination or its
//!   peer) or, multicast, on whichever block of each destination's pair has the barrier's
//!   parity (9.7.9.27.1.2). The complete-tx releases the copy's writes only ("ordered only with
//!   respect to the memory operations performed by the same asynchronous instruction", 8.9.1.1):
//!   a waiter that sees the phase complete acquires the copy, not its issuer.
//! - A store (`.global.shared::cta.bulk_group`) reads its box from the issuing block's shared
//!   memory in the async proxy (so the threads that wrote it need `fence.proxy.async`), then
//!   writes global memory; its bulk group's `wait_group.read` completes the read,
//!   `wait_group` both, and either makes the copy's shared-memory reads happen before the
//!   waiting thread's later accesses (groups complete in commit order, 9.7.9.25.1.1).
//! - A prefetch brings nothing anywhere: its tensor map is checked.

use super::super::asyncop::{complete_at, finish_read_at, AsyncKind, InFlight};
use super::super::clock::{epoch, Vc, LOAD_AGENTS};
use super::super::env::{Symbol, CLUSTER_FLAG, PARAM_WINDOW};
use super::super::exec::{Exec, Flow};
use super::super::regs::lanes;
use super::super::report::{FindingKind, SimError};
use super::super::shadow::{site, Accessor, SharedMem};
use super::super::tensor_map::{Swizzle, TmaMap};
use super::memory::{address, check_global_read, check_global_write, place, report_shared, Place};
use crate::atom::tma::{TmaInterleave, TmaOobFill};
use crate::ir::op::{Bulk, CtaGroup, TensorMapRef};
use crate::ir::{Address, Operand, StateSpace, Type};

/// A warp's bulk groups.
#[derive(Debug, Clone, Default)]
pub(crate) struct BulkWarp {
    /// Per lane, the groups committed (the open group's index).
    pub committed: [u32; 32],
    /// Stores issued and not yet waited for: (lane, group, agent clock).
    pub issued: Vec<(u32, u32, u32)>,
}

/// One lane's tensor load.
#[derive(Debug, Clone)]
pub(crate) struct TmaLoad {
    pub lane: u32,
    /// Its tensor map, by index in the launch's maps.
    pub map: usize,
    pub coords: [i64; 5],
    /// Per destination block: its rank, the shared offset, the mbarrier (rank, offset) its
    /// complete-tx goes to.
    pub dsts: Vec<(u32, u32, (u32, u32))>,
}

/// One lane's tensor store.
#[derive(Debug, Clone)]
pub(crate) struct TmaStore {
    pub lane: u32,
    pub map: usize,
    pub coords: [i64; 5],
    /// The source's offset in the issuing block's shared memory.
    pub src: u32,
    pub group: u32,
    /// The box as read from shared memory, once read.
    pub data: Option<Vec<u8>>,
}

pub(crate) fn exec(x: &mut Exec<'_, '_>, op: &Bulk) -> Result<Flow, SimError> {
    match op {
        Bulk::TensorLoad {
            dst,
            tensor_map,
            coords,
            mbar,
            multicast,
            cta_group,
            ..
        } => load(
            x,
            dst,
            tensor_map,
            coords,
            mbar,
            multicast.as_ref(),
            *cta_group,
        ),
        Bulk::TensorStore {
            tensor_map,
            coords,
            src,
            ..
        } => store(x, tensor_map, coords, src),
        Bulk::TensorPrefetch {
            tensor_map, coords, ..
        } => {
            read_coords(x, coords)?;
            for l in lanes(x.mask) {
                map_of(x, tensor_map, l)?;
            }
            Ok(Flow::Next)
        }
        Bulk::PrefetchTensormap { tensor_map } => {
            // A hint: the map may be the driver's opaque bytes; only its address is checked.
            for l in lanes(x.mask) {
                param_offset(x, tensor_map, l)?;
            }
            Ok(Flow::Next)
        }
        Bulk::CommitGroup => {
            for l in lanes(x.mask) {
                x.w().bulk.committed[l] += 1;
            }
            Ok(Flow::Next)
        }
        Bulk::WaitGroup { n, read } => wait(x, *n, *read),
    }
}

/// The parameter-block offset of the tensor map `r` names in `lane`.
fn param_offset(x: &Exec<'_, '_>, r: &TensorMapRef, lane: usize) -> Result<u32, SimError> {
    let unsupported = |what: String| SimError::Unsupported {
        op: format!("{} ({what})", x.op),
        location: x.loc(),
    };
    match r {
        TensorMapRef::Param(name) => match x.env.symbols.get(name) {
            Some(Symbol::Param(o)) => Ok(*o),
            _ => Err(SimError::BadOperand {
                op: x.op,
                location: x.loc(),
                detail: format!("`{name}` names no parameter"),
            }),
        },
        TensorMapRef::Reg(reg) => {
            let a = x.reg(*reg)[lane];
            let params = x.env.params.bytes.len() as u64;
            if (PARAM_WINDOW..PARAM_WINDOW + params).contains(&a) {
                Ok((a - PARAM_WINDOW) as u32)
            } else {
                Err(unsupported(format!(
                    "a tensor map at {a:#x}, outside the kernel's parameters"
                )))
            }
        }
    }
}

/// The tensor map `r` names in `lane` (its index in the launch's maps, and the map).
fn map_of<'r>(
    x: &Exec<'r, '_>,
    r: &TensorMapRef,
    lane: usize,
) -> Result<(usize, &'r TmaMap), SimError> {
    let off = param_offset(x, r, lane)?;
    let env = x.env;
    let Some(i) = env.tensor_maps.iter().position(|(o, _)| *o == off) else {
        return Err(SimError::Unsupported {
            op: format!(
                "{} (a tensor map passed as encoded bytes; pass its description, Arg::Tma)",
                x.op
            ),
            location: x.loc(),
        });
    };
    let map = &env.tensor_maps[i].1;
    if map.interleave != TmaInterleave::None {
        return Err(x.unsupported("an interleaved tensor map"));
    }
    if map.element_strides[0] != 1 {
        return Err(x.unsupported("a traversal stride other than 1 in dimension 0"));
    }
    Ok((i, map))
}

/// Each coordinate operand's lanes, sign-extended.
fn read_coords(x: &Exec<'_, '_>, coords: &[Operand]) -> Result<Vec<[i64; 32]>, SimError> {
    coords
        .iter()
        .map(|c| Ok(x.read(c, Type::S32)?.map(|v| i64::from(v as u32 as i32))))
        .collect()
}

fn coords_of(cs: &[[i64; 32]], lane: usize) -> [i64; 5] {
    let mut out = [0; 5];
    for (o, c) in out.iter_mut().zip(cs) {
        *o = c[lane];
    }
    out
}

/// A shared::cluster address of `off` in block `rank`.
fn cluster_addr(rank: u32, off: u32) -> u64 {
    u64::from(CLUSTER_FLAG | (rank << 24) | off)
}

#[allow(clippy::too_many_arguments)]
fn load(
    x: &mut Exec<'_, '_>,
    dst: &Address,
    tensor_map: &TensorMapRef,
    coords: &[Operand],
    mbar: &Address,
    multicast: Option<&Operand>,
    group: Option<CtaGroup>,
) -> Result<Flow, SimError> {
    let dsts = address(x, dst, StateSpace::SharedCluster)?;
    let bars = address(x, mbar, StateSpace::SharedCluster)?;
    let cs = read_coords(x, coords)?;
    let masks = multicast.map(|m| x.read(m, Type::U16)).transpose()?;
    let blocks = x.cl.ctas.len() as u32;
    for l in lanes(x.mask) {
        let lane = l as u32;
        let (mi, map) = map_of(x, tensor_map, l)?;
        if coords.len() != map.dims.len() {
            return Err(SimError::BadOperand {
                op: x.op,
                location: x.loc(),
                detail: format!(
                    "{} coordinates for a tensor map of rank {}",
                    coords.len(),
                    map.dims.len()
                ),
            });
        }
        let bytes = map.box_bytes() as u32;
        let Some(Place::Shared { rank, off }) =
            place(x, StateSpace::SharedCluster, dsts[l], bytes, 16, lane)?
        else {
            continue;
        };
        let Some(Place::Shared {
            rank: brank,
            off: boff,
        }) = place(x, StateSpace::SharedCluster, bars[l], 8, 8, lane)?
        else {
            continue;
        };
        let targets: Vec<u32> = match &masks {
            Some(m) => (0..blocks).filter(|r| m[l] & (1 << r) != 0).collect(),
            None => vec![rank],
        };
        if masks.as_ref().is_some_and(|m| m[l] >> blocks != 0) {
            let m = masks.as_ref().map_or(0, |m| m[l]);
            x.find(FindingKind::OutOfBounds, lane, || {
                format!("multicast mask {m:#06x} names blocks past the cluster's {blocks}")
            });
        }
        let mut out = Vec::with_capacity(targets.len());
        for &t in &targets {
            // Every destination holds the box at the same offset.
            if t != rank
                && place(
                    x,
                    StateSpace::SharedCluster,
                    cluster_addr(t, off),
                    bytes,
                    16,
                    lane,
                )?
                .is_none()
            {
                continue;
            }
            let bar = match group {
                None | Some(CtaGroup::One) => {
                    if masks.is_none() && brank != t {
                        x.find(FindingKind::Mbarrier, lane, || {
                            format!(
                                "the mbarrier is in block rank {brank}, the data lands in block rank {t}: without .cta_group::2 they must be one block"
                            )
                        });
                    }
                    (t, boff)
                }
                Some(CtaGroup::Two) => {
                    if masks.is_none() && brank != t && brank != t ^ 1 {
                        x.find(FindingKind::Mbarrier, lane, || {
                            format!(
                                "the mbarrier is in block rank {brank}, neither the destination (rank {t}) nor its peer"
                            )
                        });
                    }
                    if masks.is_some() {
                        ((t & !1) | (brank & 1), boff)
                    } else {
                        (brank, boff)
                    }
                }
            };
            super::mbarrier::after_init(x, bar, lane, super::mbarrier::User::AsyncProxy);
            out.push((t, off, bar));
        }
        if out.is_empty() {
            continue;
        }
        let op = TmaLoad {
            lane,
            map: mi,
            coords: coords_of(&cs, l),
            dsts: out,
        };
        let cta = x.cta as u32;
        let next = &mut x.cl.ctas[x.cta].next_load;
        let agent = x.cl.comps.load(cta, *next % LOAD_AGENTS);
        *next = next.wrapping_add(1);
        let reached: Vec<u32> = op.dsts.iter().flat_map(|&(t, _, (b, _))| [t, b]).collect();
        let clock = issue(x, agent, AsyncKind::TmaLoad(Box::new(op)))?;
        // The bytes land, and the transaction counts complete, as the copy engine's writes.
        for r in reached {
            crate::sim::peers::note(x, r, lane, Some((agent, clock)));
        }
    }
    Ok(Flow::Next)
}

/// Puts an operation of agent `agent` in flight, acting with the issuing warp's clock; returns
/// its clock.
pub(crate) fn issue(x: &mut Exec<'_, '_>, agent: u32, kind: AsyncKind) -> Result<u32, SimError> {
    let clock = x.cl.agent_tick(agent)?;
    let mut vc = x.wr().vc.clone();
    vc.0[agent as usize] = clock;
    x.stats.async_ops += 1;
    x.cl.inflight.push(InFlight {
        cta: x.cta as u32,
        warp: x.warp as u32,
        agent,
        clock,
        vc,
        pc: x.pc,
        kind,
    });
    Ok(clock)
}

fn store(
    x: &mut Exec<'_, '_>,
    tensor_map: &TensorMapRef,
    coords: &[Operand],
    src: &Address,
) -> Result<Flow, SimError> {
    let srcs = address(x, src, StateSpace::Shared)?;
    let cs = read_coords(x, coords)?;
    for l in lanes(x.mask) {
        let lane = l as u32;
        let (mi, map) = map_of(x, tensor_map, l)?;
        let bytes = map.box_bytes() as u32;
        let c = coords_of(&cs, l);
        if let Some(d) = (0..coords.len()).find(|&d| c[d] < 0) {
            let v = c[d];
            x.find(FindingKind::OutOfBounds, lane, || {
                format!("a store's box starts at coordinate {v} of dimension {d}: it must not be negative")
            });
        }
        let Some(Place::Shared { off, .. }) =
            place(x, StateSpace::Shared, srcs[l], bytes, 16, lane)?
        else {
            continue;
        };
        let group = x.wr().bulk.committed[l];
        let (cta, warp) = (x.cta as u32, x.warp as u32);
        let agent = x.cl.comps.bulk(cta, warp);
        let op = TmaStore {
            lane,
            map: mi,
            coords: c,
            src: off,
            group,
            data: None,
        };
        let clock = issue(x, agent, AsyncKind::TmaStore(Box::new(op)))?;
        x.w().bulk.issued.push((lane, group, clock));
        // The store reads the block's shared memory until a wait says it has.
        crate::sim::peers::note(x, cta, lane, Some((agent, clock)));
    }
    Ok(Flow::Next)
}

/// `cp.async.bulk.wait_group{.read} n`: completes (the reads of) the stores of this warp's
/// lanes whose groups are older than the `n` most recent, and acquires them.
fn wait(x: &mut Exec<'_, '_>, n: u32, read: bool) -> Result<Flow, SimError> {
    let (cta, warp, mask) = (x.cta as u32, x.warp as u32, x.mask);
    let committed = x.wr().bulk.committed;
    let due =
        |lane: u32, group: u32| mask & (1 << lane) != 0 && group + n < committed[lane as usize];
    let mut i = 0;
    while i < x.cl.inflight.len() {
        let op = &x.cl.inflight[i];
        let pending = match &op.kind {
            AsyncKind::TmaStore(s) if op.cta == cta && op.warp == warp && due(s.lane, s.group) => {
                Some(s.data.is_none())
            }
            _ => None,
        };
        match pending {
            Some(unread) if read => {
                if unread {
                    finish_read_at(x, i)?;
                }
                i += 1;
            }
            Some(_) => complete_at(x, i)?,
            None => i += 1,
        }
    }
    let agent = x.cl.comps.bulk(cta, warp);
    let mut acquired = 0;
    x.w().bulk.issued.retain(|&(lane, group, clock)| {
        if due(lane, group) {
            acquired = acquired.max(clock);
            false
        } else {
            true
        }
    });
    x.w().vc.join_one(agent, acquired);
    Ok(Flow::Next)
}

/// The accessor of an async-proxy agent's access to shared memory: its epoch and clock, the
/// issuing op's site, and the proxy fences generic writes need.
pub(crate) fn proxy_access<R>(
    x: &mut Exec<'_, '_>,
    rank: u32,
    agent: u32,
    clock: u32,
    vc: &Vc,
    lane: u32,
    f: impl FnOnce(&mut SharedMem, &Accessor<'_>) -> R,
) -> R {
    let comps = x.cl.comps;
    let generic = move |c: u32| comps.is_generic(c);
    let cl = &mut *x.cl;
    let who = Accessor {
        epoch: epoch(agent, clock),
        vc,
        site: site(x.pc, lane),
        lanes: false,
        proxy: Some((&cl.fences, &generic)),
    };
    f(&mut cl.ctas[rank as usize].smem, &who)
}

/// Reads the 16-byte chunks at `chunks` (any order, repeats allowed) of block `rank`'s shared
/// memory as an async-proxy agent, a run of consecutive chunks at a time, with the checks: the
/// shared-memory operands of the tensor-core families.
#[allow(clippy::too_many_arguments)]
pub(crate) fn proxy_read_chunks(
    x: &mut Exec<'_, '_>,
    rank: u32,
    chunks: &mut Vec<u32>,
    agent: u32,
    clock: u32,
    vc: &Vc,
    lane: u32,
) {
    chunks.sort_unstable();
    chunks.dedup();
    let len = x.cl.ctas[rank as usize].smem.len() as u32;
    let mut runs: Vec<(u32, u32)> = Vec::new();
    for &c in chunks.iter() {
        match runs.last_mut() {
            Some((start, n)) if *start + *n == c => *n += 16,
            _ => runs.push((c, 16)),
        }
    }
    let outcomes = proxy_access(x, rank, agent, clock, vc, lane, |mem, who| {
        runs.iter()
            .map(|&(c, n)| (mem.read(c, n.min(len.saturating_sub(c)), who), n))
            .filter(|(o, _)| o.conflict.is_some() || o.uninit.is_some())
            .collect::<Vec<_>>()
    });
    for (o, n) in outcomes {
        report_shared(x, o, lane, rank, n, false);
    }
}

/// Writes `data` (a box, packed) to shared memory of block `rank` at `off` through `sw`, as an
/// async-proxy agent, with the checks.
#[allow(clippy::too_many_arguments)]
fn write_box(
    x: &mut Exec<'_, '_>,
    rank: u32,
    off: u32,
    data: &[u8],
    sw: Swizzle,
    agent: u32,
    clock: u32,
    vc: &Vc,
    lane: u32,
) {
    let len = data.len() as u32;
    let outcomes = proxy_access(x, rank, agent, clock, vc, lane, |m, who| {
        for (c, chunk) in data.chunks(16).enumerate() {
            let at = sw.apply(off + 16 * c as u32, 0) as usize;
            m.data[at..at + chunk.len()].copy_from_slice(chunk);
        }
        box_pieces(off, len, sw)
            .map(|(at, n)| m.write(at, n, who))
            .collect::<Vec<_>>()
    });
    for o in outcomes {
        report_shared(x, o, lane, rank, len, true);
    }
}

/// The pieces (offset, bytes) of shared memory that a box of `len` bytes at `off` through `sw`
/// covers, as its accesses are checked: the whole span where the swizzle keeps its 128-byte rows
/// intact (none, or whole rows), else each 16-byte chunk where the swizzle puts it.
fn box_pieces(off: u32, len: u32, sw: Swizzle) -> impl Iterator<Item = (u32, u32)> {
    let rows_intact = sw.bits == 0 || (off.is_multiple_of(128) && len.is_multiple_of(128));
    let chunks = if rows_intact { 0 } else { len.div_ceil(16) };
    let whole = rows_intact.then_some((off, len));
    whole
        .into_iter()
        .chain((0..chunks).map(move |c| (sw.apply(off + 16 * c, 0), (len - 16 * c).min(16))))
}

/// Reads a box of `len` bytes from shared memory of block `rank` at `off` through `sw`, as an
/// async-proxy agent, with the checks.
#[allow(clippy::too_many_arguments)]
fn read_box(
    x: &mut Exec<'_, '_>,
    rank: u32,
    off: u32,
    len: u32,
    sw: Swizzle,
    agent: u32,
    clock: u32,
    vc: &Vc,
    lane: u32,
) -> Vec<u8> {
    let mut data = vec![0u8; len as usize];
    let outcomes = proxy_access(x, rank, agent, clock, vc, lane, |m, who| {
        for (c, chunk) in data.chunks_mut(16).enumerate() {
            let at = sw.apply(off + 16 * c as u32, 0) as usize;
            chunk.copy_from_slice(&m.data[at..at + chunk.len()]);
        }
        box_pieces(off, len, sw)
            .map(|(at, n)| m.read(at, n, who))
            .collect::<Vec<_>>()
    });
    for o in outcomes {
        report_shared(x, o, lane, rank, len, false);
    }
    data
}

/// Performs a load: reads the box from global memory, writes it to every destination, and
/// performs complete-tx on their mbarriers.
pub(crate) fn complete_load(
    x: &mut Exec<'_, '_>,
    agent: u32,
    clock: u32,
    vc: &Vc,
    op: &TmaLoad,
) -> Result<(), SimError> {
    let env = x.env;
    let map = &env.tensor_maps[op.map].1;
    let e = map.elem as usize;
    let mut data = vec![0u8; map.box_bytes() as usize];
    let mut oob = false;
    let mut runs = Vec::new();
    map.for_each_run(&op.coords, |first, at, n| runs.push((first, at, n)));
    for (first, at, n) in runs {
        let (lo, len) = (first as usize * e, n as usize * e);
        match at {
            Some(o) => {
                let o = o as usize;
                data[lo..lo + len].copy_from_slice(&x.mem.data(map.buf)[o..o + len]);
                check_global_read(x, map.buf, o, len, op.lane);
                let agent = Some((agent, clock, vc));
                x.global_access((map.buf, o, len), (true, false), None, op.lane, agent);
            }
            None => oob = true,
        }
    }
    if oob && map.oob_fill == TmaOobFill::NanRequestZeroFma {
        return Err(x.unsupported("the NaN out-of-bounds fill"));
    }
    let bytes = data.len() as i64;
    for &(rank, off, bar) in &op.dsts {
        write_box(x, rank, off, &data, map.swizzle, agent, clock, vc, op.lane);
        match x.cl.mbarriers.get_mut(&bar) {
            Some(b) => {
                b.vc.join_one(agent, clock);
                super::mbarrier::change_tx(x, bar, op.lane, -bytes);
            }
            None => x.find(FindingKind::Mbarrier, op.lane, || {
                format!(
                    "the load's complete-tx finds no initialized mbarrier at shared {:#x} of block rank {}",
                    bar.1, bar.0
                )
            }),
        }
    }
    Ok(())
}

/// A store's first half: reads its box from shared memory (into `op.data`).
pub(crate) fn read_store(
    x: &mut Exec<'_, '_>,
    agent: u32,
    clock: u32,
    vc: &Vc,
    op: &mut TmaStore,
) -> Result<(), SimError> {
    let map = &x.env.tensor_maps[op.map].1;
    let (len, sw) = (map.box_bytes() as u32, map.swizzle);
    let rank = x.cl.ctas[x.cta].rank;
    op.data = Some(read_box(
        x, rank, op.src, len, sw, agent, clock, vc, op.lane,
    ));
    Ok(())
}

/// A store's second half: writes the elements of its box inside the tensor to global memory.
pub(crate) fn write_store(
    x: &mut Exec<'_, '_>,
    (agent, clock, vc): (u32, u32, &Vc),
    op: &TmaStore,
) -> Result<(), SimError> {
    let env = x.env;
    let map = &env.tensor_maps[op.map].1;
    let Some(data) = &op.data else {
        return Ok(());
    };
    let e = map.elem as usize;
    let mut runs = Vec::new();
    map.for_each_run(&op.coords, |first, at, n| runs.push((first, at, n)));
    for (first, at, n) in runs {
        let Some(o) = at else { continue };
        let (lo, len, o) = (first as usize * e, n as usize * e, o as usize);
        check_global_write(x, map.buf, o, len, op.lane);
        x.mem.data_mut(map.buf)[o..o + len].copy_from_slice(&data[lo..lo + len]);
        x.mem.mark_init(map.buf, o, len);
        x.mem.generation += 1;
        let agent = Some((agent, clock, vc));
        x.global_access((map.buf, o, len), (false, true), None, op.lane, agent);
    }
    Ok(())
}
