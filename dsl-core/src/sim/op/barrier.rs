//! Block and cluster barriers (PTX ISA: bar, barrier; barrier.cluster).
//!
//! A warp arrives as a whole (the machine brings all its live lanes to the barrier first: "the
//! instruction causes the executing thread to wait for all non-exited threads from its warp").
//! A thread count of `b` expects `b / 32` warps; no count expects every warp of the block that
//! has not exited (so warps that exit release it, as the ISA's `exit` says). When the expected
//! warps have arrived the barrier completes: the clocks of all arrivals are joined into every
//! warp that waits at it (`bar.sync` and `barrier.sync`; `bar.arrive` does not wait), which is
//! the happens-before edge the PTX memory model's barrier gives.
//!
//! Checks ([`FindingKind::BarrierCount`]): arrivals of one phase that give different thread
//! counts, a count above the block's threads or not a positive multiple of 32, and a warp
//! arriving twice in one phase. A barrier that waits for warps that can no longer arrive is
//! reported when the run deadlocks. [`FindingKind::BarrierDivergence`]: aligned waits
//! (`bar.sync`) of one phase at two instructions. The ISA defines `.aligned` for threads that
//! execute the same barrier instruction, yet pairs `bar.arrive` in producers with `bar.sync` in
//! consumers in its own example; compute-sanitizer's synccheck, on the H100, flagged a phase
//! whose waits came from two `bar.sync`s (two consumer warpgroups' copies of one wait, beside
//! the epilogue warps' `bar.arrive`) and passed arrivals beside one `bar.sync`
//! (results/blas.md, 2026-12-06). So the check takes the waits alone: arrivals, and the
//! unaligned `barrier.sync`, may come from anywhere.

use super::super::clock::Vc;
use super::super::exec::{Exec, Flow};
use super::super::report::{FindingKind, SimError};
use super::super::state::{ClusterState, CtaState, NamedBarrier, Status};
use crate::ir::op::{Barrier, ClusterArriveSem};
use crate::ir::Type;

/// The 16 named barriers of a block, for `components` clocks.
pub(crate) fn barriers(components: usize) -> Vec<NamedBarrier> {
    (0..16)
        .map(|_| NamedBarrier {
            arrived: 0,
            who: 0,
            waits: 0,
            expected: None,
            vc: Vc::new(components),
            first_pc: 0,
            aligned_sync_pc: None,
        })
        .collect()
}

pub(crate) fn exec(x: &mut Exec<'_, '_>, op: &Barrier) -> Result<Flow, SimError> {
    match op {
        Barrier::Sync { id, count } | Barrier::SyncUnaligned { id, count } => {
            let id = x.scalar(id, Type::U32)?;
            let count = count.map(|c| x.scalar(&c, Type::U32)).transpose()?;
            let how = match op {
                Barrier::Sync { .. } => Arrival::AlignedWait,
                _ => Arrival::Wait,
            };
            arrive(x, id, count, how)
        }
        Barrier::Arrive { id, count } | Barrier::ArriveUnaligned { id, count } => {
            let id = x.scalar(id, Type::U32)?;
            let count = x.scalar(count, Type::U32)?;
            arrive(x, id, Some(count), Arrival::Arrive)
        }
        Barrier::ClusterArrive { sem, .. } => cluster_arrive(x, *sem),
        Barrier::ClusterWait { .. } => cluster_wait(x),
    }
}

/// How a warp comes to a named barrier.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Arrival {
    /// `bar.arrive`, `barrier.arrive`: counted, not waiting.
    Arrive,
    /// `barrier.sync` (unaligned): counted and waiting.
    Wait,
    /// `bar.sync`, `barrier.sync.aligned`: counted and waiting, at the phase's one instruction.
    AlignedWait,
}

