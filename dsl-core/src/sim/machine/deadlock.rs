//! Deadlock reports: every waiting part and what it waits for, the lanes waiting at joins, the
//! asynchronous operations in flight, the clusters not yet resident; and, before them, named
//! barriers whose explicit count the block's warps can no longer reach.

use super::{op_name, Machine};
use crate::sim::program::Code;
use crate::sim::report::{Finding, FindingKind, Site};
use crate::sim::state::{AsyncWait, CtaState, Status};

impl Machine<'_, '_> {
    /// Reports a deadlock: every waiting part, what it waits for, and the operations in flight;
    /// with `stalled`, the parts still running spin without changing memory.
    pub(super) fn deadlock(&mut self, stalled: bool) {
        let env = self.env;
        let prog = env.prog;
        let threads = env.launch.block_threads();
        let mut lines = Vec::new();
        let mut first: Option<(Site, u32)> = None;
        let mut counts = Vec::new();
        for cl in self.slots.iter().flatten() {
            for cta in &cl.ctas {
                for (wi, w) in cta.warps.iter().enumerate() {
                    for part in &w.parts {
                        let at = prog.locs[part.pc as usize]
                            .map(|l| format!(" at {l}"))
                            .unwrap_or_default();
                        let op = op_name(prog, part.pc);
                        let site = Site {
                            cta: cta.ctaid,
                            warp: wi as u32,
                            lane: part.mask.trailing_zeros(),
                        };
                        let why = match part.status {
                            Status::Barrier(id) => {
                                let b = &cta.barriers[id as usize];
                                let expected = b.expected.map_or(
                                    format!("{} (every live warp)", cta.live_warps()),
                                    |e| e.to_string(),
                                );
                                format!("barrier {id}: {} of {expected} warps arrived", b.arrived)
                            }
                            Status::Rendezvous(need) => format!(
                                "lanes {:#010x} of its warp to reach the same instruction",
                                need & !part.mask
                            ),
                            Status::Poll { .. } => {
                                "a write to the memory it polls (nothing running can write it)"
                                    .to_string()
                            }
                            Status::ClusterBarrier(_) => format!(
                                "the cluster barrier: {} of {} warps arrived",
                                cl.barrier.arrived,
                                cl.live_warps()
                            ),
                            Status::Mbarrier { rank, off, .. } => match cl.mbarriers.get(&(rank, off)) {
                                Some(b) => format!(
                                    "the mbarrier at shared {off:#x} of block rank {rank} to complete its phase: {}",
                                    b.describe()
                                ),
                                None => format!("the mbarrier at shared {off:#x} of block rank {rank}, which was invalidated"),
                            },
                            Status::Async(AsyncWait::Warpgroup { wg }) => format!(
                                "the other warps of warpgroup {wg} to issue the wgmma.mma_async operations of the groups it waits for"
                            ),
                            Status::Async(AsyncWait::TmemColumns { ncols }) => format!(
                                "{ncols} free tensor-memory columns (the block's allocations hold {:?})",
                                cta.tmem.as_ref().map(|t| t.allocations.iter().map(|a| (a.col, a.n)).collect::<Vec<_>>()).unwrap_or_default()
                            ),
                            Status::Async(AsyncWait::Registers { count }) => {
                                use crate::sim::op::setmaxnreg::{block_registers, registers_held};
                                let at_entry = crate::pipeline::registers_at_entry(threads);
                                format!(
                                    "registers for setmaxnreg.inc {count}: the block's warps hold {} of the {} it has (each warp {at_entry} per thread at entry), and none of those running releases more",
                                    registers_held(cta, at_entry),
                                    block_registers(cta, at_entry)
                                )
                            }
                            Status::Async(AsyncWait::Peer) => {
                                "the warp of the peer block of its pair to run the same .cta_group::2 op".to_string()
                            }
                            Status::Ready => {
                                "nothing: it runs, but no memory has changed and no warp has ended for a long time (it spins on values nothing will change)".to_string()
                            }
                        };
                        // After a parked op the part's pc is past it: name the op it waits at.
                        let (op, at) = match part.status {
                            Status::Barrier(_)
                            | Status::Poll { .. }
                            | Status::ClusterBarrier(_)
                                if part.pc > 0 =>
                            {
                                let pc = part.pc - 1;
                                let at = prog.locs[pc as usize]
                                    .map(|l| format!(" at {l}"))
                                    .unwrap_or_default();
                                (op_name(prog, pc), at)
                            }
                            _ => (op, at),
                        };
                        if first.is_none() {
                            let pc = match part.status {
                                Status::Rendezvous(_)
                                | Status::Ready
                                | Status::Mbarrier { .. }
                                | Status::Async(_) => part.pc,
                                _ => part.pc.saturating_sub(1),
                            };
                            first = Some((site, pc));
                        }
                        lines.push(format!(
                            "block ({},{},{}) warp {wi} lanes {:#010x} wait at `{op}`{at} for {why}",
                            cta.ctaid[0], cta.ctaid[1], cta.ctaid[2], part.mask
                        ));
                    }
                    for (ri, j) in w.joins.iter().enumerate() {
                        if j.arrived == 0 || w.free_joins.contains(&(ri as u32)) {
                            continue;
                        }
                        let pending = w
                            .parts
                            .iter()
                            .any(|p| p.stack.iter().any(|f| f.rec == ri as u32));
                        if !pending {
                            continue;
                        }
                        let what = match prog.code[j.from as usize] {
                            Code::Branch { .. } => "the `if`",
                            _ => "the loop",
                        };
                        let at = prog.locs[j.from as usize]
                            .map(|l| format!(" at {l}"))
                            .unwrap_or_default();
                        lines.push(format!(
                            "block ({},{},{}) warp {wi} lanes {:#010x} wait at the end of {what}{at} for lanes {:#010x}",
                            cta.ctaid[0], cta.ctaid[1], cta.ctaid[2], j.arrived, j.expected & !j.arrived
                        ));
                    }
                }
                self.barrier_counts(cta, &mut counts);
            }
            for op in &cl.inflight {
                lines.push(op.describe(prog));
            }
        }
        for (pc, f) in counts {
            self.findings.push(pc, u32::MAX, f);
        }
        if self.next < self.clusters {
            lines.push(format!(
                "{} of {} clusters of blocks have not started: they wait for a resident one to end (the launch has {} SMs)",
                self.clusters - self.next,
                self.clusters,
                self.env.launch.sms
            ));
        }
        let (site, pc) = first.unwrap_or((
            Site {
                cta: [0; 3],
                warp: 0,
                lane: 0,
            },
            0,
        ));
        let why = if stalled {
            "the warps that run change nothing and the others wait"
        } else {
            "every live warp waits and nothing in flight can wake one"
        };
        let f = Finding::at(
            FindingKind::Deadlock,
            op_name(prog, pc),
            site,
            prog.locs.get(pc as usize).copied().flatten(),
            format!("{why}:\n  {}", lines.join("\n  ")),
        );
        self.findings.push(pc, u32::MAX, f);
    }

