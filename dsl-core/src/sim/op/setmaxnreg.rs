//! Register reallocation (PTX ISA: setmaxnreg). It changes no value the simulator models; the
//! checks: `.dec` may not raise and `.inc` may not lower the warp's current limit, and every warp
//! of a warpgroup runs the same sequence of `setmaxnreg` (checked when the block ends).
//!
//! The registers move within the block's own: a warp's `.inc` takes what the block's warps
//! have released by their `.dec`s and waits until they have (a wait no warp ends is a
//! deadlock). The block holds at entry what its threads may have each
//! ([`registers_at_entry`]): what ptxas allocates a kernel with a register cap, and at least
//! what it allocates any other, so that the simulator waits only where the hardware would.

use super::super::exec::{Exec, Flow};
use super::super::report::{Finding, FindingKind, SimError, Site};
use super::super::state::{AsyncWait, CtaState, Status};
use crate::ir::op::Setmaxnreg;
use crate::pipeline::registers_at_entry;

pub(crate) fn exec(x: &mut Exec<'_, '_>, op: &Setmaxnreg) -> Result<Flow, SimError> {
    let lane = x.mask.trailing_zeros().min(31);
    let pc = x.pc;
    let current = x.wr().maxnreg;
    if let Some(c) = current {
        let wrong = if op.inc { c > op.count } else { c < op.count };
        if wrong && x.env.opts.checks.barriers {
            let verb = if op.inc { "raise" } else { "lower" };
            x.find(FindingKind::WarpSync, lane, || {
                format!(
                    "setmaxnreg.{} {} does not {verb} the warp's current limit of {c} registers",
                    if op.inc { "inc" } else { "dec" },
                    op.count
                )
            });
        }
    }
    if op.inc {
        let at_entry = registers_at_entry(x.env.launch.block_threads());
        let cta = &x.cl.ctas[x.cta];
        let mine = cta.warps[x.warp].maxnreg.unwrap_or(at_entry) * 32;
        let others = registers_held(cta, at_entry) - mine;
        if others + op.count * 32 > block_registers(cta, at_entry) {
            return Ok(Flow::Retry(Status::Async(AsyncWait::Registers {
                count: op.count,
            })));
        }
    }
    let w = x.w();
    w.maxnreg = Some(op.count);
    w.setmaxnreg.push(pc);
    if !op.inc {
        // What it released may be what another warp's `.inc` waits for.
        x.cl.wake_async();
    }
    Ok(Flow::Next)
}

/// Registers the warps of `cta` hold at entry, `at_entry` per thread: all they can share.
pub(crate) fn block_registers(cta: &CtaState, at_entry: u32) -> u32 {
    at_entry * 32 * cta.warps.len() as u32
}

/// Registers the warps of `cta` hold now, each for its 32 threads (a warp that ran no
/// `setmaxnreg` holds `at_entry`).
pub(crate) fn registers_held(cta: &CtaState, at_entry: u32) -> u32 {
    cta.warps
        .iter()
        .map(|w| w.maxnreg.unwrap_or(at_entry) * 32)
        .sum()
}

/// The first warpgroup of a finished block whose warps ran different `setmaxnreg` sequences.
pub(crate) fn check_warpgroups(cta: &CtaState) -> Option<(usize, Finding, u32)> {
    for (g, group) in cta.warps.chunks(4).enumerate() {
        let first = &group[0].setmaxnreg;
        if let Some(i) = group.iter().position(|w| w.setmaxnreg != *first) {
            let pc = group[i]
                .setmaxnreg
                .first()
                .or(first.first())
                .copied()
                .unwrap_or(0);
            let site = Site {
                cta: cta.ctaid,
                warp: (g * 4 + i) as u32,
                lane: 0,
            };
            let f = Finding::at(
                FindingKind::WarpSync,
                "setmaxnreg",
                site,
                None,
                format!(
                    "warps of warpgroup {g} run different setmaxnreg instructions (warp {} runs {} of them, warp {} runs {})",
                    g * 4,
                    first.len(),
                    g * 4 + i,
                    group[i].setmaxnreg.len()
                ),
            );
            return Some((g, f, pc));
        }
    }
    None
}