fn arrive(
    x: &mut Exec<'_, '_>,
    id: u64,
    count: Option<u64>,
    how: Arrival,
) -> Result<Flow, SimError> {
    let wait = how != Arrival::Arrive;
    if id >= 16 {
        return Err(SimError::BadOperand {
            op: x.op,
            location: x.loc(),
            detail: format!("barrier id {id} is not in 0..16"),
        });
    }
    let checks = x.env.opts.checks.barriers;
    let lane = x.mask.trailing_zeros().min(31);
    let threads = x.env.launch.block_threads();
    let expected = match count {
        Some(c) if c == 0 || c % 32 != 0 => {
            if checks {
                x.find(FindingKind::BarrierCount, lane, || {
                    format!("barrier {id}: thread count {c} is not a positive multiple of 32")
                });
            }
            Some(c.div_ceil(32).max(1) as u32)
        }
        Some(c) => {
            if c > u64::from(threads.next_multiple_of(32)) && checks {
                x.find(FindingKind::BarrierCount, lane, || {
                    format!(
                        "barrier {id} expects {c} threads, more than the block's {threads}: it can never complete"
                    )
                });
            }
            Some((c / 32) as u32)
        }
        None => None,
    };
    let (warp, pc) = (x.warp, x.pc);
    let bit = 1u64 << warp;
    let b = &x.cl.ctas[x.cta].barriers[id as usize];
    let first = b.arrived == 0;
    let mismatch = !first && b.expected != expected;
    let twice = b.who & bit != 0;
    let prior = b.expected;
    let other_sync = if first { None } else { b.aligned_sync_pc };
    if checks && mismatch {
        let show = |e: Option<u32>| {
            e.map_or("every thread".to_string(), |w| {
                format!("{} threads", w * 32)
            })
        };
        x.find(FindingKind::BarrierCount, lane, || {
            format!(
                "barrier {id}: this arrival expects {}, an earlier arrival in the same phase expects {}",
                show(expected),
                show(prior)
            )
        });
    }
    if checks && twice {
        x.find(FindingKind::BarrierCount, lane, || {
            format!("barrier {id}: warp {warp} arrives twice before the barrier completes")
        });
    }
    if let (true, Arrival::AlignedWait, Some(earlier)) = (checks, how, other_sync) {
        if earlier != pc {
            let (at, here) = (
                x.env.prog.locs.get(earlier as usize).copied().flatten(),
                x.loc(),
            );
            x.find(FindingKind::BarrierDivergence, lane, || {
                let there = match at {
                    // One line emitted twice: each caller's copy of a function, say.
                    Some(l) if at == here => format!("{l}, the same line emitted twice"),
                    Some(l) => l.to_string(),
                    None => format!("instruction {earlier}"),
                };
                format!(
                    "barrier {id}: this bar.sync and an earlier one of the same phase (at {there}) \
                     are two instructions, and the aligned form is defined only where every \
                     waiting thread executes the same one: use barrier.sync (unaligned) where \
                     warps reach it through different code"
                )
            });
        }
    }
    let cta = &mut x.cl.ctas[x.cta];
    let (warps, b) = (&mut cta.warps, &mut cta.barriers[id as usize]);
    if first {
        b.expected = expected;
        b.first_pc = pc;
        b.aligned_sync_pc = None;
        b.who = 0;
        b.waits = 0;
        b.vc.0.fill(0);
    }
    if how == Arrival::AlignedWait && b.aligned_sync_pc.is_none() {
        b.aligned_sync_pc = Some(pc);
    }
    b.who |= bit;
    if wait {
        b.waits |= bit;
    }
    b.arrived += 1;
    let w = &mut warps[warp];
    b.vc.join(&w.vc);
    w.vc.tick(w.comp)?;
    if try_complete(cta, id as usize) {
        return Ok(Flow::Next);
    }
    Ok(if wait {
        Flow::Park(Status::Barrier(id as u8))
    } else {
        Flow::Next
    })
}

