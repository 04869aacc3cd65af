//! Fifth-generation tensor cores (PTX ISA 9.7.16, sm_100a): tensor memory allocation
//! (`tcgen05.alloc`, `dealloc`, `relinquish_alloc_permit`), `tcgen05.mma` from shared-memory
//! descriptors, `tcgen05.commit` to mbarriers, `tcgen05.ld`/`st` and their waits, and the
//! tcgen05 fences.
//!
//! **Tensor memory** ([`Tmem`], 9.7.16.1): per block 128 lanes x 512 columns of 32-bit cells,
//! addressed `lane << 16 | column`, allocated in 32-column units by one warp (with
//! `.cta_group::2`, one warp of each block of the pair together: the first to arrive waits for
//! the other, 9.7.16.5 Table 46), the address written to shared memory as a weak store. An
//! allocation that does not fit waits for a deallocation. Findings: a column count that is not
//! a power of two in 32..=512, an allocation after `relinquish_alloc_permit`, a deallocation of
//! columns not allocated, or of columns whose accesses (by any warp or MMA of the pair) do not
//! happen before the deallocating warp ("must synchronize Tensor Memory accesses before
//! attempting to collectively deallocate", 9.7.16.7.1), columns still allocated when the block
//! exits.
//!
//! **`tcgen05.mma`** (9.7.16.10.9.1) is issued by one thread and performed by that thread's MMA
//! agent, in issue order with the thread's other tcgen05 operations (9.7.16.6.2). Its
//! instruction descriptor (9.7.16.4.2, `.kind::f16`) gives the types (f16 or bf16 in, f16 or f32
//! accumulate), negation, transposes (M- and N-major), M and N; its shared-memory descriptors
//! (9.7.16.4.1) are decoded by [`SmemMatrix`], K = 16. With `.cta_group::1` and M = 128, row
//! `i` of D is lane `i` of the block's tensor memory (Layout D, 9.7.16.10.5.4); with
//! `.cta_group::2` and M = 256 the pair computes one 256 x N product: the even block holds rows
//! 0..128 of A and D and columns 0..N/2 of B, the odd block the rest, each at the same
//! addresses (Layout A, 9.7.16.10.5.1; CUTLASS's `SM100_MMA_F16BF16_2x1SM_SS`). Column `j` of D
//! is column `d + j`; f16 accumulators take a cell's low 16 bits (9.7.16.10.4.1). Shared
//! operands are read in the async proxy. Products are exact, summed in f64 with D, rounded once.
//!
//! **`tcgen05.commit`** (9.7.16.12.1) arrives once on its mbarrier (or, `.multicast::cluster`,
//! on the barrier at the same offset of every block of the mask) when the thread's prior MMAs
//! complete: it releases their agent's operations.
//!
//! **`tcgen05.ld`/`st`** (9.7.16.8, shape `.32x32b`, with `.pack::16b`/`.unpack::16b`): warp `w`
//! of a warpgroup reaches lanes `32 (w % 4) ..` only (9.7.16.8.1); thread `t` accesses lane
//! `base + t`, register `i` column `column + i`. They are performed when issued, but the loaded
//! registers are held until `tcgen05.wait::ld` ([`held`](crate::sim::held)), and a warp's fence
//! before a thread synchronization covers only waited loads and stores.
//!
//! **Ordering** (9.7.16.6): tensor-memory accesses of different threads are ordered by the
//! tcgen05 fences composed with the thread synchronization between them:
//! `tcgen05.fence::before_thread_sync` publishes the warp's accesses so far (its tensor-memory
//! component's clock enters the warp's clock, which its next release carries), and the
//! accesses a warp makes after `tcgen05.fence::after_thread_sync` are ordered after everything
//! its clock held at that fence (they are checked with that clock, not the warp's current one).
//! An MMA is ordered after what its issuer's clock held at its last after-fence; the commit
//! that tracks it publishes it through the mbarrier. Two accesses of one cell that these rules
//! do not order, one of them a write, are a data race.

