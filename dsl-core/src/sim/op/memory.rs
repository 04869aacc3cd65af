//! Loads and stores in every state space the IR names (PTX ISA: ld, st, prefetch), and the
//! address resolution the other memory families share.
//!
//! Each lane's access is checked where it lands: global bytes inside one buffer (else
//! out of bounds), written before they are read, not in a read-only buffer when written; shared
//! bytes inside the block's shared memory, and against the shadow (races, uninitialized reads);
//! every access aligned to its size. Ordered accesses are morally strong: they do not race
//! with each other (nor with atomics), and are not checked against weak ones except that a weak
//! access unordered with an earlier strong write is a race. A lane whose access is out of bounds reads zeros and writes
//! nothing. An ordered access (`.relaxed`, `.acquire`, `.release`, `.volatile`) to shared memory
//! synchronizes through its location (release: the warp's clock is published there; acquire:
//! joined from there); one that reads the same value at the same position twice with no write
//! anywhere in between parks its warp until memory changes (a polling loop), so that a flag
//! nobody raises ends as a deadlock.

use super::super::clock::Vc;
use super::super::env::{
    Symbol, CLUSTER_FLAG, LOCAL_BYTES, LOCAL_WINDOW, PARAM_WINDOW, SHARED_LIMIT, SHARED_WINDOW,
};
use super::super::exec::{Exec, Flow};
use super::super::global::GridView;
use super::super::peers;
use super::super::regs::{lanes, sext, width_mask, Lanes};
use super::super::report::{race_words, FindingKind, SimError, LANES_UNORDERED};
use super::super::shadow::{Accessor, Outcome, SharedMem};
use super::super::state::{ClusterState, PollMark, Status};
use crate::ir::op::Memory;
use crate::ir::{AddrBase, Address, MemOrder, Scope, StateSpace, Type};

/// Where a lane's access lands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Place {
    Global {
        buf: usize,
        off: usize,
    },
    Shared {
        rank: u32,
        off: u32,
    },
    Param {
        off: u32,
    },
    /// The executing lane's own local memory.
    Local {
        off: u32,
    },
}

/// Each lane's address of `a` in `space` (the base register plus the offset; a symbol's
/// address in that space).
pub(crate) fn address(x: &Exec<'_, '_>, a: &Address, space: StateSpace) -> Result<Lanes, SimError> {
    let base: Lanes = match &a.base {
        AddrBase::Reg(r) => *x.reg(*r),
        AddrBase::Symbol(s) => {
            let v = match (x.env.symbols.get(s), space) {
                (Some(Symbol::Param(o)), _) => PARAM_WINDOW + u64::from(*o),
                (Some(Symbol::Shared(o)), StateSpace::Generic) => SHARED_WINDOW + u64::from(*o),
                (Some(Symbol::Shared(o)), _) => u64::from(*o),
                (None, _) => {
                    return Err(SimError::BadOperand {
                        op: x.op,
                        location: x.loc(),
                        detail: format!("`{s}` names no parameter or shared allocation"),
                    })
                }
            };
            [v; 32]
        }
    };
    Ok(base.map(|b| b.wrapping_add(a.offset as u64)))
}

/// Decodes a shared::cluster address into (block rank, offset).
fn shared_cluster(x: &Exec<'_, '_>, a: u64) -> Option<(u32, u32)> {
    let a32 = u32::try_from(a).ok()?;
    if a32 & CLUSTER_FLAG != 0 {
        let rank = (a32 >> 24) & 0x7f;
        ((rank as usize) < x.cl.ctas.len()).then_some((rank, a32 & (SHARED_LIMIT - 1)))
    } else {
        (a32 < SHARED_LIMIT).then_some((x.cl.ctas[x.cta].rank, a32))
    }
}

