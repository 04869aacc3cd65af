//! Shared-memory barriers (PTX ISA: Parallel Synchronization and Communication Instructions:
//! mbarrier; *Contents of the mbarrier object*, *Phase completion*).
//!
//! An mbarrier object holds its current phase, the arrivals still pending in it, the arrivals
//! each phase expects, and a transaction count. `arrive` (by each executing thread) lowers the
//! pending count, `expect_tx` raises the transaction count and complete-tx (the asynchronous
//! copies that name the barrier, when they complete) lowers it; when both reach zero the phase
//! completes: the phase advances, the pending count resets to the expected count.
//! `try_wait.parity p` / `test_wait.parity p` are true once the phase of parity `p` (the
//! current phase or the one before it) has completed. The simulator's `try_wait` does not time
//! out: a warp whose phase has not completed waits until it does (a phase that cannot come
//! ends as a deadlock, reported with the barrier's phase, pending arrivals and transaction
//! count); `test_wait` returns at once, and a loop of it that sees nothing change parks like
//! any polling loop.
//!
//! Memory order: an arrive releases (unless the phase has no other effect: the state is the
//! object's) and a wait that returns true acquires, so the arrivals' prior accesses happen
//! before the waiters' later ones (the ordering a pipeline's full and empty barriers rely on),
//! also across the blocks of a cluster for remote arrivals.
//!
//! Checks ([`FindingKind::Mbarrier`]): an operation on an address that holds no initialized
//! mbarrier, an init of a live one, a count out of range, arrivals past the pending count, a
//! transaction count out of its range; and an operation whose warp the `mbarrier.init` does not
//! happen before (the init is a write of the object, PTX ISA *Memory Consistency Model*: an
//! arrive, a wait or a TMA naming the barrier from another warp needs a barrier, or
//! `fence.mbarrier_init` and a cluster barrier for another block, between them). Where the
//! simulator's schedule runs the operation first it finds no initialized mbarrier; where it runs
//! the init first, this check reports the same defect with the init as the other party, so
//! that neither order of a racing init passes.

use super::super::clock::{clock_of, comp_of, Vc};
use super::super::exec::{Exec, Flow};
use super::super::regs::lanes;
use super::super::report::{FindingKind, SimError};
use super::super::shadow::site;
use super::super::state::Status;
use super::memory::{address, place, poll, Place};
use crate::ir::op::Mbarrier;
use crate::ir::{Address, Operand, StateSpace, Type};

/// The largest arrival count and transaction count magnitude of an mbarrier (2^20 - 1).
const LIMIT: i64 = (1 << 20) - 1;

/// An mbarrier object's state.
#[derive(Debug, Clone)]
pub(crate) struct MbarState {
    pub expected: u32,
    pub pending: u32,
    pub tx: i64,
    pub phase: u64,
    /// The join of this phase's releases so far.
    pub vc: Vc,
    /// The clock released by the last completed phase of each parity.
    pub done: [Vc; 2],
    /// The `mbarrier.init`: its warp's epoch and its site (op and lane), which every later
    /// operation on the barrier must happen after.
    pub init: (u32, u32),
}

impl MbarState {
    /// A sentence for deadlock reports.
    pub fn describe(&self) -> String {
        format!(
            "phase {} (parity {}), {} of {} arrivals pending, transaction count {}",
            self.phase,
            self.phase & 1,
            self.pending,
            self.expected,
            self.tx
        )
    }
}

/// An mbarrier's (block rank, shared offset).
type Key = (u32, u32);

/// The lane and barrier of each executing lane.
fn places(
    x: &mut Exec<'_, '_>,
    addr: &Address,
    space: StateSpace,
) -> Result<Vec<(u32, Key)>, SimError> {
    let addrs = address(x, addr, space)?;
    let mut out = Vec::new();
    for l in lanes(x.mask) {
        if let Some(Place::Shared { rank, off }) = place(x, space, addrs[l], 8, 8, l as u32)? {
            crate::sim::peers::note(x, rank, l as u32, None);
            out.push((l as u32, (rank, off)));
        }
    }
    Ok(out)
}

