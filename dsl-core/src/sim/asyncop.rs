//! Asynchronous operations in flight: issued by a warp, performed later by an *agent* (a
//! vector-clock component of its own), completed within their legal window, when the scheduler
//! chooses (late by default: when a completion mechanism needs them).
//!
//! An operation carries the clock its agent acts with: the issuing warp's vector clock at issue,
//! with the agent's own component at the operation's epoch. Its memory effects are checked with
//! that clock when it completes (so an access by another warp that is not ordered before the
//! issue, or after the completion, is a race with the agent), and the completion mechanism
//! (`cp.async.wait_group`, and for the later families an mbarrier's phase or a wait_group of
//! their own) joins the agent's epoch into the waiting warp.
//!
//! A family adds its operation as an [`AsyncKind`] variant, and one arm in [`complete`] and
//! [`InFlight::describe`]; it claims an agent component from
//! [`Components`](super::clock::Components) (per warp for `cp.async`, per block for the async
//! proxy).

use super::clock::Vc;
use super::exec::Exec;
use super::op::bulk::{self, TmaLoad, TmaStore};
use super::op::cp_async::{self, CpBatch};
use super::op::tcgen05::{self, MmaOp};
use super::op::wgmma::{self, WgmmaOp};
use super::program::Program;
use super::report::SimError;

/// What an operation in flight does.
#[derive(Debug, Clone)]
pub(crate) enum AsyncKind {
    /// One `cp.async` instruction's copies, one per lane.
    CpAsync(Box<CpBatch>),
    /// One lane's TMA load.
    TmaLoad(Box<TmaLoad>),
    /// One lane's TMA store (before its shared-memory read, or after it).
    TmaStore(Box<TmaStore>),
    /// One warp's share of a `wgmma.mma_async`.
    Wgmma(Box<WgmmaOp>),
    /// One lane's `tcgen05.mma`, or its `tcgen05.commit`.
    Tcgen05(Box<MmaOp>),
}

/// Operations that complete in issue order among themselves: one warp's wgmma operations, one
/// warp's bulk stores (their groups complete in commit order), one thread's tcgen05 operations
/// (an MMA before the commit that tracks it; MMAs on one accumulator in order).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stream {
    Wgmma,
    Bulk,
    Tcgen05(u32),
}

/// An asynchronous operation in flight.
#[derive(Debug, Clone)]
pub(crate) struct InFlight {
    /// The issuing block's rank in its cluster and the issuing warp.
    pub cta: u32,
    pub warp: u32,
    /// The agent's component and its clock for this operation.
    pub agent: u32,
    pub clock: u32,
    /// The agent's vector clock.
    pub vc: Vc,
    /// The issuing instruction's position.
    pub pc: u32,
    pub kind: AsyncKind,
}

impl InFlight {
    fn stream(&self) -> Option<(u32, u32, Stream)> {
        let s = match &self.kind {
            AsyncKind::CpAsync(_) | AsyncKind::TmaLoad(_) => return None,
            AsyncKind::TmaStore(_) => Stream::Bulk,
            AsyncKind::Wgmma(_) => Stream::Wgmma,
            AsyncKind::Tcgen05(m) => Stream::Tcgen05(m.lane),
        };
        Some((self.cta, self.warp, s))
    }

    /// A sentence for deadlock reports.
    pub fn describe(&self, prog: &Program) -> String {
        let at = prog
            .location(self.pc)
            .map(|l| format!(" at {l}"))
            .unwrap_or_default();
        let op = prog.mnemonic(self.pc).unwrap_or("?");
        let what = match &self.kind {
            AsyncKind::CpAsync(b) => format!(
                "{} lanes, {} bytes each",
                b.lanes.count_ones(),
                b.size
            ),
            AsyncKind::TmaLoad(l) => format!(
                "lane {}, a load into {} block(s) completing on the mbarrier at shared {:#x} of block rank {}",
                l.lane,
                l.dsts.len(),
                l.dsts[0].2 .1,
                l.dsts[0].2 .0
            ),
            AsyncKind::TmaStore(s) => format!(
                "lane {}, a store of bulk group {}{}",
                s.lane,
                s.group,
                if s.data.is_some() { ", read" } else { "" }
            ),
            AsyncKind::Wgmma(w) => format!("wgmma group {}", w.group),
            AsyncKind::Tcgen05(m) => m.describe(),
        };
        format!("`{op}`{at} of warp {} ({what}) in flight", self.warp)
    }
}

