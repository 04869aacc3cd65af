//! Warpgroup MMA (PTX ISA 9.7.15: `wgmma.mma_async`, `wgmma.fence`, `wgmma.commit_group`,
//! `wgmma.wait_group`).
//!
//! `wgmma.mma_async.m64nNk16` computes `D = A * B (+ D)` for the warpgroup (four consecutive
//! warps, the first a multiple of 4): A is 64 x 16 (from a shared-memory descriptor, or four
//! registers per thread), B is 16 x N (a descriptor), D is 64 x N in registers. Each warp holds
//! 16 rows of D (warp `w` of the group rows `16 w ..`), so the simulator performs each warp's
//! share as an operation of that warp's wgmma agent: it reads the warp's 16 rows of A, all of B
//! and the warp's accumulators when it completes, and writes the accumulators. The fragment
//! layout of D (9.7.15.5.1.1.1, the figure's layout; CUTLASS's `CLayout_64xN`): with `g =
//! lane / 4`, `t = lane % 4`, element `i` of a thread (f32 register `i`; f16 registers hold
//! elements `2i`, `2i + 1` in their low and high halves) is row `g + 8 ((i / 2) % 2)`, column
//! `8 (i / 4) + 2t + i % 2`; A from registers: register `j` holds row `g + 8 (j % 2)`,
//! columns `2t + 8 (j / 2)` and the next. Shared operands are decoded from their descriptors
//! ([`SmemMatrix`]); `imm-trans-a`/`imm-trans-b` select M- and N-major layouts; `scale-d` false
//! ignores D; `imm-scale-a/b` of -1 negate. Each element's 16 products are exact and summed in
//! f64, then D added and the result rounded once to the accumulator's type (the ISA leaves the
//! order and the internal precision open, 9.7.15.5.2).
//!
//! Asynchrony (9.7.15.4, 9.7.15.7): operations are committed into per-warp groups and complete
//! in order; `wait_group n` completes all but the `n` most recent groups and acquires their
//! agent's epoch (their shared-memory reads happen before the waiting warp's later accesses:
//! "the completion of a wgmma.mma_async operation is followed by an implicit generic-async
//! proxy fence"). Until that wait, the operation's accumulators and A registers are held: any
//! other instruction touching them is a finding ([`held`](crate::sim::held)). The shared reads
//! are in the async proxy, so data that threads wrote needs `fence.proxy.async`.
//!
//! Checks: a `wgmma.mma_async` whose registers were touched since the warp's last
//! `wgmma.fence` (or with none before it) ([`FindingKind::AsyncRegister`]); the warps of a
//! warpgroup issuing different wgmma operations at the same point of their sequences, or a
//! warp waiting for a group the others never issue ([`FindingKind::WarpSync`]; the wait parks
//! until they issue, so one that never comes is a deadlock).

use std::collections::VecDeque;

use super::super::asyncop::{complete_at, AsyncKind};
use super::super::clock::Vc;
use super::super::exec::{Exec, Flow};
use super::super::float::{round, Format, Mode, F16, F32};
use super::super::held::Holder;
use super::super::regs::lanes;
use super::super::report::{FindingKind, SimError};
use super::super::smem_matrix::{Major, SmemMatrix};
use super::super::state::{AsyncWait, Status};
use super::arith::to_f64;
use super::bulk::{issue, proxy_read_chunks};
use crate::ir::op::{ScaleD, Wgmma, WgmmaA, WgmmaMma};
use crate::ir::{Reg, Type};

/// A warp's wgmma bookkeeping.
#[derive(Debug, Clone, Default)]
pub(crate) struct WgmmaWarp {
    /// `wgmma.mma_async` operations issued.
    pub issued: u32,
    /// Groups committed (the open group's index).
    pub committed: u32,
    /// Operations not yet waited for.
    pub pending: Vec<Pending>,
    /// Registers wgmma may hold that the warp touched since its last `wgmma.fence`, a bit each.
    pub touched: Vec<u64>,
    /// Whether the warp executed a `wgmma.fence`.
    pub fenced: bool,
}

/// An issued operation not yet waited for.
#[derive(Debug, Clone)]
pub(crate) struct Pending {
    pub group: u32,
    pub seq: u32,
    pub regs: Vec<Reg>,
}