/// Where `len` bytes at `addr` in `space` land for `lane`, after the bounds check and the
/// check that `addr` is aligned to `align` (`None`: out of bounds, reported).
pub(crate) fn place(
    x: &mut Exec<'_, '_>,
    space: StateSpace,
    addr: u64,
    len: u32,
    align: u32,
    lane: u32,
) -> Result<Option<Place>, SimError> {
    if !addr.is_multiple_of(u64::from(align.max(1))) && x.env.opts.checks.bounds {
        x.find(FindingKind::Misaligned, lane, || {
            format!("{len} bytes at {addr:#x} are not aligned to {align}")
        });
    }
    let (space, a) = match space {
        StateSpace::Generic if (SHARED_WINDOW..SHARED_WINDOW + (1 << 32)).contains(&addr) => {
            (StateSpace::SharedCluster, addr - SHARED_WINDOW)
        }
        StateSpace::Generic if (PARAM_WINDOW..SHARED_WINDOW).contains(&addr) => {
            (StateSpace::Param, addr)
        }
        StateSpace::Generic if (LOCAL_WINDOW..PARAM_WINDOW).contains(&addr) => {
            (StateSpace::Local, addr - LOCAL_WINDOW)
        }
        StateSpace::Generic => (StateSpace::Global, addr),
        s => (s, addr),
    };
    let oob = |x: &mut Exec<'_, '_>, why: String| {
        if x.env.opts.checks.bounds {
            x.find(FindingKind::OutOfBounds, lane, || why);
        }
        Ok(None)
    };
    match space {
        StateSpace::Global => match x.mem.resolve(a, len as usize) {
            Ok((buf, off)) => Ok(Some(Place::Global { buf, off })),
            Err(e) => oob(x, e.0),
        },
        StateSpace::Shared | StateSpace::SharedCluster => {
            let own = x.cl.ctas[x.cta].rank;
            let decoded = if space == StateSpace::Shared {
                shared_cluster(x, a).filter(|&(r, _)| r == own)
            } else {
                shared_cluster(x, a)
            };
            match decoded {
                Some((rank, off))
                    if off as usize + len as usize <= x.cl.ctas[rank as usize].smem.len() =>
                {
                    Ok(Some(Place::Shared { rank, off }))
                }
                _ => {
                    let size = x.env.smem_bytes;
                    oob(
                        x,
                        format!(
                            "{len} bytes at shared address {a:#x} are outside the block's {size} bytes of shared memory"
                        ),
                    )
                }
            }
        }
        StateSpace::Param => {
            let off = a.wrapping_sub(PARAM_WINDOW);
            if off + u64::from(len) <= x.env.params.bytes.len() as u64 {
                Ok(Some(Place::Param { off: off as u32 }))
            } else {
                oob(
                    x,
                    format!("{len} bytes at parameter address {a:#x} are past the parameters"),
                )
            }
        }
        StateSpace::Local => {
            if a + u64::from(len) <= u64::from(LOCAL_BYTES) {
                Ok(Some(Place::Local { off: a as u32 }))
            } else {
                oob(
                    x,
                    format!("{len} bytes at local address {a:#x} are past the {LOCAL_BYTES} bytes of a thread's local memory"),
                )
            }
        }
        StateSpace::Const | StateSpace::Generic => {
            Err(x.unsupported(format!(".{} state space", space.name())))
        }
    }
}

/// Runs `f` on the shared memory of block `rank` and the accessing warp's clock.
pub(crate) fn with_smem<R>(
    cl: &mut ClusterState,
    rank: u32,
    cta: usize,
    warp: usize,
    f: impl FnOnce(&mut SharedMem, &Vc, u32) -> R,
) -> R {
    let rank = rank as usize;
    if rank == cta {
        let c = &mut cl.ctas[cta];
        let w = &c.warps[warp];
        f(&mut c.smem, &w.vc, w.comp)
    } else {
        let (lo, hi) = cl.ctas.split_at_mut(rank.max(cta));
        let (mine, theirs) = if rank > cta {
            (&lo[cta], &mut hi[0])
        } else {
            (&hi[0], &mut lo[rank])
        };
        let w = &mine.warps[warp];
        f(&mut theirs.smem, &w.vc, w.comp)
    }
}

/// Reports what a shared access found.
pub(crate) fn report_shared(
    x: &mut Exec<'_, '_>,
    o: Outcome,
    lane: u32,
    rank: u32,
    len: u32,
    write: bool,
) {
    if let Some(i) = o.uninit {
        x.find(FindingKind::UninitializedShared, lane, || {
            format!("reads shared byte {i:#x} of block rank {rank}, which nothing wrote")
        });
    }
    if let Some(c) = o.conflict {
        let kind = if c.proxy_only {
            FindingKind::AsyncProxyRace
        } else {
            FindingKind::DataRace
        };
        let (verb, what) = race_words(c.write, write);
        let why = if c.proxy_only {
            "the writer did not execute fence.proxy.async between its write and this access"
        } else if c.lanes {
            LANES_UNORDERED
        } else {
            "no barrier or release/acquire orders them"
        };
        x.find_race(kind, lane, c.comp, c.site, c.write, || {
            format!(
                "{verb} {len} bytes at shared {:#x} (block rank {rank}): {what}, {why}",
                c.offset
            )
        });
    }
}