    /// At a deadlock: named barriers with an explicit count that the warps of the block can no
    /// longer reach.
    fn barrier_counts(&self, cta: &CtaState, out: &mut Vec<(u32, Finding)>) {
        if !self.env.opts.checks.barriers {
            return;
        }
        let prog = self.env.prog;
        for (id, b) in cta.barriers.iter().enumerate() {
            let Some(expected) = b.expected else { continue };
            if b.arrived == 0 || b.arrived >= expected {
                continue;
            }
            // Warps not yet at the barrier that could still come: live ones not waiting at it.
            let could = cta
                .warps
                .iter()
                .enumerate()
                .filter(|(i, w)| !w.done() && b.who & (1 << i) == 0)
                .count() as u32;
            if b.arrived + could >= expected && could > 0 {
                continue;
            }
            let pc = b.first_pc;
            let site = Site {
                cta: cta.ctaid,
                warp: b.who.trailing_zeros(),
                lane: 0,
            };
            let f = Finding::at(
                FindingKind::BarrierCount,
                op_name(prog, pc),
                site,
                prog.locs.get(pc as usize).copied().flatten(),
                format!(
                    "barrier {id} expects {} threads, but {} threads arrived and {} more can: the count does not match the threads that arrive",
                    expected * 32,
                    b.arrived * 32,
                    could * 32
                ),
            );
            out.push((pc, f));
        }
    }
}
