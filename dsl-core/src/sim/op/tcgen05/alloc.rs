//! Tensor memory allocation (PTX ISA 9.7.16.5, 9.7.16.7.1): `tcgen05.alloc`, `dealloc` and
//! `relinquish_alloc_permit`, by one warp or, with `.cta_group::2`, by one warp of each block of
//! a pair together (the first to arrive waits for the other).

use super::*;
use crate::sim::tmem::Allocation;

/// A `.cta_group::2` allocation op of one block of a pair, waiting for the other's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Waiter {
    rank: u32,
    warp: u32,
    op: PairOp,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum PairOp {
    Alloc { ncols: u32, dst: u32 },
    Dealloc { col: u32, ncols: u32 },
    Relinquish,
}

/// A pair of blocks' collective allocation ops.
#[derive(Debug, Clone, Default)]
pub(crate) struct PairSlot {
    waiting: Vec<Waiter>,
    /// Warps whose op the peer performed: (rank, warp).
    done: Vec<(u32, u32)>,
}

/// A column count operand, checked: a power of two in 32..=512.
pub(super) fn columns(x: &mut Exec<'_, '_>, ncols: &Operand) -> Result<Option<u32>, SimError> {
    let n = x.scalar(ncols, Type::U32)? as u32;
    if !(32..=512).contains(&n) || !n.is_power_of_two() {
        let lane = x.mask.trailing_zeros().min(31);
        x.find(FindingKind::TensorMemory, lane, || {
            format!("{n} columns: allocations are a power of two in 32..=512")
        });
        return Ok(None);
    }
    Ok(Some(n))
}

pub(super) fn alloc(
    x: &mut Exec<'_, '_>,
    group: CtaGroup,
    dst: &Address,
    ncols: &Operand,
) -> Result<Flow, SimError> {
    let Some(n) = columns(x, ncols)? else {
        return Ok(Flow::Next);
    };
    let lane = x.mask.trailing_zeros().min(31);
    let addrs = address(x, dst, StateSpace::Shared)?;
    let Some(Place::Shared { off, .. }) =
        place(x, StateSpace::Shared, addrs[lane as usize], 4, 4, lane)?
    else {
        return Ok(Flow::Next);
    };
    match group {
        CtaGroup::Two => pair(x, PairOp::Alloc { ncols: n, dst: off }),
        CtaGroup::One => {
            let rank = x.cl.ctas[x.cta].rank;
            if check_permit(x, &[rank]) {
                return Ok(Flow::Next);
            }
            let Some(col) = tmem(x).free_run(n) else {
                return Ok(Flow::Retry(Status::Async(AsyncWait::TmemColumns {
                    ncols: n,
                })));
            };
            allocate(x, rank, x.warp as u32, col, n, off);
            Ok(Flow::Next)
        }
    }
}

/// Reports an allocation in a block that relinquished its permit; true when one did.
pub(super) fn check_permit(x: &mut Exec<'_, '_>, ranks: &[u32]) -> bool {
    let gone = ranks.iter().copied().find(|&r| tmem_of(x, r).relinquished);
    if let Some(r) = gone {
        let lane = x.mask.trailing_zeros().min(31);
        x.find(FindingKind::TensorMemory, lane, || {
            format!("tcgen05.alloc after block rank {r} ran tcgen05.relinquish_alloc_permit")
        });
    }
    gone.is_some()
}

/// Allocates columns `col .. col + n` of block `rank`'s tensor memory for its warp `warp`, and
/// writes the address to its shared memory at `off` (a weak store by that warp). The
/// allocation is an operation of the warp's tensor-memory agent: the warp's next
/// `tcgen05.fence::before_thread_sync` publishes it.
pub(super) fn allocate(x: &mut Exec<'_, '_>, rank: u32, warp: u32, col: u32, n: u32, off: u32) {
    let agent = x.cl.comps.tmem(rank, warp);
    let epoch = epoch(agent, x.cl.agent_clock[agent as usize] + 1);
    let site = site(x.pc, x.mask.trailing_zeros().min(31));
    let t = tmem_of(x, rank);
    t.allocations.push(Allocation {
        col,
        n,
        epoch,
        site,
    });
    let saved = (x.cta, x.warp);
    x.cta = rank as usize;
    x.warp = warp as usize;
    let lane = x.wr().live.trailing_zeros().min(31);
    store(
        x,
        Place::Shared { rank, off },
        lane,
        &col.to_le_bytes(),
        None,
    );
    (x.cta, x.warp) = saved;
}

pub(super) fn dealloc(
    x: &mut Exec<'_, '_>,
    group: CtaGroup,
    taddr: &Operand,
    ncols: &Operand,
) -> Result<Flow, SimError> {
    let Some(n) = columns(x, ncols)? else {
        return Ok(Flow::Next);
    };
    let col = (x.scalar(taddr, Type::U32)? as u32) & 0xffff;
    match group {
        CtaGroup::Two => pair(x, PairOp::Dealloc { col, ncols: n }),
        CtaGroup::One => {
            let rank = x.cl.ctas[x.cta].rank;
            free(x, rank, x.warp as u32, col, n);
            Ok(Flow::Next)
        }
    }
}