/// Reports a read of `len` bytes at `off` of buffer `buf` that reaches bytes nothing wrote.
pub(crate) fn check_global_read(
    x: &mut Exec<'_, '_>,
    buf: usize,
    off: usize,
    len: usize,
    lane: u32,
) {
    if !x.env.opts.checks.uninitialized {
        return;
    }
    if let Some(i) = x.mem.first_uninit(buf, off, len) {
        let name = x.mem.buffer_name(buf).to_string();
        x.find(FindingKind::UninitializedGlobal, lane, || {
            format!("reads byte {i} of buffer `{name}`, which nothing wrote")
        });
    }
}

/// Reports a write of `len` bytes at `off` of buffer `buf` when the buffer is read-only.
pub(crate) fn check_global_write(
    x: &mut Exec<'_, '_>,
    buf: usize,
    off: usize,
    len: usize,
    lane: u32,
) {
    if x.mem.read_only(buf) && x.env.opts.checks.read_only {
        let name = x.mem.buffer_name(buf).to_string();
        x.find(FindingKind::ReadOnlyWrite, lane, || {
            format!("writes {len} bytes at byte {off} of read-only buffer `{name}`")
        });
    }
}

/// Reads `out.len()` bytes at `p` for `lane`, with the checks; a `strong` (ordered, at that
/// scope) read does not race with other strong accesses its scope reaches.
pub(crate) fn load(
    x: &mut Exec<'_, '_>,
    p: Place,
    lane: u32,
    out: &mut [u8],
    strong: Option<Scope>,
) {
    let len = out.len();
    match p {
        Place::Global { buf, off } => {
            out.copy_from_slice(&x.mem.data(buf)[off..off + len]);
            check_global_read(x, buf, off, len, lane);
            x.global_access((buf, off, len), (true, false), strong, lane, None);
        }
        Place::Param { off } => {
            out.copy_from_slice(&x.env.params.bytes[off as usize..off as usize + len]);
        }
        Place::Local { off } => {
            let check = x.env.opts.checks.uninitialized;
            let m = local(x, lane);
            let at = off as usize..off as usize + len;
            let missing = at
                .clone()
                .find(|&i| !m.init.get(i).copied().unwrap_or(false));
            for (o, i) in out.iter_mut().zip(at) {
                *o = m.data.get(i).copied().unwrap_or(0);
            }
            if let (true, Some(i)) = (check, missing) {
                x.find(FindingKind::UninitializedLocal, lane, || {
                    format!("reads local byte {i:#x}, which the thread never wrote")
                });
            }
        }
        Place::Shared { rank, off } => {
            let (pc, cta, warp) = (x.pc, x.cta, x.warp);
            let o = with_smem(x.cl, rank, cta, warp, |m, vc, comp| {
                out.copy_from_slice(&m.data[off as usize..off as usize + len]);
                if strong.is_some() {
                    return m.strong_read(off, len as u32);
                }
                m.read(off, len as u32, &Accessor::warp(vc, comp, pc, lane))
            });
            report_shared(x, o, lane, rank, len as u32, false);
        }
    }
}

/// Writes `bytes` at `p` for `lane`, with the checks; a `strong` (ordered, at that scope) write
/// does not race with other strong accesses its scope reaches.
pub(crate) fn store(
    x: &mut Exec<'_, '_>,
    p: Place,
    lane: u32,
    bytes: &[u8],
    strong: Option<Scope>,
) {
    let len = bytes.len();
    match p {
        Place::Global { buf, off } => {
            check_global_write(x, buf, off, len, lane);
            x.mem.data_mut(buf)[off..off + len].copy_from_slice(bytes);
            x.mem.mark_init(buf, off, len);
            x.mem.generation += 1;
            x.global_access((buf, off, len), (false, true), strong, lane, None);
        }
        Place::Param { .. } => {}
        Place::Local { off } => {
            let m = local(x, lane);
            let end = off as usize + len;
            if m.data.len() < end {
                m.data.resize(end, 0);
                m.init.resize(end, false);
            }
            m.data[off as usize..end].copy_from_slice(bytes);
            m.init[off as usize..end].fill(true);
        }
        Place::Shared { rank, off } => {
            let (pc, cta, warp) = (x.pc, x.cta, x.warp);
            let o = with_smem(x.cl, rank, cta, warp, |m, vc, comp| {
                m.data[off as usize..off as usize + len].copy_from_slice(bytes);
                let who = Accessor::warp(vc, comp, pc, lane);
                if strong.is_some() {
                    m.strong_write(off, len as u32, &who, false)
                } else {
                    m.write(off, len as u32, &who)
                }
            });
            report_shared(x, o, lane, rank, len as u32, true);
        }
    }
}