/// Completes barrier `id` if every expected warp has arrived: the waiting warps take the
/// arrivals' clock and wake. True when it completed.
pub(crate) fn try_complete(cta: &mut CtaState, id: usize) -> bool {
    let live = cta.live_warps();
    let b = &cta.barriers[id];
    let target = b.expected.unwrap_or(live);
    if b.arrived == 0 || b.arrived < target {
        return false;
    }
    let (warps, b) = (&mut cta.warps, &mut cta.barriers[id]);
    // Warps that wait (also the one completing the barrier, which does not park) acquire the
    // arrivals' clock; warps that only arrived do not.
    for (i, w) in warps.iter_mut().enumerate() {
        if b.waits & (1 << i) == 0 {
            continue;
        }
        for p in &mut w.parts {
            if p.status == Status::Barrier(id as u8) {
                p.status = Status::Ready;
            }
        }
        w.vc.join(&b.vc);
    }
    b.arrived = 0;
    b.who = 0;
    b.waits = 0;
    b.expected = None;
    true
}

/// After a warp exits: barriers for every thread of the block that only exited warps held up
/// complete.
pub(crate) fn on_warp_exit(cta: &mut CtaState) {
    for id in 0..cta.barriers.len() {
        if cta.barriers[id].expected.is_none() {
            try_complete(cta, id);
        }
    }
}

fn cluster_arrive(x: &mut Exec<'_, '_>, sem: ClusterArriveSem) -> Result<Flow, SimError> {
    let lane = x.mask.trailing_zeros().min(31);
    let (cta, warp) = (x.cta, x.warp);
    let phase = x.cl.barrier.phase;
    if x.wr().cluster_arrived.is_some() && x.env.opts.checks.barriers {
        x.find(FindingKind::BarrierCount, lane, || {
            "barrier.cluster.arrive again before barrier.cluster.wait".to_string()
        });
    }
    let cl = &mut *x.cl;
    let w = &mut cl.ctas[cta].warps[warp];
    w.cluster_arrived = Some(phase);
    if sem != ClusterArriveSem::Relaxed {
        cl.barrier.vc.join(&w.vc);
        w.vc.tick(w.comp)?;
    }
    cl.barrier.arrived += 1;
    try_complete_cluster(cl);
    Ok(Flow::Next)
}

fn cluster_wait(x: &mut Exec<'_, '_>) -> Result<Flow, SimError> {
    let lane = x.mask.trailing_zeros().min(31);
    let Some(phase) = x.wr().cluster_arrived else {
        if x.env.opts.checks.barriers {
            x.find(FindingKind::BarrierCount, lane, || {
                "barrier.cluster.wait without a barrier.cluster.arrive before it".to_string()
            });
        }
        return Ok(Flow::Next);
    };
    if x.cl.barrier.phase > phase {
        let released = x.cl.barrier.released.clone();
        let w = x.w();
        w.vc.join(&released);
        w.cluster_arrived = None;
        return Ok(Flow::Next);
    }
    Ok(Flow::Park(Status::ClusterBarrier(phase)))
}

/// Completes the cluster barrier's phase once every live warp of the cluster arrived, waking
/// the waiters with the arrivals' clock.
pub(crate) fn try_complete_cluster(cl: &mut ClusterState) {
    let live = cl.live_warps();
    if cl.barrier.arrived == 0 || cl.barrier.arrived < live {
        return;
    }
    let done = cl.barrier.phase;
    cl.barrier.released = cl.barrier.vc.clone();
    cl.barrier.vc.0.fill(0);
    cl.barrier.arrived = 0;
    cl.barrier.phase += 1;
    for cta in &mut cl.ctas {
        for w in &mut cta.warps {
            for p in &mut w.parts {
                if p.status == Status::ClusterBarrier(done) {
                    p.status = Status::Ready;
                    w.vc.join(&cl.barrier.released);
                    w.cluster_arrived = None;
                }
            }
        }
    }
}