impl WgmmaWarp {
    /// Marks `regs` as touched.
    pub fn touched(&mut self, regs: &[Reg]) {
        for r in regs {
            let (w, b) = (r.id as usize / 64, r.id % 64);
            if self.touched.len() <= w {
                self.touched.resize(w + 1, 0);
            }
            self.touched[w] |= 1 << b;
        }
    }

    fn was_touched(&self, r: Reg) -> bool {
        let (w, b) = (r.id as usize / 64, r.id % 64);
        self.touched.get(w).is_some_and(|x| x & (1 << b) != 0)
    }
}

/// What one warp's `wgmma.mma_async` gave, to hold against the other warps of its group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Signature {
    pc: u32,
    a: u64,
    b: u64,
    scale_d: bool,
}

/// A warpgroup's `wgmma.mma_async` operations that not every warp has issued and waited for.
#[derive(Debug, Clone, Default)]
pub(crate) struct Warpgroup {
    /// Per sequence number (from `base`).
    ops: VecDeque<Entry>,
    base: u32,
}

/// One `wgmma.mma_async` of a warpgroup: the first issuer's signature, the warps that issued
/// it (a bit each) with their agents' clocks, the warps that waited for it.
#[derive(Debug, Clone)]
struct Entry {
    sig: Signature,
    issued: u8,
    clocks: [u32; 4],
    waited: u8,
}

/// One warp's share of a `wgmma.mma_async`.
#[derive(Debug, Clone)]
pub(crate) struct WgmmaOp {
    pub mma: WgmmaMma,
    /// The A descriptor (for A from shared memory) and B's.
    pub a_desc: u64,
    pub b_desc: u64,
    pub scale_d: bool,
    pub group: u32,
    /// Its place in the warp's sequence of `wgmma.mma_async`.
    pub seq: u32,
    /// The lanes that issued it.
    pub lanes: u32,
}

pub(crate) fn exec(x: &mut Exec<'_, '_>, op: &Wgmma) -> Result<Flow, SimError> {
    match op {
        Wgmma::Fence => {
            let w = &mut x.w().wgmma;
            w.touched.clear();
            w.fenced = true;
            Ok(Flow::Next)
        }
        Wgmma::CommitGroup => {
            x.w().wgmma.committed += 1;
            Ok(Flow::Next)
        }
        Wgmma::WaitGroup(n) => wait(x, *n),
        Wgmma::MmaAsync(m) => mma(x, m),
    }
}

/// The warpgroup of warp `w` and the number of warps in it.
fn group_of(x: &Exec<'_, '_>, w: usize) -> (usize, u32) {
    let g = w / 4;
    let warps = (x.env.warps as usize - 4 * g).min(4) as u32;
    (g, warps)
}

/// Reports registers of `regs` read while never written in the executing lanes.
fn check_init(x: &mut Exec<'_, '_>, regs: &[Reg]) {
    if !x.env.opts.checks.uninitialized {
        return;
    }
    for &r in regs {
        let bad = x.regs().uninit(r.id, x.mask);
        if bad != 0 {
            x.find(
                FindingKind::UninitializedRegister,
                bad.trailing_zeros(),
                || {
                    format!(
                        "reads register %{} ({}) in lanes {bad:#010x}, where nothing wrote it",
                        r.id, r.ty
                    )
                },
            );
        }
    }
}

