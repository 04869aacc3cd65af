//! The run loop: clusters of blocks become resident (up to the launch's SMs; the rest wait for
//! a slot, in block order), the scheduler picks a ready part of a warp and runs it for a
//! quantum or until it parks, and the run ends when every block has finished, when every live
//! part waits and nothing in flight can wake one (a deadlock, reported), or at the step limit.
//!
//! Running a part interprets the flat program: structured control flow splits a part where its
//! lanes disagree and joins the parts again at the statement's end; an instruction first gathers
//! the lanes its op must run with ([`op::sync_lanes`]), checks that the registers it reads are
//! initialized in its lanes, and runs ([`op::exec`]).

use super::asyncop::complete_at;
use super::clock::{Components, Vc};
use super::env::Env;
use super::exec::{Exec, Flow};
use super::global::{GlobalShadow, GridView, Imports};
use super::memory::Memory;
use super::op;
use super::program::Code;
use super::regs::{Lanes, RegFile};
use super::report::{Finding, FindingKind, Findings, Report, SimError, Site, Stats};
use super::sched::{Candidate, Scheduler};
use super::shadow::{ProxyFences, SharedMem};
use super::state::{ClusterBarrier, ClusterState, CpAsyncState, CtaState, Part, Status, WarpState};
use crate::ir::{OpInfo, Operand, Reg, Type};

mod control;
mod deadlock;

use control::lanes_where;

/// A run in progress.
pub(crate) struct Machine<'r, 'p> {
    env: &'r Env<'p>,
    mem: &'r mut Memory,
    slots: Vec<Option<ClusterState>>,
    next: u64,
    clusters: u64,
    findings: Findings,
    sched: Scheduler,
    stats: Stats,
    /// Parts that reached the end of the kernel.
    exits: u64,
    /// The last progress mark (memory generations and exits) and the step it changed at.
    progress: (u64, u64),
    /// Global memory's race shadow.
    global: GlobalShadow,
}

/// Why a part stopped running.
enum Stop {
    /// Its quantum ran out; it is still ready.
    Quantum,
    /// It parked, exited, or dissolved into a join.
    Yield,
}

impl<'r, 'p> Machine<'r, 'p> {
    pub fn new(env: &'r Env<'p>, mem: &'r mut Memory) -> Self {
        let l = &env.launch;
        let per_cluster = l.cluster_blocks();
        let slots = (l.sms.div_ceil(per_cluster)).max(1) as usize;
        Machine {
            env,
            mem,
            slots: (0..slots).map(|_| None).collect(),
            next: 0,
            clusters: l.blocks() / u64::from(per_cluster),
            findings: Findings::new(env.limits.max_findings),
            sched: Scheduler::new(env.opts.schedule, env.opts.seed),
            stats: Stats::default(),
            exits: 0,
            progress: (0, 0),
            global: GlobalShadow::new(env.opts.checks.races),
        }
    }

    pub fn run(mut self) -> Result<Report, SimError> {
        loop {
            self.fill_slots();
            if self.slots.iter().all(Option::is_none) {
                break;
            }
            let ready = self.candidates();
            if ready.is_empty() {
                if self.flush_inflight()? {
                    continue;
                }
                self.deadlock(false);
                break;
            }
            if self.stalled() {
                self.deadlock(true);
                break;
            }
            let pick = ready[self.sched.pick(&ready)];
            let (slot, cta, warp, part) = unkey(pick.order);
            let budget = self.sched.quantum(self.stats.warp_instructions);
            self.run_part(slot, cta, warp, part, budget)?;
            if let Some(low) = self.sched.change_point(self.stats.warp_instructions) {
                if let Some(cl) = self.slots[slot].as_mut() {
                    cl.ctas[cta].warps[warp].priority = low;
                }
            }
            self.retire(slot)?;
            if self.sched.complete_now() {
                self.complete_random()?;
            }
            if self.stats.warp_instructions > self.env.limits.max_steps {
                return Err(SimError::StepLimit {
                    steps: self.stats.warp_instructions,
                });
            }
        }
        let (findings, dropped) = self.findings.finish();
        Ok(Report {
            seed: self.env.opts.seed,
            schedule: self.env.opts.schedule,
            findings,
            dropped,
            stats: self.stats,
        })
    }

    /// Whether nothing has changed memory or ended for the options' stall length.
    fn stalled(&mut self) -> bool {
        let shared: u64 = self
            .slots
            .iter()
            .flatten()
            .map(ClusterState::shared_generation)
            .sum();
        let mark = self.mem.generation + shared + self.exits + self.stats.blocks;
        let steps = self.stats.warp_instructions;
        if mark != self.progress.0 {
            self.progress = (mark, steps);
            return false;
        }
        steps - self.progress.1 > self.env.limits.stall_steps
    }

