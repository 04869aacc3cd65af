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
use super::op::cp_async::{self, CpBatch};
use super::program::Program;
use super::report::SimError;
use crate::ir::OpInfo;

/// What an operation in flight does.
#[derive(Debug, Clone)]
pub(crate) enum AsyncKind {
    /// One `cp.async` instruction's copies, one per lane.
    CpAsync(Box<CpBatch>),
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
    /// A sentence for deadlock reports.
    pub fn describe(&self, prog: &Program) -> String {
        let at = prog.locs[self.pc as usize]
            .map(|l| format!(" at {l}"))
            .unwrap_or_default();
        let op = match &prog.code[self.pc as usize] {
            super::program::Code::Op(i) => prog.instrs[*i as usize].op.mnemonic(),
            _ => "?",
        };
        match &self.kind {
            AsyncKind::CpAsync(b) => format!(
                "`{op}`{at} of warp {} ({} lanes, {} bytes each) in flight",
                self.warp,
                b.lanes.count_ones(),
                b.size
            ),
        }
    }
}

/// Performs operation `op` (removed from the in-flight list by the caller); `x` is set up as
/// its issuing warp, at its issuing position.
pub(crate) fn complete(x: &mut Exec<'_, '_>, op: InFlight) -> Result<(), SimError> {
    match op.kind {
        AsyncKind::CpAsync(b) => cp_async::complete(x, op.agent, op.clock, &op.vc, &b),
    }
}

/// Completes in-flight operation `i` of the cluster, with `x` moved to its issuer and back.
pub(crate) fn complete_at(x: &mut Exec<'_, '_>, i: usize) -> Result<(), SimError> {
    let op = x.cl.inflight.remove(i);
    let saved = (x.cta, x.warp, x.pc, x.mask, x.op);
    x.cta = op.cta as usize;
    x.warp = op.warp as usize;
    x.pc = op.pc;
    x.op = match &x.env.prog.code[op.pc as usize] {
        super::program::Code::Op(i) => x.env.prog.instrs[*i as usize].op.mnemonic(),
        _ => x.op,
    };
    let r = complete(x, op);
    (x.cta, x.warp, x.pc, x.mask, x.op) = saved;
    r
}