fn mma(x: &mut Exec<'_, '_>, m: &WgmmaMma) -> Result<Flow, SimError> {
    let lane = x.mask.trailing_zeros().min(31);
    let live = x.wr().live;
    if x.mask != live && x.env.opts.checks.barriers {
        let mask = x.mask;
        x.find(FindingKind::WarpSync, lane, || {
            format!("wgmma.mma_async run by lanes {mask:#010x} of live lanes {live:#010x}: every thread of the warpgroup must run it")
        });
    }
    let scale_d = match m.scale_d {
        ScaleD::Const(c) => c,
        ScaleD::Pred(p) => {
            check_init(x, &[p]);
            x.reg(p)[lane as usize] & 1 != 0
        }
    };
    let mut used: Vec<Reg> = Vec::new();
    if scale_d {
        used.extend(&m.d);
    }
    let a_desc = match &m.a {
        WgmmaA::Desc(d) => {
            if let Some(r) = d.reg() {
                used.push(r);
            }
            x.scalar(d, Type::U64)?
        }
        WgmmaA::Regs(r) => {
            used.extend(r);
            0
        }
    };
    if let Some(r) = m.b_desc.reg() {
        used.push(r);
    }
    check_init(x, &used);
    let b_desc = x.scalar(&m.b_desc, Type::U64)?;
    // The registers it holds until its wait: the accumulators and A's fragments.
    let mut regs = m.d.clone();
    if let WgmmaA::Regs(r) = &m.a {
        regs.extend(r);
    }
    if x.env.opts.checks.races {
        let w = &x.wr().wgmma;
        let unfenced = !w.fenced;
        let touched = regs.iter().copied().find(|&r| w.was_touched(r));
        if unfenced || touched.is_some() {
            x.find(FindingKind::AsyncRegister, lane, || match touched {
                Some(r) if !unfenced => format!(
                    "register %{} was accessed after the warp's last wgmma.fence: wgmma.fence must order a thread's register accesses before a wgmma.mma_async that uses them",
                    r.id
                ),
                _ => "no wgmma.fence before the warp's first wgmma.mma_async".to_string(),
            });
        }
    }
    let (cta, warp, pc) = (x.cta, x.warp, x.pc);
    let seq = x.wr().wgmma.issued;
    let sig = Signature {
        pc,
        a: a_desc,
        b: b_desc,
        scale_d,
    };
    let (g, _) = group_of(x, warp);
    let mismatch = {
        let wg = &mut x.cl.ctas[cta].warpgroups[g];
        let i = (seq - wg.base) as usize;
        if i == wg.ops.len() {
            wg.ops.push_back(Entry {
                sig,
                issued: 0,
                clocks: [0; 4],
                waited: 0,
            });
        }
        let entry = &mut wg.ops[i];
        entry.issued |= 1 << (warp % 4);
        (entry.sig != sig).then_some(entry.sig)
    };
    if let (Some(first), true) = (mismatch, x.env.opts.checks.barriers) {
        x.find(FindingKind::WarpSync, lane, || {
            format!(
                "the warps of warpgroup {g} disagree on their wgmma.mma_async #{seq}: this warp's (A {a_desc:#x}, B {b_desc:#x}, scale-d {scale_d}) against another's (A {:#x}, B {:#x}, scale-d {}{})",
                first.a,
                first.b,
                first.scale_d,
                if first.pc != pc { ", another instruction" } else { "" }
            )
        });
    }
    let nregs = x.env.prog.regs.len();
    let mask = x.mask;
    for &r in &regs {
        x.w().held.hold(nregs, r, Holder::Wgmma, pc);
    }
    // The accumulators are written when it completes; a chained wgmma on them reads that.
    for &r in &m.d {
        x.w().regs.mark_init(r, mask);
    }
    let w = x.w();
    w.wgmma.issued += 1;
    let group = w.wgmma.committed;
    let agent = x.cl.comps.wgmma(cta as u32, warp as u32);
    let op = WgmmaOp {
        mma: m.clone(),
        a_desc,
        b_desc,
        scale_d,
        group,
        seq,
        lanes: x.mask,
    };
    let clock = issue(x, agent, AsyncKind::Wgmma(Box::new(op)))?;
    let wg = &mut x.cl.ctas[cta].warpgroups[g];
    let i = (seq - wg.base) as usize;
    wg.ops[i].clocks[warp % 4] = clock;
    x.w().wgmma.pending.push(Pending { group, seq, regs });
    // Warps of the group waiting for this one to issue look again.
    x.cl.wake_async();
    Ok(Flow::Next)
}