    /// Starts clusters in free slots, in grid order.
    fn fill_slots(&mut self) {
        for s in 0..self.slots.len() {
            if self.slots[s].is_none() && self.next < self.clusters {
                let cl = self.new_cluster(self.next, s as u32);
                self.slots[s] = Some(cl);
                self.next += 1;
            }
        }
    }

    fn new_cluster(&mut self, index: u64, slot: u32) -> ClusterState {
        let env = self.env;
        let l = &env.launch;
        let comps: Components = env.comps;
        let n = comps.len();
        let checks = env.opts.checks;
        let threads = l.block_threads();
        let mut ctas = Vec::new();
        for rank in 0..l.cluster_blocks() {
            let ctaid = l.ctaid(index, rank);
            let warps = (0..env.warps)
                .map(|w| {
                    let first = w * 32;
                    let count = (threads - first).min(32);
                    let live = if count == 32 {
                        u32::MAX
                    } else {
                        (1u32 << count) - 1
                    };
                    let comp = comps.warp(rank, w);
                    let mut vc = Vc::new(n);
                    vc.0[comp as usize] = 1;
                    WarpState {
                        live,
                        regs: RegFile::new(env.prog.regs.len()),
                        parts: vec![Part {
                            mask: live,
                            pc: 0,
                            stack: Vec::new(),
                            status: Status::Ready,
                        }],
                        joins: Vec::new(),
                        free_joins: Vec::new(),
                        comp,
                        vc,
                        release_vc: None,
                        release_scope: crate::ir::Scope::Cta,
                        pending_acquire: Vc::new(n),
                        pending_grid: GridView::default(),
                        priority: self.sched.new_priority(),
                        cp: CpAsyncState {
                            committed: [0; 32],
                            clock: 0,
                            done: Vec::new(),
                        },
                        poll: None,
                        cluster_arrived: None,
                        maxnreg: None,
                        setmaxnreg: Vec::new(),
                        local: Vec::new(),
                        held: Default::default(),
                        bulk: Default::default(),
                        wgmma: Default::default(),
                        tc: Default::default(),
                    }
                })
                .collect();
            ctas.push(CtaState {
                ctaid,
                rank,
                smem: SharedMem::new(
                    env.smem_bytes as usize,
                    n,
                    checks.races,
                    checks.uninitialized,
                ),
                barriers: op::barrier::barriers(n),
                warps,
                next_load: 0,
                next_commit: 0,
                warpgroups: vec![Default::default(); env.warps.div_ceil(4) as usize],
                tmem: None,
                peers: Default::default(),
            });
        }
        ClusterState {
            index,
            imports: Imports::default(),
            sm: slot * l.cluster_blocks(),
            ctas,
            comps,
            fences: ProxyFences::new(n),
            init_fences: ProxyFences::new(n),
            barrier: ClusterBarrier {
                phase: 0,
                arrived: 0,
                vc: Vc::new(n),
                released: Vc::new(n),
            },
            sync: Default::default(),
            global_sync: Default::default(),
            inflight: Vec::new(),
            mbarriers: Default::default(),
            agent_clock: vec![0; n],
            pairs: Vec::new(),
        }
    }

    /// Ready parts, in machine order.
    fn candidates(&mut self) -> Vec<Candidate> {
        let mut out = Vec::new();
        let global = self.mem.generation;
        for (s, slot) in self.slots.iter_mut().enumerate() {
            let Some(cl) = slot else { continue };
            let shared = cl.shared_generation();
            for (c, cta) in cl.ctas.iter_mut().enumerate() {
                for (w, warp) in cta.warps.iter_mut().enumerate() {
                    for (p, part) in warp.parts.iter_mut().enumerate() {
                        if let Status::Poll {
                            global: g,
                            shared: sh,
                        } = part.status
                        {
                            if g != global || sh != shared {
                                part.status = Status::Ready;
                            }
                        }
                        if part.status == Status::Ready {
                            out.push(Candidate {
                                order: key(s, c, w, p),
                                priority: warp.priority,
                            });
                        }
                    }
                }
            }
        }
        out
    }

    /// An `Exec` for warp `warp` of block `cta` in slot `slot`.
    fn exec_for(&mut self, slot: usize, cta: usize, warp: usize) -> Option<Exec<'_, 'p>> {
        let cl = self.slots[slot].as_mut()?;
        Some(Exec {
            env: self.env,
            cl,
            cta,
            warp,
            pc: 0,
            mask: 0,
            part_mask: 0,
            op: "",
            mem: self.mem,
            global: &mut self.global,
            findings: &mut self.findings,
            sched: &mut self.sched,
            stats: &mut self.stats,
        })
    }

