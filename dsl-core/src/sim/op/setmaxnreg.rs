//! Register reallocation (PTX ISA: setmaxnreg). It changes no value the simulator models; the
//! checks: `.dec` may not raise and `.inc` may not lower the warp's current limit, and every warp
//! of a warpgroup runs the same sequence of `setmaxnreg` (checked when the block ends).

use super::super::exec::{Exec, Flow};
use super::super::report::{Finding, FindingKind, SimError, Site};
use super::super::state::CtaState;
use crate::ir::op::Setmaxnreg;

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
    let w = x.w();
    w.maxnreg = Some(op.count);
    w.setmaxnreg.push(pc);
    Ok(Flow::Next)
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