use super::super::asyncop::AsyncKind;
use super::super::clock::{epoch, Vc, COMMIT_AGENTS};
use super::super::exec::{Exec, Flow};
use super::super::float::{round, Format, Mode, F16, F32};
use super::super::held::Holder;
use super::super::regs::lanes;
use super::super::report::{FindingKind, SimError};
use super::super::shadow::site;
use super::super::smem_matrix::{Major, SmemMatrix};
use super::super::state::{AsyncWait, Status};
use super::super::tmem::{Earlier, Tmem, TmemAccessor, TmemOutcome, COLUMNS, LANES};
use super::arith::to_f64;
use super::bulk::{issue, proxy_read_chunks};
use super::memory::{address, place, store, Place};
use crate::ir::op::{CtaGroup, MmaKind, Tcgen05, Tcgen05A, TmemShape};
use crate::ir::{Address, Operand, Reg, StateSpace, Type};

mod alloc;

pub(crate) use alloc::PairSlot;
use alloc::{alloc, dealloc, pair, pair_ranks, PairOp};

/// A warp's tcgen05 bookkeeping.
#[derive(Debug, Clone, Default)]
pub(crate) struct TcWarp {
    /// The warp's clock at its last `tcgen05.fence::after_thread_sync`.
    pub after_sync: Option<Vc>,
    /// Destinations of `tcgen05.ld`s not yet waited for.
    pub ld_regs: Vec<Reg>,
    /// A `tcgen05.st` not yet waited for.
    pub st_pending: bool,
    /// Per issuing lane, the join of the clocks its MMAs were issued with: what its next
    /// commit's arrival releases (a commit tracks all the thread's prior MMAs).
    pub issued: Vec<(u32, Vc)>,
}

/// A decoded `tcgen05.mma`.
#[derive(Debug, Clone)]
pub(crate) struct Mma {
    group: CtaGroup,
    d_lane: u32,
    d_col: u32,
    a: SmemMatrix,
    b: SmemMatrix,
    major_a: Major,
    major_b: Major,
    m: u32,
    n: u32,
    ab: Type,
    f16_acc: bool,
    neg_a: bool,
    neg_b: bool,
    accumulate: bool,
    /// What the issuer's clock held at its last after-fence.
    tmem_vc: Vc,
}

/// A tcgen05 operation in flight.
#[derive(Debug, Clone)]
pub(crate) enum TcOp {
    Mma(Box<Mma>),
    /// A commit: the mbarriers it arrives on, and what its arrivals release (the MMAs it
    /// tracks, and what they were ordered after: causality is transitive).
    Commit(Vec<(u32, u32)>, Vc),
}

/// One thread's tcgen05 operation in flight.
#[derive(Debug, Clone)]
pub(crate) struct MmaOp {
    pub lane: u32,
    pub op: TcOp,
}

impl MmaOp {
    /// A phrase for deadlock reports.
    pub fn describe(&self) -> String {
        match &self.op {
            TcOp::Mma(m) => format!("lane {}, an MMA of {} x {}", self.lane, m.m, m.n),
            TcOp::Commit(bars, _) => format!(
                "lane {}, a commit to the mbarrier at shared {:#x} of block rank {}",
                self.lane, bars[0].1, bars[0].0
            ),
        }
    }
}

pub(crate) fn exec(x: &mut Exec<'_, '_>, op: &Tcgen05) -> Result<Flow, SimError> {
    match op {
        Tcgen05::Alloc {
            cta_group,
            dst,
            ncols,
        } => alloc(x, *cta_group, dst, ncols),
        Tcgen05::Dealloc {
            cta_group,
            taddr,
            ncols,
        } => dealloc(x, *cta_group, taddr, ncols),
        Tcgen05::RelinquishAllocPermit { cta_group } => match cta_group {
            CtaGroup::One => {
                tmem(x).relinquished = true;
                Ok(Flow::Next)
            }
            CtaGroup::Two => pair(x, PairOp::Relinquish),
        },
        Tcgen05::Mma {
            cta_group,
            kind,
            d_tmem,
            a,
            b_desc,
            idesc,
            enable_input_d,
        } => mma(
            x,
            *cta_group,
            *kind,
            d_tmem,
            a,
            b_desc,
            idesc,
            enable_input_d,
        ),
        Tcgen05::Commit {
            mbar, multicast, ..
        } => commit(x, mbar, multicast.as_ref()),
        Tcgen05::Ld {
            shape,
            num,
            pack16,
            dsts,
            taddr,
        } => ld(x, *shape, *num, *pack16, dsts, taddr),
        Tcgen05::St {
            shape,
            num,
            unpack16,
            taddr,
            srcs,
        } => st(x, *shape, *num, *unpack16, taddr, srcs),
        Tcgen05::WaitLd => {
            let w = x.w();
            let regs = std::mem::take(&mut w.tc.ld_regs);
            for r in regs {
                w.held.release(r);
            }
            Ok(Flow::Next)
        }
        Tcgen05::WaitSt => {
            x.w().tc.st_pending = false;
            Ok(Flow::Next)
        }
        Tcgen05::FenceBeforeThreadSync => {
            let (cta, warp) = (x.cta as u32, x.warp as u32);
            let w = x.wr();
            if x.env.prog.agents.tmem && w.tc.ld_regs.is_empty() && !w.tc.st_pending {
                let t = x.cl.comps.tmem(cta, warp);
                let now = x.cl.agent_clock[t as usize] + 1;
                x.cl.agent_clock[t as usize] = now;
                x.w().vc.join_one(t, now);
            }
            Ok(Flow::Next)
        }
        Tcgen05::FenceAfterThreadSync => {
            let w = x.w();
            w.tc.after_sync = Some(w.vc.clone());
            Ok(Flow::Next)
        }
    }
}