    /// Completes every operation in flight (their windows allow it at any time); true when
    /// there were some.
    fn flush_inflight(&mut self) -> Result<bool, SimError> {
        let mut any = false;
        for s in 0..self.slots.len() {
            while let Some(x) = self.exec_for(s, 0, 0) {
                if x.cl.inflight.is_empty() {
                    break;
                }
                let mut x = x;
                complete_at(&mut x, 0)?;
                any = true;
            }
        }
        Ok(any)
    }

    /// Completes one operation in flight, chosen at random.
    fn complete_random(&mut self) -> Result<(), SimError> {
        let busy: Vec<usize> = (0..self.slots.len())
            .filter(|&s| {
                self.slots[s]
                    .as_ref()
                    .is_some_and(|c| !c.inflight.is_empty())
            })
            .collect();
        if busy.is_empty() {
            return Ok(());
        }
        let s = busy[self.sched.pick_index(busy.len())];
        let n = self.slots[s].as_ref().map_or(0, |c| c.inflight.len());
        let i = self.sched.pick_index(n);
        if let Some(mut x) = self.exec_for(s, 0, 0) {
            complete_at(&mut x, i)?;
        }
        Ok(())
    }

    /// Frees the slot of a cluster whose blocks have all finished, once the asynchronous
    /// operations they left in flight (bulk stores, say) complete.
    fn retire(&mut self, slot: usize) -> Result<(), SimError> {
        let Some(cl) = self.slots[slot].as_ref() else {
            return Ok(());
        };
        if cl.ctas.iter().any(|c| c.warps.iter().any(|w| !w.done())) {
            return Ok(());
        }
        while let Some(mut x) = self.exec_for(slot, 0, 0) {
            if x.cl.inflight.is_empty() {
                break;
            }
            complete_at(&mut x, 0)?;
        }
        let Some(cl) = self.slots[slot].as_ref() else {
            return Ok(());
        };
        for cta in &cl.ctas {
            if let Some(why) = cta.tmem.as_deref().and_then(op::tcgen05::leftover) {
                if self.env.opts.checks.barriers {
                    let site = Site {
                        cta: cta.ctaid,
                        warp: 0,
                        lane: 0,
                    };
                    let f = Finding::at(FindingKind::TensorMemory, "exit", site, None, why);
                    self.findings.push(u32::MAX, u32::MAX, f);
                }
            }
        }
        for cta in &cl.ctas {
            if let Some((_, f, pc)) = op::setmaxnreg::check_warpgroups(cta) {
                if self.env.opts.checks.barriers {
                    let f = Finding {
                        location: self.env.prog.locs.get(pc as usize).copied().flatten(),
                        ..f
                    };
                    self.findings.push(pc, u32::MAX, f);
                }
            }
        }
        self.stats.blocks += cl.ctas.len() as u64;
        self.slots[slot] = None;
        Ok(())
    }