/// Lane `lane`'s local memory in the executing warp.
fn local<'a>(x: &'a mut Exec<'_, '_>, lane: u32) -> &'a mut super::super::state::LocalMem {
    let w = x.w();
    if w.local.is_empty() {
        w.local = vec![Default::default(); 32];
    }
    &mut w.local[lane as usize]
}

/// Release and acquire through a shared or global location (the PTX ISA's release and acquire
/// patterns): a release publishes the warp's clock there, an acquire joins it. At a global
/// location the clock is published for the cluster's own acquirers, and a release whose scope
/// reaches the device also publishes, for acquirers in other clusters, its cluster's clock and
/// what it knows of other clusters ([`GridView`]).
pub(crate) fn sync_release(x: &mut Exec<'_, '_>, p: Place, (vc, scope): (&Vc, Scope)) {
    match p {
        Place::Shared { rank, off } => {
            x.cl.sync
                .entry((rank, off))
                .or_insert_with(|| Vc::new(vc.0.len()))
                .join(vc)
        }
        Place::Global { buf, off } => {
            x.cl.global_sync
                .entry((buf, off))
                .or_insert_with(|| Vc::new(vc.0.len()))
                .join(vc);
            if scope >= Scope::Gpu {
                let mut view = x.cl.imports.view(vc);
                view.join_cluster(x.cl.index, vc);
                x.global.publish(buf, off, view);
            }
        }
        Place::Param { .. } | Place::Local { .. } => {}
    }
}

/// What a location published: its own cluster's clock, and (at a global location) what the
/// releases told of other clusters.
pub(crate) fn sync_acquire(x: &Exec<'_, '_>, p: Place) -> Option<(Vc, GridView)> {
    match p {
        Place::Shared { rank, off } => {
            x.cl.sync
                .get(&(rank, off))
                .map(|vc| (vc.clone(), GridView::default()))
        }
        Place::Global { buf, off } => {
            let own = x.cl.global_sync.get(&(buf, off));
            let others = x.global.published(buf, off).map(|v| v.without(x.cl.index));
            if own.is_none() && others.is_none() {
                return None;
            }
            let n = x.wr().vc.0.len();
            Some((
                own.cloned().unwrap_or_else(|| Vc::new(n)),
                others.unwrap_or_default(),
            ))
        }
        Place::Param { .. } | Place::Local { .. } => None,
    }
}

/// What an ordered access (an atomic: `order` `None`, relaxed at the device's scope) does
/// around its data: the clock it releases and the scope it releases at, for a release (or a
/// relaxed access after a release fence: the narrower of the two scopes).
pub(crate) fn release_clock(x: &Exec<'_, '_>, order: Option<MemOrder>) -> Option<(Vc, Scope)> {
    let w = x.wr();
    match order {
        Some(MemOrder::Release(s) | MemOrder::AcqRel(s)) => Some((w.vc.clone(), s)),
        Some(MemOrder::Relaxed(s)) => w.release_vc.clone().map(|vc| (vc, s.min(w.release_scope))),
        None => w.release_vc.clone().map(|vc| (vc, w.release_scope)),
        Some(MemOrder::Acquire(_)) => None,
    }
}