/// Reports an operation on an address that holds no mbarrier (false then), or on one whose
/// init does not happen before the executing warp ([`after_init`]).
fn exists(x: &mut Exec<'_, '_>, key: Key, lane: u32) -> bool {
    if x.cl.mbarriers.contains_key(&key) {
        after_init(x, key, lane, User::Thread);
        return true;
    }
    x.find(FindingKind::Mbarrier, lane, || {
        format!(
            "no initialized mbarrier at shared {:#x} of block rank {}",
            key.1, key.0
        )
    });
    false
}

/// Who acts on an mbarrier: a thread (an arrive, an expect-tx, a wait), or the async proxy on
/// behalf of the thread that issued the operation (a TMA load's complete-tx, a
/// `tcgen05.commit`'s arrival).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum User {
    Thread,
    AsyncProxy,
}

/// Reports an operation of the executing warp on the barrier at `key` that its `mbarrier.init`
/// does not happen before: the init races it. Also for an operation that names the barrier
/// now and acts on it later (a TMA load's complete-tx, a `tcgen05.commit`'s arrival), checked
/// at its issue; a barrier that is not there yet is the completion's finding, not this one's.
///
/// The async proxy sees an init only once a fence of the initializing thread published it
/// (`fence.mbarrier_init`, or `fence.proxy.async`, which publishes every generic write;
/// PTX ISA, "Proxies" and "Memory barrier: fence.mbarrier_init"); a barrier orders the issuing
/// thread after that fence, not after the init alone.
pub(crate) fn after_init(x: &mut Exec<'_, '_>, key: Key, lane: u32, user: User) {
    let Some(&MbarState {
        init: (epoch, init_site),
        ..
    }) = x.cl.mbarriers.get(&key)
    else {
        return;
    };
    let w = x.wr();
    let ordered = w.vc.covers(epoch);
    let published = user == User::Thread || {
        let (comp, clock) = (comp_of(epoch), clock_of(epoch));
        x.cl.fences.fenced(comp, clock, &w.vc) || x.cl.init_fences.fenced(comp, clock, &w.vc)
    };
    if ordered && published {
        return;
    }
    x.find_race(
        FindingKind::Mbarrier,
        lane,
        comp_of(epoch),
        init_site,
        true,
        || {
            let at = format!(
                "the mbarrier at shared {:#x} of block rank {}",
                key.1, key.0
            );
            if ordered {
                format!(
                    "the async proxy completes on {at}, whose mbarrier.init no \
                     fence.mbarrier_init (or fence.proxy.async) of its thread published before \
                     this issue: the TMA load or tcgen05.commit may find it uninitialized"
                )
            } else {
                format!(
                    "{at} is used before its mbarrier.init is ordered before this warp: no \
                     barrier (bar.sync after the init; for another block, fence.mbarrier_init \
                     and barrier.cluster) between them"
                )
            }
        },
    );
}