/// Frees columns `col .. col + n` of block `rank` for its warp `warp`, with the checks: an
/// allocation of exactly those columns, every access to them ordered before the warp, no MMA
/// in flight writing them.
pub(super) fn free(x: &mut Exec<'_, '_>, rank: u32, warp: u32, col: u32, n: u32) {
    let lane = x.mask.trailing_zeros().min(31);
    if !tmem_of(x, rank)
        .allocations
        .iter()
        .any(|a| (a.col, a.n) == (col, n))
    {
        x.find(FindingKind::TensorMemory, lane, || {
            format!("tcgen05.dealloc of {n} columns at column {col} of block rank {rank}, which are not an allocation")
        });
        return;
    }
    // Like every tcgen05 operation, the deallocation is ordered after what the warp's clock
    // held at its last `tcgen05.fence::after_thread_sync` (9.7.16.6), not after the barrier
    // alone.
    let vc = x.cl.ctas[rank as usize].warps[warp as usize]
        .tc
        .after_sync
        .clone()
        .unwrap_or_else(|| Vc::new(x.cl.comps.len()));
    if let Some((comp, write)) = tmem_of(x, rank).unordered_access(col, n, &vc) {
        let (cta, w) = x.cl.comps.who(comp).site();
        let ctaid = x.cl.ctas[cta as usize].ctaid;
        let verb = if write { "written" } else { "read" };
        let who = if w == u32::MAX {
            format!("block {ctaid:?}")
        } else {
            format!("block {ctaid:?} warp {w}")
        };
        x.find(FindingKind::TensorMemory, lane, || {
            format!(
                "tcgen05.dealloc frees columns {col}..{} of block rank {rank} that {who} {verb} without that access being ordered before the deallocating warp (tcgen05.fence::before_thread_sync, a barrier (for a pair, the cluster's) and tcgen05.fence::after_thread_sync between them)",
                col + n
            )
        });
    }
    let busy = x.cl.inflight.iter().any(|o| match &o.kind {
        AsyncKind::Tcgen05(m) => match &m.op {
            TcOp::Mma(mma) => {
                let ranks = pair_ranks(o.cta, mma.group, mma.m);
                ranks.contains(&rank) && mma.d_col < col + n && col < mma.d_col + mma.n
            }
            TcOp::Commit(..) => false,
        },
        _ => false,
    });
    if busy {
        x.find(FindingKind::TensorMemory, lane, || {
            format!("tcgen05.dealloc frees columns {col}..{} of block rank {rank} while an MMA writing them is in flight", col + n)
        });
    }
    tmem_of(x, rank).free(col, n);
    x.cl.wake_async();
}

/// The blocks an MMA of `group` issued in block `rank` spans.
pub(super) fn pair_ranks(rank: u32, group: CtaGroup, m: u32) -> Vec<u32> {
    match group {
        CtaGroup::Two if m > 128 => vec![rank & !1, rank | 1],
        _ => vec![rank],
    }
}

/// A `.cta_group::2` allocation op: performed for both blocks of the pair by the second of
/// their warps to arrive; the first waits.
pub(super) fn pair(x: &mut Exec<'_, '_>, op: PairOp) -> Result<Flow, SimError> {
    let rank = x.cl.ctas[x.cta].rank;
    let warp = x.warp as u32;
    let lane = x.mask.trailing_zeros().min(31);
    if x.cl.ctas.len() < 2 || (rank | 1) as usize >= x.cl.ctas.len() {
        x.find(FindingKind::TensorMemory, lane, || {
            format!("a .cta_group::2 op in block rank {rank}, which has no peer in its cluster")
        });
        return Ok(Flow::Next);
    }
    let p = (rank / 2) as usize;
    if x.cl.pairs.len() <= p {
        x.cl.pairs.resize(p + 1, PairSlot::default());
    }
    let slot = &mut x.cl.pairs[p];
    if let Some(i) = slot.done.iter().position(|&d| d == (rank, warp)) {
        slot.done.remove(i);
        return Ok(Flow::Next);
    }
    let me = Waiter { rank, warp, op };
    if slot.waiting.contains(&me) {
        return Ok(Flow::Retry(Status::Async(AsyncWait::Peer)));
    }
    let Some(i) = slot.waiting.iter().position(|w| w.rank == rank ^ 1) else {
        slot.waiting.push(me);
        return Ok(Flow::Retry(Status::Async(AsyncWait::Peer)));
    };
    let peer = slot.waiting[i].clone();
    let same = std::mem::discriminant(&peer.op) == std::mem::discriminant(&op);
    if !same {
        x.find(FindingKind::TensorMemory, lane, || {
            format!(
                "the blocks of a pair run different .cta_group::2 ops together: {op:?} here, {:?} in block rank {}",
                peer.op, peer.rank
            )
        });
    }
    match (op, peer.op) {
        (PairOp::Alloc { ncols, dst }, PairOp::Alloc { dst: pdst, .. }) => {
            if check_permit(x, &[rank, peer.rank]) {
                // Released below as performed: the finding says why nothing was allocated.
            } else {
                let free_both = (0..=(COLUMNS - ncols) / 32).map(|u| u * 32).find(|&c| {
                    let units = Tmem::units(c, ncols);
                    units & tmem_of(x, rank).allocated() == 0
                        && units & tmem_of(x, peer.rank).allocated() == 0
                });
                let Some(col) = free_both else {
                    return Ok(Flow::Retry(Status::Async(AsyncWait::TmemColumns { ncols })));
                };
                allocate(x, rank, warp, col, ncols, dst);
                allocate(x, peer.rank, peer.warp, col, ncols, pdst);
            }
        }
        (PairOp::Dealloc { col, ncols }, PairOp::Dealloc { .. }) => {
            free(x, rank, warp, col, ncols);
            free(x, peer.rank, peer.warp, col, ncols);
        }
        (PairOp::Relinquish, _) => {
            tmem_of(x, rank).relinquished = true;
            tmem_of(x, peer.rank).relinquished = true;
        }
        _ => {}
    }
    let slot = &mut x.cl.pairs[p];
    slot.waiting.remove(i);
    slot.done.push((peer.rank, peer.warp));
    x.cl.wake_async();
    Ok(Flow::Next)
}