    /// Runs part `p` of a warp for at most `budget` instructions.
    fn run_part(
        &mut self,
        slot: usize,
        cta: usize,
        warp: usize,
        mut p: usize,
        budget: u64,
    ) -> Result<Stop, SimError> {
        let env = self.env;
        let prog = env.prog;
        let checks = env.opts.checks;
        let mut steps = 0u64;
        loop {
            if steps >= budget {
                return Ok(Stop::Quantum);
            }
            let Some(cl) = self.slots[slot].as_mut() else {
                return Ok(Stop::Yield);
            };
            let w = &mut cl.ctas[cta].warps[warp];
            let (pc, mask) = (w.parts[p].pc, w.parts[p].mask);
            match &prog.code[pc as usize] {
                Code::Op(i) => {
                    let i = *i;
                    let instr = &prog.instrs[i as usize];
                    let mut exec_mask = mask;
                    if let Some(g) = instr.guard {
                        self.check_init(slot, cta, warp, pc, g.pred, mask);
                        let v = self.reg_lanes(slot, cta, warp, g.pred);
                        exec_mask = lanes_where(&v, mask, |b| (b & 1 != 0) != g.negate);
                    }
                    let (gathered, np) = self.gather(slot, cta, warp, p, instr, exec_mask)?;
                    p = np;
                    if !gathered {
                        return Ok(Stop::Yield);
                    }
                    let cl = self.slots[slot].as_mut().ok_or_else(gone)?;
                    let part_mask = cl.ctas[cta].warps[warp].parts[p].mask;
                    // Lanes merged in by the gathering run the op too (their guards).
                    if part_mask != mask {
                        exec_mask = part_mask;
                        if let Some(g) = instr.guard {
                            let v = self.reg_lanes(slot, cta, warp, g.pred);
                            exec_mask = lanes_where(&v, part_mask, |b| (b & 1 != 0) != g.negate);
                        }
                    }
                    steps += 1;
                    self.stats.warp_instructions += 1;
                    self.stats.lane_instructions += u64::from(exec_mask.count_ones());
                    if exec_mask == 0 {
                        self.set_pc(slot, cta, warp, p, pc + 1);
                        continue;
                    }
                    if checks.uninitialized && !op::checks_own_uses(&instr.op) {
                        for r in prog.uses(i) {
                            self.check_init(slot, cta, warp, pc, *r, exec_mask);
                        }
                    }
                    let flow = {
                        let mut x = self.exec_for(slot, cta, warp).ok_or_else(gone)?;
                        x.pc = pc;
                        x.mask = exec_mask;
                        x.part_mask = part_mask;
                        x.op = instr.op.mnemonic();
                        let touched = prog.touches(i);
                        if !touched.is_empty() {
                            super::held::on_touch(&mut x, i, touched);
                        }
                        op::exec(&mut x, &instr.op)?
                    };
                    let cl = self.slots[slot].as_mut().ok_or_else(gone)?;
                    let part = &mut cl.ctas[cta].warps[warp].parts[p];
                    match flow {
                        Flow::Next => part.pc = pc + 1,
                        Flow::Park(s) => {
                            part.pc = pc + 1;
                            part.status = s;
                            return Ok(Stop::Yield);
                        }
                        Flow::Retry(s) => {
                            part.status = s;
                            return Ok(Stop::Yield);
                        }
                    }
                }
                Code::End => {
                    self.exit_part(slot, cta, warp, p);
                    return Ok(Stop::Yield);
                }
                code => {
                    steps += 1;
                    if !self.control(slot, cta, warp, p, pc, mask, code)? {
                        return Ok(Stop::Yield);
                    }
                }
            }
        }
    }

    fn set_pc(&mut self, slot: usize, cta: usize, warp: usize, p: usize, pc: u32) {
        if let Some(cl) = self.slots[slot].as_mut() {
            cl.ctas[cta].warps[warp].parts[p].pc = pc;
        }
    }

    fn reg_lanes(&self, slot: usize, cta: usize, warp: usize, r: Reg) -> Lanes {
        match self.slots[slot].as_ref() {
            Some(cl) => *cl.ctas[cta].warps[warp].regs.get(r.id),
            None => [0; 32],
        }
    }

    /// A loop's start, bound or step in the lanes of `mask` (a register read is checked).
    #[allow(clippy::too_many_arguments)]
    fn loop_operand(
        &mut self,
        slot: usize,
        cta: usize,
        warp: usize,
        pc: u32,
        mask: u32,
        o: &Operand,
        ty: Type,
    ) -> Lanes {
        match o {
            Operand::Reg(r) => {
                self.check_init(slot, cta, warp, pc, *r, mask);
                self.reg_lanes(slot, cta, warp, *r)
            }
            Operand::Imm(i) => [*i as u64 & super::regs::width_mask(ty); 32],
            Operand::ImmF(f) => [*f as i64 as u64 & super::regs::width_mask(ty); 32],
        }
    }

    /// Reports a read of `r` in lanes of `mask` that never wrote it.
    fn check_init(&mut self, slot: usize, cta: usize, warp: usize, pc: u32, r: Reg, mask: u32) {
        if !self.env.opts.checks.uninitialized {
            return;
        }
        let Some(cl) = self.slots[slot].as_ref() else {
            return;
        };
        let bad = cl.ctas[cta].warps[warp].regs.uninit(r.id, mask);
        if bad == 0 {
            return;
        }
        let env = self.env;
        let op = match &env.prog.code[pc as usize] {
            Code::Op(i) => env.prog.instrs[*i as usize].op.mnemonic(),
            Code::Branch { .. } => "if",
            Code::ForTest { .. } | Code::ForInit { .. } | Code::ForStep { .. } => "for",
            Code::WhileTest { .. } => "while",
            _ => "?",
        };
        if self
            .findings
            .seen(FindingKind::UninitializedRegister, pc, r.id)
        {
            return;
        }
        let site = Site {
            cta: cl.ctas[cta].ctaid,
            warp: warp as u32,
            lane: bad.trailing_zeros(),
        };
        let f = Finding::at(
            FindingKind::UninitializedRegister,
            op,
            site,
            env.prog.locs[pc as usize],
            format!(
                "reads register %{} ({}) in lanes {bad:#010x}, where nothing wrote it",
                r.id, r.ty
            ),
        );
        self.findings.push(pc, r.id, f);
    }