/// The executing block's tensor memory.
fn tmem<'a>(x: &'a mut Exec<'_, '_>) -> &'a mut Tmem {
    let rank = x.cta as u32;
    tmem_of(x, rank)
}

/// Block `rank`'s tensor memory (made on first use).
fn tmem_of<'a>(x: &'a mut Exec<'_, '_>, rank: u32) -> &'a mut Tmem {
    let checks = x.env.opts.checks.races || x.env.opts.checks.uninitialized;
    x.cl.ctas[rank as usize]
        .tmem
        .get_or_insert_with(|| Box::new(Tmem::new(checks)))
}

/// The first executing lane's value of `o`, and a finding when the lanes disagree.
fn uniform(x: &mut Exec<'_, '_>, o: &Operand, ty: Type, what: &str) -> Result<u64, SimError> {
    let v = x.read(o, ty)?;
    let first = x.mask.trailing_zeros().min(31) as usize;
    if let Some(l) = lanes(x.mask).find(|&l| v[l] != v[first]) {
        let what = what.to_string();
        x.find(FindingKind::WarpSync, l as u32, || {
            format!(
                "the lanes of the warp give different {what} ({:#x} and {:#x})",
                v[first], v[l]
            )
        });
    }
    Ok(v[first])
}

#[allow(clippy::too_many_arguments)]
fn mma(
    x: &mut Exec<'_, '_>,
    group: CtaGroup,
    kind: MmaKind,
    d_tmem: &Operand,
    a: &Tcgen05A,
    b_desc: &Operand,
    idesc: &Operand,
    enable_input_d: &Operand,
) -> Result<Flow, SimError> {
    if kind != MmaKind::F16 {
        return Err(x.unsupported(format!(".kind::{}", kind.name())));
    }
    let Tcgen05A::Desc(a_desc) = a else {
        return Err(x.unsupported("A from tensor memory"));
    };
    let (d, ad, bd, id) = (
        x.read(d_tmem, Type::U32)?,
        x.read(a_desc, Type::U64)?,
        x.read(b_desc, Type::U64)?,
        x.read(idesc, Type::U32)?,
    );
    let acc = x.read(enable_input_d, Type::Pred)?;
    let (cta, warp) = (x.cta as u32, x.warp as u32);
    for l in lanes(x.mask) {
        let bad = |detail: String| SimError::BadOperand {
            op: x.op,
            location: x.loc(),
            detail,
        };
        let i = id[l] as u32;
        if (i >> 2) & 1 != 0 {
            return Err(x.unsupported("a sparse instruction descriptor"));
        }
        let f16_acc = match (i >> 4) & 3 {
            0 => true,
            1 => false,
            t => {
                return Err(bad(format!(
                    "instruction descriptor {i:#010x}: D type {t} is not f16 or f32"
                )))
            }
        };
        let ab = match ((i >> 7) & 7, (i >> 10) & 7) {
            (0, 0) => Type::F16,
            (1, 1) => Type::BF16,
            (ta, tb) => {
                return Err(bad(format!(
                    "instruction descriptor {i:#010x}: A type {ta} and B type {tb} (kind::f16 takes f16 (0) or bf16 (1), the same for both)"
                )))
            }
        };
        let (n, m) = (((i >> 17) & 0x3f) << 3, ((i >> 24) & 0x1f) << 4);
        let m_ok = match group {
            CtaGroup::One => m == 128,
            CtaGroup::Two => m == 256,
        };
        if !m_ok {
            return Err(x.unsupported(format!("M = {m} with .cta_group::{}", group.count())));
        }
        if n == 0 || n % 16 != 0 || n > 256 {
            return Err(bad(format!(
                "instruction descriptor {i:#010x}: N = {n} is not a multiple of 16 in 16..=256"
            )));
        }
        let (sa, sb) = (
            SmemMatrix::tcgen05(ad[l]).map_err(&bad)?,
            SmemMatrix::tcgen05(bd[l]).map_err(&bad)?,
        );
        let tmem_vc = x
            .wr()
            .tc
            .after_sync
            .clone()
            .unwrap_or_else(|| Vc::new(x.cl.comps.len()));
        let op = Mma {
            group,
            d_lane: (d[l] >> 16) as u32,
            d_col: (d[l] & 0xffff) as u32,
            a: sa,
            b: sb,
            major_a: if (i >> 15) & 1 != 0 {
                Major::Mn
            } else {
                Major::K
            },
            major_b: if (i >> 16) & 1 != 0 {
                Major::Mn
            } else {
                Major::K
            },
            m,
            n,
            ab,
            f16_acc,
            neg_a: (i >> 13) & 1 != 0,
            neg_b: (i >> 14) & 1 != 0,
            accumulate: acc[l] & 1 != 0,
            tmem_vc,
        };
        let agent = x.cl.comps.mma(cta, warp);
        let kind = AsyncKind::Tcgen05(Box::new(MmaOp {
            lane: l as u32,
            op: TcOp::Mma(Box::new(op)),
        }));
        let clock = issue(x, agent, kind)?;
        let mut vc = x.wr().vc.clone();
        vc.join_one(agent, clock);
        let tc = &mut x.w().tc;
        match tc.issued.iter_mut().find(|(lane, _)| *lane == l as u32) {
            Some((_, v)) => v.join(&vc),
            None => tc.issued.push((l as u32, vc)),
        }
    }
    Ok(Flow::Next)
}