/// Performs operation `op` (removed from the in-flight list by the caller); `x` is set up as
/// its issuing warp, at its issuing position.
fn complete(x: &mut Exec<'_, '_>, op: InFlight) -> Result<(), SimError> {
    match op.kind {
        AsyncKind::CpAsync(b) => cp_async::complete(x, op.agent, op.clock, &op.vc, &b),
        AsyncKind::TmaLoad(l) => bulk::complete_load(x, op.agent, op.clock, &op.vc, &l),
        AsyncKind::TmaStore(mut s) => {
            if s.data.is_none() {
                bulk::read_store(x, op.agent, op.clock, &op.vc, &mut s)?;
            }
            bulk::write_store(x, (op.agent, op.clock, &op.vc), &s)
        }
        AsyncKind::Wgmma(w) => wgmma::complete(x, op.agent, op.clock, &op.vc, &w),
        AsyncKind::Tcgen05(m) => tcgen05::complete(x, op.agent, op.clock, &op.vc, &m),
    }
}

/// Runs `f` with `x` moved to the issuer of in-flight operation `op`, and back.
fn as_issuer<R>(
    x: &mut Exec<'_, '_>,
    cta: u32,
    warp: u32,
    pc: u32,
    f: impl FnOnce(&mut Exec<'_, '_>) -> R,
) -> R {
    let saved = (x.cta, x.warp, x.pc, x.mask, x.op);
    x.cta = cta as usize;
    x.warp = warp as usize;
    x.pc = pc;
    x.op = x.env.prog.mnemonic(pc).unwrap_or(x.op);
    let r = f(x);
    (x.cta, x.warp, x.pc, x.mask, x.op) = saved;
    r
}

/// The first in-flight operation before `i` of the same stream as `i`, if any.
fn earlier(x: &Exec<'_, '_>, i: usize) -> Option<usize> {
    let key = x.cl.inflight[i].stream()?;
    x.cl.inflight[..i]
        .iter()
        .position(|o| o.stream() == Some(key))
}

/// Completes in-flight operation `i` of the cluster (and first the earlier operations of its
/// stream), with `x` moved to each issuer and back.
pub(crate) fn complete_at(x: &mut Exec<'_, '_>, mut i: usize) -> Result<(), SimError> {
    while let Some(j) = earlier(x, i) {
        complete_one(x, j)?;
        i -= 1;
    }
    complete_one(x, i)
}

fn complete_one(x: &mut Exec<'_, '_>, i: usize) -> Result<(), SimError> {
    let op = x.cl.inflight.remove(i);
    let (cta, warp, pc) = (op.cta, op.warp, op.pc);
    as_issuer(x, cta, warp, pc, |x| complete(x, op))
}

/// Performs the shared-memory read of the bulk store in flight at `i` (and first those of the
/// earlier stores of its warp): the store stays in flight, its data read.
pub(crate) fn finish_read_at(x: &mut Exec<'_, '_>, i: usize) -> Result<(), SimError> {
    for j in 0..=i {
        let op = &x.cl.inflight[j];
        let unread = matches!(&op.kind, AsyncKind::TmaStore(s) if s.data.is_none());
        if !unread || op.stream() != x.cl.inflight[i].stream() {
            continue;
        }
        let mut op = x.cl.inflight[j].clone();
        let (cta, warp, pc) = (op.cta, op.warp, op.pc);
        as_issuer(x, cta, warp, pc, |x| {
            if let AsyncKind::TmaStore(s) = &mut op.kind {
                bulk::read_store(x, op.agent, op.clock, &op.vc, s)?;
            }
            Ok::<(), SimError>(())
        })?;
        x.cl.inflight[j] = op;
    }
    Ok(())
}