/// `wgmma.wait_group n`: the warpgroup's operations up to the last of this warp's groups
/// older than the `n` most recent complete (a wgmma-group is the warpgroup's: "wgmma.commit_group
/// creates a new wgmma-group per warpgroup", so the wait covers every warp's share of each
/// operation), and the waiting warp acquires them all.
fn wait(x: &mut Exec<'_, '_>, n: u32) -> Result<Flow, SimError> {
    let (cta, warp) = (x.cta, x.warp);
    let committed = x.wr().wgmma.committed;
    let due = |group: u32| group + n < committed;
    let last_seq = x
        .wr()
        .wgmma
        .pending
        .iter()
        .filter(|p| due(p.group))
        .map(|p| p.seq)
        .max();
    let (g, warps) = group_of(x, warp);
    if let Some(seq) = last_seq {
        // Every warp of the group must have issued its share of those operations.
        let wg = &x.cl.ctas[cta].warpgroups[g];
        let issued = seq
            .checked_sub(wg.base)
            .and_then(|i| wg.ops.get(i as usize))
            .map_or(u8::MAX, |e| e.issued);
        let missing: Vec<u32> = (0..warps)
            .filter(|i| issued & (1 << i) == 0)
            .map(|i| 4 * g as u32 + i)
            .collect();
        let exited: Vec<u32> = missing
            .iter()
            .copied()
            .filter(|&w| x.cl.ctas[cta].warps[w as usize].done())
            .collect();
        if !exited.is_empty() {
            let lane = x.mask.trailing_zeros().min(31);
            if x.env.opts.checks.barriers {
                x.find(FindingKind::WarpSync, lane, || {
                    format!(
                        "wgmma.wait_group waits for a wgmma.mma_async that warps {exited:?} of its warpgroup exited without issuing"
                    )
                });
            }
        } else if !missing.is_empty() {
            return Ok(Flow::Retry(Status::Async(AsyncWait::Warpgroup {
                wg: g as u32,
            })));
        }
        // Complete every warp's share of the operations up to `seq`.
        let first = 4 * g as u32;
        let mut i = 0;
        while i < x.cl.inflight.len() {
            let op = &x.cl.inflight[i];
            let ours = op.cta == cta as u32 && (first..first + warps).contains(&op.warp);
            match &op.kind {
                AsyncKind::Wgmma(w) if ours && w.seq <= seq => {
                    complete_at(x, i)?;
                    i = 0;
                }
                _ => i += 1,
            }
        }
        // Acquire each warp's agent up to its share of `seq` (an agent's clocks grow with its
        // warp's sequence).
        let comps = x.cl.comps;
        let wg = &mut x.cl.ctas[cta].warpgroups[g];
        let clocks = seq
            .checked_sub(wg.base)
            .and_then(|i| wg.ops.get(i as usize))
            .map(|e| e.clocks);
        let upto = (seq + 1).saturating_sub(wg.base) as usize;
        for e in wg.ops.iter_mut().take(upto) {
            e.waited |= 1 << (warp % 4);
        }
        let all = ((1u16 << warps) - 1) as u8;
        while wg
            .ops
            .front()
            .is_some_and(|e| e.issued == all && e.waited == all)
        {
            wg.ops.pop_front();
            wg.base += 1;
        }
        if let Some(clocks) = clocks {
            let w = &mut x.cl.ctas[cta].warps[warp];
            for (j, &c) in clocks.iter().enumerate().take(warps as usize) {
                w.vc.join_one(comps.wgmma(cta as u32, first + j as u32), c);
            }
        }
    }
    let w = x.w();
    let mut released = Vec::new();
    w.wgmma.pending.retain(|p| {
        if due(p.group) {
            released.extend(&p.regs);
            false
        } else {
            true
        }
    });
    for r in released {
        w.held.release(r);
    }
    Ok(Flow::Next)
}

/// Reads an f16/bf16 element of shared memory of the issuing block at byte `at`.
fn element(data: &[u8], at: u32, ty: Type) -> f64 {
    let bits = u16::from_le_bytes([data[at as usize], data[at as usize + 1]]);
    to_f64(ty, u64::from(bits))
}