/// After an ordered load at `p`: an acquire joins the location's clock; a relaxed load keeps
/// it for the next acquire fence. What other clusters released there is taken only at the
/// device's scope.
pub(crate) fn acquire_after(x: &mut Exec<'_, '_>, order: Option<MemOrder>, p: Place) {
    let Some((published, mut others)) = sync_acquire(x, p) else {
        return;
    };
    if order.is_some_and(|o| o.scope() < Scope::Gpu) {
        others = GridView::default();
    }
    match order {
        Some(MemOrder::Acquire(_) | MemOrder::AcqRel(_)) => {
            let w = x.w();
            w.vc.join(&published);
            let (comp, clock) = (w.comp, w.vc.0[w.comp as usize]);
            x.cl.imports.push(comp, clock, others);
        }
        Some(MemOrder::Relaxed(_)) => {
            let w = x.w();
            w.pending_acquire.join(&published);
            w.pending_grid.join(&others);
        }
        _ => {}
    }
}

/// A polling read: the same position reading the same value with no write anywhere since
/// parks the warp until memory changes.
pub(crate) fn poll(x: &mut Exec<'_, '_>, value: u64) -> Flow {
    let mark = PollMark {
        pc: x.pc,
        value,
        global: x.mem.generation,
        shared: x.cl.shared_generation(),
    };
    let w = x.w();
    if w.poll == Some(mark) {
        return Flow::Park(Status::Poll {
            global: mark.global,
            shared: mark.shared,
        });
    }
    w.poll = Some(mark);
    Flow::Next
}

/// Extends an element of type `ty` read from memory to its register.
fn widen(ty: Type, v: u64) -> u64 {
    if ty.bits() == 8 && ty.is_signed() {
        sext(v, 8) as u64
    } else {
        v
    }
}

pub(crate) fn exec(x: &mut Exec<'_, '_>, op: &Memory) -> Result<Flow, SimError> {
    match op {
        Memory::Ld {
            space,
            ty,
            dsts,
            addr,
            order,
            ..
        } => {
            let addrs = address(x, addr, *space)?;
            let esize = ty.bytes() as usize;
            let total = esize * dsts.len();
            let mut vals = [[0u64; 32]; 4];
            let mut hash = 0u64;
            for l in lanes(x.mask) {
                let mut buf = [0u8; 16];
                if let Some(p) = place(x, *space, addrs[l], total as u32, total as u32, l as u32)? {
                    peers::note_place(x, &p, l as u32);
                    load(
                        x,
                        p,
                        l as u32,
                        &mut buf[..total],
                        order.map(MemOrder::scope),
                    );
                    if order.is_some() {
                        acquire_after(x, *order, p);
                    }
                }
                for (i, v) in vals.iter_mut().take(dsts.len()).enumerate() {
                    let mut e = [0u8; 8];
                    e[..esize].copy_from_slice(&buf[i * esize..(i + 1) * esize]);
                    v[l] = widen(*ty, u64::from_le_bytes(e));
                    hash = hash.rotate_left(7) ^ v[l];
                }
            }
            for (d, v) in dsts.iter().zip(&vals) {
                x.set(*d, v);
            }
            if order.is_some() {
                return Ok(poll(x, hash));
            }
            Ok(Flow::Next)
        }
        Memory::St {
            space,
            ty,
            srcs,
            addr,
            order,
            ..
        } => {
            let addrs = address(x, addr, *space)?;
            let esize = ty.bytes() as usize;
            let total = esize * srcs.len();
            let mut vals = [[0u64; 32]; 4];
            for (v, s) in vals.iter_mut().zip(srcs) {
                *v = x.read(s, *ty)?;
            }
            // A plain store after a fence releases nothing: the pattern needs an ordered one.
            let release = order.and_then(|o| release_clock(x, Some(o)));
            for l in lanes(x.mask) {
                let mut buf = [0u8; 16];
                for (i, v) in vals.iter().take(srcs.len()).enumerate() {
                    let bits = v[l] & width_mask(*ty);
                    buf[i * esize..(i + 1) * esize].copy_from_slice(&bits.to_le_bytes()[..esize]);
                }
                if let Some(p) = place(x, *space, addrs[l], total as u32, total as u32, l as u32)? {
                    peers::note_place(x, &p, l as u32);
                    store(x, p, l as u32, &buf[..total], order.map(MemOrder::scope));
                    if let Some((vc, scope)) = &release {
                        sync_release(x, p, (vc, *scope));
                    }
                }
            }
            if matches!(order, Some(MemOrder::Release(_))) {
                let comp = x.wr().comp;
                x.w().vc.tick(comp)?;
            }
            Ok(Flow::Next)
        }
        // A hint: no effect on memory, and an invalid address does not fault.
        Memory::Prefetch { .. } => Ok(Flow::Next),
    }
}