fn commit(
    x: &mut Exec<'_, '_>,
    mbar: &Address,
    multicast: Option<&Operand>,
) -> Result<Flow, SimError> {
    let bars = address(x, mbar, StateSpace::SharedCluster)?;
    let masks = multicast.map(|m| x.read(m, Type::U16)).transpose()?;
    let blocks = x.cl.ctas.len() as u32;
    let (cta, warp) = (x.cta as u32, x.warp as u32);
    for l in lanes(x.mask) {
        let lane = l as u32;
        let Some(Place::Shared { rank, off }) =
            place(x, StateSpace::SharedCluster, bars[l], 8, 8, lane)?
        else {
            continue;
        };
        let targets: Vec<(u32, u32)> = match &masks {
            Some(m) => (0..blocks)
                .filter(|r| m[l] & (1 << r) != 0)
                .map(|r| (r, off))
                .collect(),
            None => vec![(rank, off)],
        };
        if targets.is_empty() {
            continue;
        }
        for &bar in &targets {
            super::mbarrier::after_init(x, bar, lane, super::mbarrier::User::AsyncProxy);
        }
        let n = x.cl.comps.len();
        let release = match x.wr().tc.issued.iter().find(|(l, _)| *l == lane) {
            Some((_, v)) => v.clone(),
            None => Vc::new(n),
        };
        if !x.env.prog.agents.mma {
            // A program without MMAs: the commit tracks nothing and arrives at once.
            for bar in targets {
                crate::sim::peers::note(x, bar.0, lane, None);
                super::mbarrier::agent_arrive(x, bar, lane, &release);
            }
            continue;
        }
        let agent = x.cl.comps.mma(cta, warp);
        // The arrival is the tensor cores', at the commit's completion, at a clock of its
        // own: a wait on it learns that this commit has landed (what a peer's exit must come
        // after), not that the warp's other commits have.
        let next = &mut x.cl.ctas[x.cta].next_commit;
        let lands = x.cl.comps.commit(cta, *next % COMMIT_AGENTS);
        *next = next.wrapping_add(1);
        let landing = x.cl.agent_tick(lands)?;
        let mut release = release;
        release.join_one(lands, landing);
        let ranks: Vec<u32> = targets.iter().map(|&(r, _)| r).collect();
        let kind = AsyncKind::Tcgen05(Box::new(MmaOp {
            lane,
            op: TcOp::Commit(targets, release),
        }));
        issue(x, agent, kind)?;
        for r in ranks {
            crate::sim::peers::note(x, r, lane, Some((lands, landing)));
        }
    }
    Ok(Flow::Next)
}

