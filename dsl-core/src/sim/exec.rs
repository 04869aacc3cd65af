//! What an op family's code sees while one instruction runs: the warp and lanes executing it,
//! their block and cluster, global memory, the scheduler, and how to raise a finding.

use super::clock::{comp_of, epoch, Vc};
use super::env::Env;
use super::global::{GlobalAccessor, GlobalConflict, GlobalShadow};
use super::memory::Memory;
use super::regs::{width_mask, Lanes, RegFile};
use super::report::{
    race_words, Finding, FindingKind, Findings, Party, SimError, Site, Stats, LANES_UNORDERED,
};
use super::sched::Scheduler;
use super::shadow::{site, unsite};
use super::state::{ClusterState, Status, WarpState};
use crate::ir::{Location, Operand, Reg, Scope, Type};

/// What an instruction did to its part.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flow {
    /// Go on with the next position.
    Next,
    /// Go on with the next position once woken (the part parks with this status).
    Park(Status),
    /// Run this instruction again once woken (the part parks with this status): a wait that
    /// finishes by succeeding.
    Retry(Status),
}

/// One instruction executing on one part of a warp.
pub(crate) struct Exec<'r, 'p> {
    pub env: &'r Env<'p>,
    pub cl: &'r mut ClusterState,
    /// The block's rank in the cluster.
    pub cta: usize,
    pub warp: usize,
    /// The instruction's program position.
    pub pc: u32,
    /// The lanes executing it (the part's lanes whose guard holds).
    pub mask: u32,
    /// The lanes of the part (guarded off or not).
    pub part_mask: u32,
    /// The op's mnemonic, for findings and errors.
    pub op: &'static str,
    pub mem: &'r mut Memory,
    /// Global memory's race shadow.
    pub global: &'r mut GlobalShadow,
    pub findings: &'r mut Findings,
    pub sched: &'r mut Scheduler,
    pub stats: &'r mut Stats,
}

impl Exec<'_, '_> {
    pub fn w(&mut self) -> &mut WarpState {
        &mut self.cl.ctas[self.cta].warps[self.warp]
    }

    pub fn wr(&self) -> &WarpState {
        &self.cl.ctas[self.cta].warps[self.warp]
    }

    pub fn regs(&self) -> &RegFile {
        &self.wr().regs
    }

    pub fn loc(&self) -> Option<Location> {
        self.env.prog.locs[self.pc as usize]
    }

    pub fn site(&self, lane: u32) -> Site {
        Site {
            cta: self.cl.ctas[self.cta].ctaid,
            warp: self.warp as u32,
            lane,
        }
    }

    /// `r`'s lanes.
    pub fn reg(&self, r: Reg) -> &Lanes {
        self.regs().get(r.id)
    }

    /// An operand's lanes in a slot of type `ty`: a register's bits, or an immediate encoded as
    /// the slot's type (an integer immediate in a float slot is that number as a float).
    pub fn read(&self, o: &Operand, ty: Type) -> Result<Lanes, SimError> {
        Ok(match o {
            Operand::Reg(r) => *self.reg(*r),
            _ => [self.scalar(o, ty)?; 32],
        })
    }

    /// An operand that the executing lanes share (a barrier id, a member mask), read in the
    /// first executing lane; an immediate as [`Exec::read`] encodes it.
    pub fn scalar(&self, o: &Operand, ty: Type) -> Result<u64, SimError> {
        use super::float::{round, Mode, BF16, F16, F32};
        let f = match *o {
            Operand::Reg(r) => return Ok(self.reg(r)[self.mask.trailing_zeros().min(31) as usize]),
            Operand::Imm(i) if !ty.is_float() => return Ok(i as u64 & width_mask(ty)),
            Operand::Imm(i) => i as f64,
            Operand::ImmF(x) if ty.is_float() => x,
            Operand::ImmF(_) => {
                return Err(SimError::BadOperand {
                    op: self.op,
                    location: self.loc(),
                    detail: format!("a float immediate in a {ty} slot"),
                })
            }
        };
        Ok(match ty {
            Type::F64 => f.to_bits(),
            Type::F32 => round(F32, f, 0.0, Mode::Nearest),
            Type::F16 => round(F16, f, 0.0, Mode::Nearest),
            Type::BF16 => round(BF16, f, 0.0, Mode::Nearest),
            Type::F16x2 => round(F16, f, 0.0, Mode::Nearest) * 0x1_0001,
            _ => round(BF16, f, 0.0, Mode::Nearest) * 0x1_0001,
        })
    }

    /// Writes `v` to `r` in the executing lanes.
    pub fn set(&mut self, r: Reg, v: &Lanes) {
        let m = self.mask;
        self.w().regs.set(r, v, m);
    }

    /// An error for a form of the op the simulator does not model.
    pub fn unsupported(&self, form: impl std::fmt::Display) -> SimError {
        SimError::Unsupported {
            op: format!("{} ({form})", self.op),
            location: self.loc(),
        }
    }