pub(crate) fn exec(x: &mut Exec<'_, '_>, op: &Mbarrier) -> Result<Flow, SimError> {
    match op {
        Mbarrier::Init { addr, count } => {
            let counts = x.read(count, Type::U32)?;
            for (lane, key) in places(x, addr, StateSpace::Shared)? {
                let c = counts[lane as usize] as i64;
                if !(1..=LIMIT).contains(&c) {
                    x.find(FindingKind::Mbarrier, lane, || {
                        format!("mbarrier.init count {c} is not in 1..=2^20-1")
                    });
                }
                if x.cl.mbarriers.contains_key(&key) {
                    x.find(FindingKind::Mbarrier, lane, || {
                        "mbarrier.init of a live mbarrier (invalidate it first)".to_string()
                    });
                }
                let n = x.cl.comps.len();
                let c = c.clamp(1, LIMIT) as u32;
                let init = {
                    let w = x.w();
                    (w.vc.epoch(w.comp), site(x.pc, lane))
                };
                x.cl.mbarriers.insert(
                    key,
                    MbarState {
                        expected: c,
                        pending: c,
                        tx: 0,
                        phase: 0,
                        vc: Vc::new(n),
                        done: [Vc::new(n), Vc::new(n)],
                        init,
                    },
                );
                touch(x, key);
            }
            Ok(Flow::Next)
        }
        Mbarrier::Inval { addr } => {
            for (lane, key) in places(x, addr, StateSpace::Shared)? {
                if exists(x, key, lane) {
                    x.cl.mbarriers.remove(&key);
                    touch(x, key);
                }
            }
            Ok(Flow::Next)
        }
        Mbarrier::Arrive {
            state,
            space,
            addr,
            count,
            ..
        } => {
            let counts = match count {
                Some(c) => x.read(c, Type::U32)?,
                None => [1; 32],
            };
            let tokens = arrive_all(x, addr, *space, |l| (counts[l], 0))?;
            if let Some(s) = state {
                x.set(*s, &tokens);
            }
            Ok(Flow::Next)
        }
        Mbarrier::ArriveExpectTx {
            state,
            space,
            addr,
            tx_count,
            ..
        } => {
            let tx = x.read(tx_count, Type::U32)?;
            let tokens = arrive_all(x, addr, *space, |l| (1, tx[l]))?;
            if let Some(s) = state {
                x.set(*s, &tokens);
            }
            Ok(Flow::Next)
        }
        Mbarrier::ExpectTx {
            space,
            addr,
            tx_count,
            ..
        } => {
            let tx = x.read(tx_count, Type::U32)?;
            for (lane, key) in places(x, addr, *space)? {
                if exists(x, key, lane) {
                    change_tx(x, key, lane, tx[lane as usize] as i64);
                }
            }
            Ok(Flow::Next)
        }
        Mbarrier::TryWaitParity {
            done, addr, parity, ..
        } => {
            let Tested {
                done: complete,
                waiting,
            } = test(x, addr, parity)?;
            if let Some((key, phase)) = waiting {
                return Ok(Flow::Retry(Status::Mbarrier {
                    rank: key.0,
                    off: key.1,
                    phase,
                }));
            }
            x.set(*done, &complete);
            Ok(Flow::Next)
        }
        Mbarrier::TestWaitParity { done, addr, parity } => {
            let Tested {
                done: complete,
                waiting,
            } = test(x, addr, parity)?;
            x.set(*done, &complete);
            let seen = complete.iter().fold(0u64, |h, &v| h.rotate_left(1) ^ v);
            let phase = waiting.map_or(0, |(_, p)| p + 1);
            Ok(poll(x, seen ^ (phase << 32)))
        }
    }
}

/// Each executing lane's arrival (`count`, and transaction bytes `tx` expected first); returns
/// the state tokens (the phase arrived in).
fn arrive_all(
    x: &mut Exec<'_, '_>,
    addr: &Address,
    space: StateSpace,
    per_lane: impl Fn(usize) -> (u64, u64),
) -> Result<[u64; 32], SimError> {
    let mut tokens = [0u64; 32];
    for (lane, key) in places(x, addr, space)? {
        if !exists(x, key, lane) {
            continue;
        }
        let (count, tx) = per_lane(lane as usize);
        if tx > 0 {
            change_tx(x, key, lane, tx as i64);
        }
        tokens[lane as usize] = arrive(x, key, lane, count)?;
    }
    Ok(tokens)
}

/// One arrival of `count` on the barrier at `key`, releasing the warp's clock.
fn arrive(x: &mut Exec<'_, '_>, key: Key, lane: u32, count: u64) -> Result<u64, SimError> {
    let (cta, warp) = (x.cta, x.warp);
    let pending = x.cl.mbarriers[&key].pending;
    if count == 0 || count > u64::from(pending) {
        x.find(FindingKind::Mbarrier, lane, || {
            format!(
                "an arrival of {count} on an mbarrier with {pending} arrivals pending in its phase (arrivals past the count)"
            )
        });
    }
    let cl = &mut *x.cl;
    let w = &mut cl.ctas[cta].warps[warp];
    let Some(b) = cl.mbarriers.get_mut(&key) else {
        return Ok(0);
    };
    b.vc.join(&w.vc);
    w.vc.tick(w.comp)?;
    b.pending = b
        .pending
        .saturating_sub(count.min(u64::from(u32::MAX)) as u32);
    let token = b.phase;
    complete_phase(x, key);
    Ok(token)
}