/// The tensor memory a warp's `.32x32b` access reaches: its lane base and first column, and
/// whether it is allowed (a finding otherwise).
fn data_path(
    x: &mut Exec<'_, '_>,
    shape: TmemShape,
    taddr: &Operand,
    cols: u32,
) -> Result<Option<(u32, u32)>, SimError> {
    if shape != TmemShape::S32x32b {
        return Err(x.unsupported(format!("shape .{}", shape.name())));
    }
    let a = uniform(x, taddr, Type::U32, "tensor-memory addresses")? as u32;
    let (base, col) = (a >> 16, a & 0xffff);
    let lane = x.mask.trailing_zeros().min(31);
    let quarter = 32 * (x.warp as u32 % 4);
    if base != quarter {
        let w = x.warp;
        x.find(FindingKind::TensorMemory, lane, || {
            format!(
                "warp {w} accesses tensor-memory lanes {base}..{}: a warp of a warpgroup reaches lanes {quarter}..{} only",
                base + 32,
                quarter + 32
            )
        });
        if base + 32 > LANES {
            return Ok(None);
        }
    }
    if !tmem(x).is_allocated(col, cols) {
        x.find(FindingKind::TensorMemory, lane, || {
            format!(
                "columns {col}..{} of tensor memory are not allocated",
                col + cols
            )
        });
        return Ok(None);
    }
    Ok(Some((base, col)))
}