    /// Gathers the lanes `instr` must run with: merges parts of the warp that wait at the same
    /// position, or parks this one until they come. Returns whether it may run, and the part's
    /// index after merging. Once gathered, a warp-synchronous op moves the warp's clock on, so
    /// that the shadow tells lanes' accesses before it from those after it (lanes of one warp
    /// are otherwise unordered: see the shadow's lane rule).
    fn gather(
        &mut self,
        slot: usize,
        cta: usize,
        warp: usize,
        p: usize,
        instr: &crate::ir::Instr,
        exec_mask: u32,
    ) -> Result<(bool, usize), SimError> {
        let need = {
            let Some(x) = self.exec_for(slot, cta, warp) else {
                return Ok((false, p));
            };
            let live = x.wr().live;
            let mask = x.wr().parts[p].mask;
            let first = (if exec_mask != 0 { exec_mask } else { mask }).trailing_zeros() as usize;
            let mut x = x;
            x.mask = exec_mask;
            op::sync_lanes(&x, &instr.op, live, first.min(31))?
        };
        let Some(need) = need else {
            return Ok((true, p));
        };
        let cl = self.slots[slot].as_mut().ok_or_else(gone)?;
        let w = &mut cl.ctas[cta].warps[warp];
        if w.parts[p].mask & need == need {
            w.vc.tick(w.comp)?;
            return Ok((true, p));
        }
        // Merge the parts waiting at this position with the same join frames.
        let (pc, stack) = (w.parts[p].pc, w.parts[p].stack.clone());
        let mut merged = w.parts[p].mask;
        let mut removed_before = 0;
        let mut idx = 0;
        w.parts.retain(|q| {
            let same = idx != p
                && matches!(q.status, Status::Rendezvous(_))
                && q.pc == pc
                && q.stack == stack;
            if same {
                merged |= q.mask;
                if idx < p {
                    removed_before += 1;
                }
            }
            idx += 1;
            !same
        });
        let p = p - removed_before;
        w.parts[p].mask = merged;
        if merged & need == need {
            w.vc.tick(w.comp)?;
            return Ok((true, p));
        }
        w.parts[p].status = Status::Rendezvous(need);
        Ok((false, p))
    }

    fn warp_mut(
        &mut self,
        slot: usize,
        cta: usize,
        warp: usize,
    ) -> Result<&mut WarpState, SimError> {
        Ok(&mut self.slots[slot].as_mut().ok_or_else(gone)?.ctas[cta].warps[warp])
    }

    /// The lanes of part `p` end the kernel.
    fn exit_part(&mut self, slot: usize, cta: usize, warp: usize, p: usize) {
        let Some(cl) = self.slots[slot].as_mut() else {
            return;
        };
        let w = &mut cl.ctas[cta].warps[warp];
        let m = w.parts[p].mask;
        w.parts.remove(p);
        self.exits += 1;
        w.live &= !m;
        if w.done() {
            if cl.ctas[cta].live_warps() == 0 {
                for (pc, f) in crate::sim::peers::exit(self.env, cl, cta) {
                    if !self.findings.seen(f.kind, pc, u32::MAX) {
                        self.findings.push(pc, u32::MAX, f);
                    }
                }
            }
            op::barrier::on_warp_exit(&mut cl.ctas[cta]);
            op::barrier::try_complete_cluster(cl);
            // Warps waiting for this one's wgmma or allocation ops look again.
            cl.wake_async();
        }
    }
}

fn gone() -> SimError {
    SimError::Limit("a part of a warp ran after its block ended".into())
}

fn key(s: usize, c: usize, w: usize, p: usize) -> u64 {
    ((s as u64) << 40) | ((c as u64) << 24) | ((w as u64) << 12) | p as u64
}

fn unkey(k: u64) -> (usize, usize, usize, usize) {
    (
        (k >> 40) as usize,
        ((k >> 24) & 0xffff) as usize,
        ((k >> 12) & 0xfff) as usize,
        (k & 0xfff) as usize,
    )
}

fn op_name(prog: &super::program::Program, pc: u32) -> &'static str {
    match prog.code.get(pc as usize) {
        Some(Code::Op(i)) => prog.instrs[*i as usize].op.mnemonic(),
        Some(Code::Join) => "end of a branch or loop",
        Some(Code::End) => "end of the kernel",
        _ => "control flow",
    }
}