/// Performs one warp's share: reads its rows of A, all of B and its accumulators, writes the
/// accumulators.
pub(crate) fn complete(
    x: &mut Exec<'_, '_>,
    agent: u32,
    clock: u32,
    vc: &Vc,
    op: &WgmmaOp,
) -> Result<(), SimError> {
    let m = &op.mma;
    let n = m.n as usize;
    let rows0 = 16 * (x.warp as u32 % 4);
    let ty = m.ab_ty;
    let (ma, mb) = (
        if m.tnsp_a { Major::Mn } else { Major::K },
        if m.tnsp_b { Major::Mn } else { Major::K },
    );
    let bdesc = SmemMatrix::wgmma(op.b_desc);
    let adesc = SmemMatrix::wgmma(op.a_desc);
    let lane = op.lanes.trailing_zeros().min(31);
    let rank = x.cl.ctas[x.cta].rank;
    let smem_len = x.cl.ctas[x.cta].smem.len() as u32;
    // The 16-byte chunks the operation reads, and the operands as f64.
    let mut chunks: Vec<u32> = Vec::with_capacity(2 * n + 32);
    let mut a = [[0f64; 16]; 16];
    let mut b = vec![[0f64; 16]; n];
    let mut oob = None;
    {
        let data = &x.cl.ctas[x.cta].smem.data;
        let mut get = |at: u32, chunks: &mut Vec<u32>| -> f64 {
            if at + 2 > smem_len {
                oob = Some(at);
                return 0.0;
            }
            let c = at & !15;
            if chunks.last() != Some(&c) {
                chunks.push(c);
            }
            element(data, at, ty)
        };
        match &m.a {
            WgmmaA::Desc(_) => {
                for (r, row) in a.iter_mut().enumerate() {
                    for (k, v) in row.iter_mut().enumerate() {
                        *v = get(adesc.addr(ma, rows0 + r as u32, k as u32, 2), &mut chunks);
                    }
                }
            }
            WgmmaA::Regs(regs) => {
                let warp = &x.cl.ctas[x.cta].warps[x.warp];
                for l in 0..32 {
                    let (g, t) = (l / 4, l % 4);
                    for (j, reg) in regs.iter().enumerate() {
                        let v = warp.regs.get(reg.id)[l];
                        let (row, col) = (g + 8 * (j % 2), 2 * t + 8 * (j / 2));
                        a[row][col] = to_f64(ty, v & 0xffff);
                        a[row][col + 1] = to_f64(ty, (v >> 16) & 0xffff);
                    }
                }
            }
        }
        for (col, bk) in b.iter_mut().enumerate() {
            for (k, v) in bk.iter_mut().enumerate() {
                *v = get(bdesc.addr(mb, col as u32, k as u32, 2), &mut chunks);
            }
        }
    }
    if let Some(at) = oob {
        x.find(FindingKind::OutOfBounds, lane, || {
            format!(
                "wgmma.mma_async's descriptors reach shared byte {at:#x}, past the block's {smem_len}"
            )
        });
    }
    proxy_read_chunks(x, rank, &mut chunks, agent, clock, vc, lane);
    if m.scale_a < 0 {
        a.iter_mut().flatten().for_each(|v| *v = -*v);
    }
    if m.scale_b < 0 {
        b.iter_mut().flatten().for_each(|v| *v = -*v);
    }
    let f32_acc = m.d_ty == Type::F32;
    let fmt: Format = if f32_acc { F32 } else { F16 };
    // The warp's 16 rows of A B, each element's 16 products summed in order.
    let mut ab = vec![0f64; 16 * n];
    for (r, ar) in a.iter().enumerate() {
        for (c, bc) in b.iter().enumerate() {
            ab[r * n + c] = ar.iter().zip(bc).map(|(p, q)| p * q).sum::<f64>();
        }
    }
    // Element i of lane l: row g + 8 ((i / 2) % 2), column 8 (i / 4) + 2t + i % 2.
    let elems = n / 2;
    let warp = &x.cl.ctas[x.cta].warps[x.warp];
    let d: Vec<&[u64; 32]> = m.d.iter().map(|r| warp.regs.get(r.id)).collect();
    let mut out = vec![[0u64; 32]; m.d.len()];
    for l in lanes(op.lanes) {
        let (g, t) = (l / 4, l % 4);
        for i in 0..elems {
            let (row, col) = (g + 8 * ((i / 2) % 2), 8 * (i / 4) + 2 * t + i % 2);
            let (reg, half) = if f32_acc { (i, 0) } else { (i / 2, i % 2) };
            let c = match (op.scale_d, f32_acc) {
                (false, _) => 0.0,
                (true, true) => f64::from(f32::from_bits(d[reg][l] as u32)),
                (true, false) => F16.to_f64((d[reg][l] >> (16 * half)) & 0xffff),
            };
            out[reg][l] |= round(fmt, ab[row * n + col] + c, 0.0, Mode::Nearest) << (16 * half);
        }
    }
    let w = x.w();
    for (r, v) in m.d.iter().zip(&out) {
        w.regs.set(*r, v, op.lanes);
    }
    Ok(())
}