/// One arrival on the barrier at `key` by an asynchronous mechanism (a `tcgen05.commit`'s
/// arrive-on once the operations it tracks complete) that releases `release`. A missing barrier
/// is a finding.
pub(crate) fn agent_arrive(x: &mut Exec<'_, '_>, key: Key, lane: u32, release: &Vc) {
    if !exists(x, key, lane) {
        return;
    }
    let pending = x.cl.mbarriers[&key].pending;
    if pending == 0 {
        x.find(FindingKind::Mbarrier, lane, || {
            "an arrival on an mbarrier with no arrival pending in its phase (arrivals past the count)"
                .to_string()
        });
    }
    if let Some(b) = x.cl.mbarriers.get_mut(&key) {
        b.vc.join(release);
        b.pending = b.pending.saturating_sub(1);
    }
    complete_phase(x, key);
}

/// Raises (or, for complete-tx, lowers) the transaction count of the barrier at `key`.
pub(crate) fn change_tx(x: &mut Exec<'_, '_>, key: Key, lane: u32, by: i64) {
    let Some(b) = x.cl.mbarriers.get_mut(&key) else {
        return;
    };
    b.tx += by;
    let tx = b.tx;
    if !(-LIMIT..=LIMIT).contains(&tx) {
        x.find(FindingKind::Mbarrier, lane, || {
            format!("the mbarrier's transaction count reaches {tx}, outside -(2^20-1)..=2^20-1")
        });
    }
    complete_phase(x, key);
}

/// Completes the current phase of the barrier at `key` if no arrival nor transaction is
/// pending, and wakes the parts waiting for it.
pub(crate) fn complete_phase(x: &mut Exec<'_, '_>, key: Key) {
    touch(x, key);
    let Some(b) = x.cl.mbarriers.get_mut(&key) else {
        return;
    };
    if b.pending != 0 || b.tx != 0 {
        return;
    }
    let done = b.phase;
    let parity = (done & 1) as usize;
    b.done[parity] = std::mem::replace(&mut b.vc, Vc::new(b.done[0].0.len()));
    b.phase += 1;
    b.pending = b.expected;
    // The waiters run their wait again, which acquires the completed phase.
    let waiting = Status::Mbarrier {
        rank: key.0,
        off: key.1,
        phase: done,
    };
    for cta in &mut x.cl.ctas {
        for w in &mut cta.warps {
            for p in &mut w.parts {
                if p.status == waiting {
                    p.status = Status::Ready;
                }
            }
        }
    }
}

/// Marks the block's shared memory as changed (polling warps look again).
fn touch(x: &mut Exec<'_, '_>, key: Key) {
    if let Some(c) = x.cl.ctas.iter_mut().find(|c| c.rank == key.0) {
        c.smem.generation += 1;
    }
}

/// What a wait found: per lane, whether its phase completed; the first barrier and phase some
/// lane still waits for.
struct Tested {
    done: [u64; 32],
    waiting: Option<(Key, u64)>,
}

/// For each executing lane: whether the phase of its parity completed (acquiring it when it
/// did); and the first barrier and phase some lane still waits for.
fn test(x: &mut Exec<'_, '_>, addr: &Address, parity: &Operand) -> Result<Tested, SimError> {
    let par = x.read(parity, Type::U32)?;
    let mut done = [0u64; 32];
    let mut waiting = None;
    for (lane, key) in places(x, addr, StateSpace::Shared)? {
        if !exists(x, key, lane) {
            continue;
        }
        let b = &x.cl.mbarriers[&key];
        let want = par[lane as usize] & 1;
        if want != b.phase & 1 {
            // The phase of that parity is the one before the current: it completed.
            let released = b.done[want as usize].clone();
            x.w().vc.join(&released);
            done[lane as usize] = 1;
        } else if waiting.is_none() {
            waiting = Some((key, b.phase));
        }
    }
    Ok(Tested { done, waiting })
}