/// The accessor of the executing warp's tensor-memory access.
fn warp_access<R>(x: &mut Exec<'_, '_>, f: impl FnOnce(&mut Tmem, &TmemAccessor<'_>) -> R) -> R {
    let (cta, warp) = (x.cta as u32, x.warp as u32);
    let t = x.cl.comps.tmem(cta, warp);
    let now = x.cl.agent_clock[t as usize] + 1;
    let zero;
    let vc = match &x.cl.ctas[x.cta].warps[x.warp].tc.after_sync {
        Some(v) => v.clone(),
        None => {
            zero = Vc::new(x.cl.comps.len());
            zero
        }
    };
    let who = TmemAccessor {
        epoch: epoch(t, now),
        vc: &vc,
        site: site(x.pc, 0),
    };
    let checks = x.env.opts.checks.races || x.env.opts.checks.uninitialized;
    let m = x.cl.ctas[x.cta]
        .tmem
        .get_or_insert_with(|| Box::new(Tmem::new(checks)));
    f(m, &who)
}

/// Reports what a tensor-memory access found.
fn report_tmem(x: &mut Exec<'_, '_>, o: TmemOutcome, lane: u32, write: bool) {
    if let (Some((l, c)), true) = (o.uninit, x.env.opts.checks.uninitialized) {
        x.find(FindingKind::UninitializedTensorMemory, lane, || {
            format!("reads tensor-memory lane {l}, column {c}, which nothing wrote")
        });
    }
    if let (Some(c), true) = (o.conflict, x.env.opts.checks.races) {
        let verb = if write { "writes" } else { "reads" };
        let what = match (c.earlier, write) {
            (Earlier::Alloc, _) => {
                x.find_race(FindingKind::DataRace, lane, c.comp, c.site, true, || {
                    format!(
                        "{verb} tensor-memory lane {}, column {}, not ordered after the columns' tcgen05.alloc: tcgen05.fence::before_thread_sync in the allocating warp, a synchronization, then tcgen05.fence::after_thread_sync in this one",
                        c.lane, c.column
                    )
                });
                return;
            }
            (Earlier::Write, true) => "write after write",
            (Earlier::Write, false) => "read after write",
            (Earlier::Read, _) => "write after read",
        };
        let wrote = c.earlier == Earlier::Write;
        x.find_race(FindingKind::DataRace, lane, c.comp, c.site, wrote, || {
            format!(
                "{verb} tensor-memory lane {}, column {}: {what}, not ordered by tcgen05.fence::before_thread_sync, a synchronization and tcgen05.fence::after_thread_sync (or the MMA's commit)",
                c.lane, c.column
            )
        });
    }
}

fn ld(
    x: &mut Exec<'_, '_>,
    shape: TmemShape,
    num: u32,
    pack: bool,
    dsts: &[Reg],
    taddr: &Operand,
) -> Result<Flow, SimError> {
    let cols = if pack { 2 * num } else { num };
    let mut out = vec![[0u64; 32]; dsts.len()];
    if let Some((base, col)) = data_path(x, shape, taddr, cols)? {
        let mask = x.mask;
        let mut outcomes = Vec::new();
        warp_access(x, |m, who| {
            let mut vals = vec![0u32; cols as usize];
            for t in lanes(mask) {
                let o = m.access(
                    base + t as u32,
                    col,
                    &mut vals,
                    false,
                    &TmemAccessor {
                        site: site(who.site >> 5, t as u32),
                        ..*who
                    },
                );
                outcomes.push((t as u32, o));
                for (i, v) in out.iter_mut().enumerate() {
                    v[t] = if pack {
                        u64::from(vals[2 * i] & 0xffff)
                            | (u64::from(vals[2 * i + 1] & 0xffff) << 16)
                    } else {
                        u64::from(vals[i])
                    };
                }
            }
        });
        for (t, o) in outcomes {
            report_tmem(x, o, t, false);
        }
    }
    for (r, v) in dsts.iter().zip(&out) {
        x.set(*r, v);
    }
    let (nregs, pc) = (x.env.prog.regs.len(), x.pc);
    let w = x.w();
    for &r in dsts {
        w.held.hold(nregs, r, Holder::TmemLd, pc);
        w.tc.ld_regs.push(r);
    }
    Ok(Flow::Next)
}

fn st(
    x: &mut Exec<'_, '_>,
    shape: TmemShape,
    num: u32,
    unpack: bool,
    taddr: &Operand,
    srcs: &[Operand],
) -> Result<Flow, SimError> {
    let cols = if unpack { 2 * num } else { num };
    let vals: Vec<[u64; 32]> = srcs
        .iter()
        .map(|o| x.read(o, Type::B32))
        .collect::<Result<_, _>>()?;
    if let Some((base, col)) = data_path(x, shape, taddr, cols)? {
        let mask = x.mask;
        let mut outcomes = Vec::new();
        warp_access(x, |m, who| {
            let mut cells = vec![0u32; cols as usize];
            for t in lanes(mask) {
                for (i, v) in vals.iter().enumerate() {
                    if unpack {
                        cells[2 * i] = (v[t] & 0xffff) as u32;
                        cells[2 * i + 1] = ((v[t] >> 16) & 0xffff) as u32;
                    } else {
                        cells[i] = v[t] as u32;
                    }
                }
                let o = m.access(
                    base + t as u32,
                    col,
                    &mut cells,
                    true,
                    &TmemAccessor {
                        site: site(who.site >> 5, t as u32),
                        ..*who
                    },
                );
                outcomes.push((t as u32, o));
            }
        });
        for (t, o) in outcomes {
            report_tmem(x, o, t, true);
        }
    }
    x.w().tc.st_pending = true;
    Ok(Flow::Next)
}

/// Performs a tcgen05 operation in flight: an MMA, or a commit's arrivals.
pub(crate) fn complete(
    x: &mut Exec<'_, '_>,
    agent: u32,
    clock: u32,
    vc: &Vc,
    op: &MmaOp,
) -> Result<(), SimError> {
    match &op.op {
        TcOp::Commit(bars, release) => {
            let _ = (agent, clock, vc);
            for &bar in bars {
                super::mbarrier::agent_arrive(x, bar, op.lane, release);
            }
            Ok(())
        }
        TcOp::Mma(m) => perform(x, agent, clock, vc, op.lane, m),
    }
}

/// Reads an MMA operand's rows (`rows` of them, from `row0`) of K = 16 from block `rank`'s
/// shared memory through `desc`, with the async-proxy checks.
#[allow(clippy::too_many_arguments)]
fn operand(
    x: &mut Exec<'_, '_>,
    rank: u32,
    desc: &SmemMatrix,
    major: Major,
    rows: u32,
    ty: Type,
    neg: bool,
    agent: u32,
    clock: u32,
    vc: &Vc,
    lane: u32,
    out: &mut Vec<[f64; 16]>,
) {
    let smem = &x.cl.ctas[rank as usize].smem;
    let len = smem.len() as u32;
    let mut chunks = Vec::with_capacity(2 * rows as usize);
    let mut oob = None;
    for r in 0..rows {
        let mut row = [0f64; 16];
        for (k, v) in row.iter_mut().enumerate() {
            let at = desc.addr(major, r, k as u32, 2);
            if at + 2 > len {
                oob = Some(at);
                continue;
            }
            let c = at & !15;
            if chunks.last() != Some(&c) {
                chunks.push(c);
            }
            let bits = u16::from_le_bytes([smem.data[at as usize], smem.data[at as usize + 1]]);
            let f = to_f64(ty, u64::from(bits));
            *v = if neg { -f } else { f };
        }
        out.push(row);
    }
    if let Some(at) = oob {
        x.find(FindingKind::OutOfBounds, lane, || {
            format!("tcgen05.mma's descriptors reach shared byte {at:#x} of block rank {rank}, past its {len} bytes")
        });
    }
    proxy_read_chunks(x, rank, &mut chunks, agent, clock, vc, lane);
}

fn perform(
    x: &mut Exec<'_, '_>,
    agent: u32,
    clock: u32,
    vc: &Vc,
    lane: u32,
    m: &Mma,
) -> Result<(), SimError> {
    let own = x.cl.ctas[x.cta].rank;
    let ranks = pair_ranks(own, m.group, m.m);
    let per = m.m / ranks.len() as u32;
    let bper = m.n / ranks.len() as u32;
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for &r in &ranks {
        operand(
            x, r, &m.a, m.major_a, per, m.ab, m.neg_a, agent, clock, vc, lane, &mut a,
        );
    }
    for &r in &ranks {
        operand(
            x, r, &m.b, m.major_b, bper, m.ab, m.neg_b, agent, clock, vc, lane, &mut b,
        );
    }
    let fmt: Format = if m.f16_acc { F16 } else { F32 };
    let site = site(x.pc, lane);
    for (i, &r) in ranks.iter().enumerate() {
        if m.d_lane + per > LANES || !tmem_of(x, r).is_allocated(m.d_col, m.n) {
            x.find(FindingKind::TensorMemory, lane, || {
                format!(
                    "tcgen05.mma's D (lanes {}.., columns {}..{}) is not allocated in block rank {r}",
                    m.d_lane,
                    m.d_col,
                    m.d_col + m.n
                )
            });
            continue;
        }
        let who = TmemAccessor {
            epoch: epoch(agent, clock),
            vc: &m.tmem_vc,
            site,
        };
        let mut outcomes = Vec::new();
        let t = tmem_of(x, r);
        let mut row = vec![0u32; m.n as usize];
        for rr in 0..per {
            let ai = &a[(i as u32 * per + rr) as usize];
            let l = m.d_lane + rr;
            if m.accumulate {
                outcomes.push((t.access(l, m.d_col, &mut row, false, &who), false));
            }
            for (j, cell) in row.iter_mut().enumerate() {
                let c = if !m.accumulate {
                    0.0
                } else if m.f16_acc {
                    F16.to_f64(u64::from(*cell & 0xffff))
                } else {
                    f64::from(f32::from_bits(*cell))
                };
                let bj = &b[j];
                let s: f64 = (0..16).map(|k| ai[k] * bj[k]).sum::<f64>() + c;
                *cell = round(fmt, s, 0.0, Mode::Nearest) as u32;
            }
            outcomes.push((t.access(l, m.d_col, &mut row, true, &who), true));
        }
        for (o, write) in outcomes {
            if o.conflict.is_some() || o.uninit.is_some() {
                report_tmem(x, o, lane, write);
            }
        }
    }
    Ok(())
}

/// When a block exits: its tensor-memory columns must all have been freed (9.7.16.1.2).
pub(crate) fn leftover(t: &Tmem) -> Option<String> {
    (!t.allocations.is_empty()).then(|| {
        format!(
            "the block exits with tensor-memory columns still allocated: {}",
            t.allocations
                .iter()
                .map(|a| format!("{} from column {}", a.n, a.col))
                .collect::<Vec<_>>()
                .join(", ")
        )
    })
}