    /// Whether a finding of `kind` here (against `other_pc`) was already reported: the caller
    /// skips building it.
    pub fn seen(&mut self, kind: FindingKind, other_pc: u32) -> bool {
        self.findings.seen(kind, self.pc, other_pc)
    }

    /// Raises a finding of `kind` at this op in `lane`.
    pub fn find(&mut self, kind: FindingKind, lane: u32, details: impl FnOnce() -> String) {
        if self.seen(kind, u32::MAX) {
            return;
        }
        let f = Finding::at(kind, self.op, self.site(lane), self.loc(), details());
        self.findings.push(self.pc, u32::MAX, f);
    }

    /// Raises a race of `kind` at this op in `lane` against the access of component `comp` at
    /// `site` (a shadow site).
    pub fn find_race(
        &mut self,
        kind: FindingKind,
        lane: u32,
        comp: u32,
        other_site: u32,
        other_write: bool,
        details: impl FnOnce() -> String,
    ) {
        let (opc, olane) = unsite(other_site);
        if self.seen(kind, opc) {
            return;
        }
        let other = self.party(comp, opc, olane, other_write);
        let f = Finding {
            other: Some(other),
            ..Finding::at(kind, self.op, self.site(lane), self.loc(), details())
        };
        self.findings.push(self.pc, opc, f);
    }

    /// Records an access of `len` bytes at `off` of global buffer `buf` in `lane` (a read, a
    /// write, or both for an atomic; `strong`, the scope of an ordered or atomic one) in the race shadow
    /// and reports the race it finds. The executing warp accesses, or, given `agent` (its
    /// component, clock and vector clock), an asynchronous agent acting for it. A read-only
    /// buffer is not shadowed.
    pub fn global_access(
        &mut self,
        (buf, off, len): (usize, usize, usize),
        (read, write): (bool, bool),
        strong: Option<Scope>,
        lane: u32,
        agent: Option<(u32, u32, &Vc)>,
    ) {
        if self.mem.read_only(buf) {
            return;
        }
        let size = self.mem.data(buf).len();
        let w = &self.cl.ctas[self.cta].warps[self.warp];
        let (epoch, vc) = match agent {
            Some((comp, clock, vc)) => (epoch(comp, clock), vc),
            None => (w.vc.epoch(w.comp), &w.vc),
        };
        let who = GlobalAccessor {
            cluster: self.cl.index,
            cta: self.cl.ctas[self.cta].rank,
            epoch,
            vc,
            imports: &self.cl.imports,
            site: site(self.pc, lane),
            strong,
            lanes: agent.is_none(),
        };
        if let Some(c) = self
            .global
            .access((buf, size), (off, len), (read, write), &who)
        {
            self.report_global(c, (buf, len), write, lane);
        }
    }

    fn report_global(
        &mut self,
        c: GlobalConflict,
        (buf, len): (usize, usize),
        write: bool,
        lane: u32,
    ) {
        let (opc, olane) = unsite(c.site);
        if self.seen(FindingKind::GlobalRace, opc) {
            return;
        }
        let (rank, warp) = self.cl.comps.who(comp_of(c.epoch)).site();
        let prog = self.env.prog;
        let other = Party::at(
            prog.mnemonic(opc).unwrap_or("?"),
            Site {
                cta: self.env.launch.ctaid(c.cluster, rank),
                warp,
                lane: olane,
            },
            prog.location(opc),
            c.write,
        );
        let (verb, what) = race_words(c.write, write);
        let why = if c.lanes {
            LANES_UNORDERED
        } else if c.cluster == self.cl.index {
            "no barrier or release/acquire orders them"
        } else {
            "the blocks are in different clusters, and no release and acquire through a global \
             location (a flag after its fence, an atomic) orders them"
        };
        let name = self.mem.buffer_name(buf);
        let details = format!(
            "{verb} {len} bytes at byte {} of buffer `{name}`: {what}, {why}",
            c.offset
        );
        let f = Finding {
            other: Some(other),
            ..Finding::at(
                FindingKind::GlobalRace,
                self.op,
                self.site(lane),
                self.loc(),
                details,
            )
        };
        self.findings.push(self.pc, opc, f);
    }

    /// The party of an access by component `comp` at position `pc` in `lane`.
    fn party(&self, comp: u32, pc: u32, lane: u32, write: bool) -> Party {
        party(self.env.prog, self.cl, (comp, pc, lane), write)
    }
}

/// The party of an access by component `comp` of `cl` at position `pc` of `prog` in `lane`:
/// its op, block, warp and Rust location.
pub(crate) fn party(
    prog: &super::program::Program,
    cl: &ClusterState,
    (comp, pc, lane): (u32, u32, u32),
    write: bool,
) -> Party {
    let (cta, warp) = cl.comps.who(comp).site();
    let site = Site {
        cta: cl.ctas[cta as usize].ctaid,
        warp,
        lane,
    };
    Party::at(
        prog.mnemonic(pc).unwrap_or("?"),
        site,
        prog.location(pc),
        write,
    )
}
