//! Asynchronous copies global -> shared and their groups (PTX ISA: cp.async,
//! cp.async.commit_group, cp.async.wait_group, cp.async.wait_all).
//!
//! `cp.async` is a weak memory operation of the generic proxy performed by the warp's copy
//! agent: the source is read (and checked: bounds, initialization) when it is issued, the
//! destination written when the copy completes, with the agent's clock. Copies of a thread
//! belong to the group its next `commit_group` closes; `wait_group n` completes (if the scheduler
//! has not already) every copy of the thread's groups but the `n` most recent and joins their
//! epochs into the warp: "no other synchronization mechanism guarantees the completion", so a
//! read of the destination by another warp needs a barrier after the wait, else it races the
//! agent's write. A `src-size` below the copy size zero-fills the rest; above it is undefined
//! (reported as out of bounds and clamped).

use super::super::asyncop::{complete_at, AsyncKind, InFlight};
use super::super::clock::{epoch, Vc};
use super::super::exec::{Exec, Flow};
use super::super::regs::lanes;
use super::super::report::{FindingKind, SimError};
use super::super::shadow::{site, Accessor};
use super::super::state::CpDone;
use super::memory::{address, load, place, report_shared, Place};
use crate::ir::op::CpAsync;
use crate::ir::{StateSpace, Type};

/// The copies of one `cp.async` instruction.
#[derive(Debug, Clone)]
pub(crate) struct CpBatch {
    pub lanes: u32,
    /// The group each lane's copy belongs to.
    pub groups: [u32; 32],
    /// Each lane's shared destination offset (in its own block).
    pub dst: [u32; 32],
    /// Bytes written per lane.
    pub size: u32,
    /// Each lane's bytes, read at issue and zero-filled past `src-size`.
    pub data: [[u8; 16]; 32],
}

pub(crate) fn exec(x: &mut Exec<'_, '_>, op: &CpAsync) -> Result<Flow, SimError> {
    match op {
        CpAsync::Copy {
            bytes,
            dst,
            src,
            src_size,
            ..
        } => issue(x, *bytes, dst, src, src_size.as_ref()),
        CpAsync::CommitGroup => {
            for l in lanes(x.mask) {
                x.w().cp.committed[l] += 1;
            }
            Ok(Flow::Next)
        }
        CpAsync::WaitGroup(n) => wait(x, *n),
        CpAsync::WaitAll => {
            for l in lanes(x.mask) {
                x.w().cp.committed[l] += 1;
            }
            wait(x, 0)
        }
    }
}

fn issue(
    x: &mut Exec<'_, '_>,
    bytes: u32,
    dst: &crate::ir::Address,
    src: &crate::ir::Address,
    src_size: Option<&crate::ir::Operand>,
) -> Result<Flow, SimError> {
    let dsts = address(x, dst, StateSpace::Shared)?;
    let srcs = address(x, src, StateSpace::Global)?;
    let reads = match src_size {
        Some(s) => x.read(s, Type::U32)?,
        None => [u64::from(bytes); 32],
    };
    let mut b = Box::new(CpBatch {
        lanes: 0,
        groups: [0; 32],
        dst: [0; 32],
        size: bytes,
        data: [[0; 16]; 32],
    });
    for l in lanes(x.mask) {
        let lane = l as u32;
        let mut read = reads[l];
        if read > u64::from(bytes) {
            x.find(FindingKind::OutOfBounds, lane, || {
                format!("src-size {read} is larger than the copy's {bytes} bytes")
            });
            read = u64::from(bytes);
        }
        let Some(Place::Shared { off, .. }) =
            place(x, StateSpace::Shared, dsts[l], bytes, bytes, lane)?
        else {
            continue;
        };
        if read > 0 {
            if let Some(p) = place(x, StateSpace::Global, srcs[l], read as u32, bytes, lane)? {
                load(x, p, lane, &mut b.data[l][..read as usize], None);
            }
        }
        b.lanes |= 1 << l;
        b.dst[l] = off;
        b.groups[l] = x.wr().cp.committed[l];
    }
    if b.lanes == 0 {
        return Ok(Flow::Next);
    }
    x.stats.async_ops += u64::from(b.lanes.count_ones());
    let (cta, warp, pc) = (x.cta as u32, x.warp as u32, x.pc);
    let agent = x.cl.comps.cp_async(cta, warp);
    let w = x.w();
    w.cp.clock += 1;
    let clock = w.cp.clock;
    // The agent acts with the warp's clock at issue, its own component left at what the warp
    // has seen complete (a `wait_group` joins it): so a copy is ordered after the warp's
    // earlier copies only where the warp waited for them, and two copies to the same bytes with
    // no wait between are a race (their writes land in either order).
    let vc = w.vc.clone();
    x.cl.inflight.push(InFlight {
        cta,
        warp,
        agent,
        clock,
        vc,
        pc,
        kind: AsyncKind::CpAsync(b),
    });
    Ok(Flow::Next)
}

/// Whether lanes `mask` waiting with `n` groups allowed pending need a copy of `groups` in
/// `lanes`.
fn needed(committed: &[u32; 32], mask: u32, n: u32, batch_lanes: u32, groups: &[u32; 32]) -> bool {
    lanes(mask & batch_lanes).any(|l| groups[l] + n < committed[l])
}

fn wait(x: &mut Exec<'_, '_>, n: u32) -> Result<Flow, SimError> {
    let (cta, warp, mask) = (x.cta as u32, x.warp as u32, x.mask);
    let committed = x.wr().cp.committed;
    let mut i = 0;
    while i < x.cl.inflight.len() {
        let op = &x.cl.inflight[i];
        let mine = op.cta == cta && op.warp == warp;
        let need = match &op.kind {
            AsyncKind::CpAsync(b) => mine && needed(&committed, mask, n, b.lanes, &b.groups),
            _ => false,
        };
        if need {
            complete_at(x, i)?;
        } else {
            i += 1;
        }
    }
    let agent = x.cl.comps.cp_async(cta, warp);
    let w = x.w();
    let mut acquired = 0;
    w.cp.done.retain(|d| {
        if needed(&committed, mask, n, d.lanes, &d.groups) {
            acquired = acquired.max(d.clock);
            false
        } else {
            true
        }
    });
    w.vc.join_one(agent, acquired);
    Ok(Flow::Next)
}

/// Writes a batch's bytes into shared memory with the agent's clock.
pub(crate) fn complete(
    x: &mut Exec<'_, '_>,
    agent: u32,
    clock: u32,
    vc: &Vc,
    b: &CpBatch,
) -> Result<(), SimError> {
    let rank = x.cl.ctas[x.cta].rank;
    for l in lanes(b.lanes) {
        let (off, pc) = (b.dst[l], x.pc);
        let smem = &mut x.cl.ctas[x.cta].smem;
        let len = b.size as usize;
        smem.data[off as usize..off as usize + len].copy_from_slice(&b.data[l][..len]);
        let o = smem.write(
            off,
            b.size,
            &Accessor {
                epoch: epoch(agent, clock),
                vc,
                site: site(pc, l as u32),
                lanes: false,
                proxy: None,
            },
        );
        report_shared(x, o, l as u32, rank, b.size, true);
    }
    let done = CpDone {
        lanes: b.lanes,
        groups: b.groups,
        clock,
    };
    x.w().cp.done.push(done);
    Ok(())
}
