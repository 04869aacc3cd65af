//! Vector clocks and epochs (FastTrack: Flanagan and Freund, PLDI 2009) for happens-before
//! between the warps of a cluster and the asynchronous agents that act for them.
//!
//! A *component* is one clock: each warp has one (the lanes of a warp share it: the simulator
//! orders them by the warp's program order), each warp has an agent for its `cp.async` copies,
//! and, for the kinds of asynchronous op the program contains, agents for the async proxy (a
//! warp's bulk stores, its wgmma and tcgen05.mma operations, the block's TMA loads) and a
//! component for a warp's tensor-memory accesses ([`Agents`]). A component's clock advances at each release it
//! performs (a barrier arrival, a release store, a proxy fence), so an *epoch* `c@t` (clock `c`
//! of component `t`) names an interval of its program; `c@t` happens before a thread whose
//! vector clock `V` has `V[t] >= c`.

/// Bits of an epoch that hold the clock; the bits above hold the component.
const CLOCK_BITS: u32 = 20;
/// The largest clock an epoch can hold.
pub(crate) const MAX_CLOCK: u32 = (1 << CLOCK_BITS) - 1;
/// The most components an epoch can name (the top bit of a `u32` stays free for the shadow's
/// flag).
pub(crate) const MAX_COMPONENTS: u32 = 1 << (31 - CLOCK_BITS);

/// Agents per block that perform the TMA loads the block issues, handed out in turn: loads
/// complete in any order, so each takes the next clock of one of these (an acquire of one load's
/// epoch covers the earlier loads of its agent only).
pub(crate) const LOAD_AGENTS: u32 = 8;

/// Agents per block whose clocks the arrivals of its `tcgen05.commit`s take, handed out in
/// turn: a commit arrives when the MMAs it tracks complete, and the PTX ISA orders no commit's
/// arrival after another's, so a wait on one commit covers the earlier commits of its agent
/// only (not every earlier commit, as one clock per issuing warp would).
pub(crate) const COMMIT_AGENTS: u32 = 4;

/// Clock `clock` of component `comp`, packed; never 0 (clocks start at 1).
pub(crate) fn epoch(comp: u32, clock: u32) -> u32 {
    (comp << CLOCK_BITS) | clock
}

/// The component of an epoch.
pub(crate) fn comp_of(e: u32) -> u32 {
    e >> CLOCK_BITS
}

/// The clock of an epoch.
pub(crate) fn clock_of(e: u32) -> u32 {
    e & MAX_CLOCK
}

/// A vector clock: one clock per component of the cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Vc(pub Vec<u32>);

impl Vc {
    pub fn new(n: usize) -> Vc {
        Vc(vec![0; n])
    }

    /// Whether epoch `e` happens before this clock.
    #[inline]
    pub fn covers(&self, e: u32) -> bool {
        clock_of(e) <= self.0[comp_of(e) as usize]
    }

    /// `self = max(self, other)`, elementwise.
    pub fn join(&mut self, other: &Vc) {
        for (a, b) in self.0.iter_mut().zip(&other.0) {
            *a = (*a).max(*b);
        }
    }

    /// `self[comp] = max(self[comp], clock)`.
    pub fn join_one(&mut self, comp: u32, clock: u32) {
        let c = &mut self.0[comp as usize];
        *c = (*c).max(clock);
    }

    /// The epoch of component `comp` now.
    pub fn epoch(&self, comp: u32) -> u32 {
        epoch(comp, self.0[comp as usize])
    }

    /// Advances component `comp`'s own clock (after a release).
    pub fn tick(&mut self, comp: u32) -> Result<(), super::SimError> {
        let c = &mut self.0[comp as usize];
        if *c >= MAX_CLOCK {
            return Err(super::SimError::Limit(format!(
                "a warp performed more than {MAX_CLOCK} synchronizations"
            )));
        }
        *c += 1;
        Ok(())
    }
}

/// What a component is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Who {
    /// Warp `warp` of the block of rank `cta` in the cluster.
    Warp { cta: u32, warp: u32 },
    /// The `cp.async` agent of that warp (generic proxy).
    CpAsync { cta: u32, warp: u32 },
    /// The agent of that warp's bulk stores (`cp.async.bulk.tensor` to global; async proxy).
    Bulk { cta: u32, warp: u32 },
    /// The agent of that warp's `wgmma.mma_async` operations (async proxy).
    Wgmma { cta: u32, warp: u32 },
    /// That warp's tensor-memory accesses (`tcgen05.ld`/`st`) as other warps see them: they
    /// are ordered through `tcgen05.fence::before_thread_sync` (see `op/tcgen05.rs`).
    Tmem { cta: u32, warp: u32 },
    /// The agent of the `tcgen05.mma` operations that warp issues (async proxy).
    Mma { cta: u32, warp: u32 },
    /// TMA load agent `index` of the block (async proxy).
    Load { cta: u32, index: u32 },
    /// Commit agent `index` of the block: the arrivals of its `tcgen05.commit`s.
    Commit { cta: u32, index: u32 },
}

impl Who {
    /// The block rank and warp the component acts for (`u32::MAX` for a block's agent).
    pub fn site(self) -> (u32, u32) {
        match self {
            Who::Warp { cta, warp }
            | Who::CpAsync { cta, warp }
            | Who::Bulk { cta, warp }
            | Who::Wgmma { cta, warp }
            | Who::Tmem { cta, warp }
            | Who::Mma { cta, warp } => (cta, warp),
            Who::Load { cta, .. } | Who::Commit { cta, .. } => (cta, u32::MAX),
        }
    }
}

/// Which agents a program needs besides each warp's own and its `cp.async` agent (the kinds of
/// asynchronous op it contains), so that a kernel that uses none pays for none.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Agents {
    /// Bulk stores: one agent per warp.
    pub bulk: bool,
    /// `wgmma.mma_async`: one agent per warp.
    pub wgmma: bool,
    /// `tcgen05.ld`/`st`: one component per warp.
    pub tmem: bool,
    /// `tcgen05.mma`: one agent per warp, and [`COMMIT_AGENTS`] per block for the commits.
    pub mma: bool,
    /// TMA loads: [`LOAD_AGENTS`] per block.
    pub loads: bool,
}

/// How a cluster's components are numbered: per block, its warps, then its warps' `cp.async`
/// agents, then (for the kinds the program uses) its warps' bulk-store, wgmma, tensor-memory and
/// MMA agents, then its TMA load agents, then its commit agents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Components {
    pub warps: u32,
    pub ctas: u32,
    agents: Agents,
}

/// The per-warp agent kinds after the warps' own components and their `cp.async` agents, in
/// numbering order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Bulk,
    Wgmma,
    Tmem,
    Mma,
}

const KINDS: [Kind; 4] = [Kind::Bulk, Kind::Wgmma, Kind::Tmem, Kind::Mma];

impl Components {
    pub fn new(warps: u32, ctas: u32, agents: Agents) -> Result<Components, super::SimError> {
        let c = Components {
            warps,
            ctas,
            agents,
        };
        if c.len() as u32 > MAX_COMPONENTS {
            return Err(super::SimError::Limit(format!(
                "{ctas} blocks of {warps} warps need {} vector-clock components; at most {MAX_COMPONENTS}",
                c.len()
            )));
        }
        Ok(c)
    }

    fn has(self, k: Kind) -> bool {
        match k {
            Kind::Bulk => self.agents.bulk,
            Kind::Wgmma => self.agents.wgmma,
            Kind::Tmem => self.agents.tmem,
            Kind::Mma => self.agents.mma,
        }
    }

    /// Where the per-warp agents of kind `k` start in a block (after the warps and their
    /// `cp.async` agents).
    fn kind_base(self, k: Kind) -> u32 {
        let before = KINDS
            .iter()
            .take_while(|&&x| x != k)
            .filter(|&&x| self.has(x))
            .count() as u32;
        (2 + before) * self.warps
    }

    fn loads_base(self) -> u32 {
        let kinds = KINDS.iter().filter(|&&k| self.has(k)).count() as u32;
        (2 + kinds) * self.warps
    }

    fn commits_base(self) -> u32 {
        self.loads_base() + if self.agents.loads { LOAD_AGENTS } else { 0 }
    }

    fn per_cta(self) -> u32 {
        self.commits_base() + if self.agents.mma { COMMIT_AGENTS } else { 0 }
    }

    /// Components in all.
    pub fn len(self) -> usize {
        (self.per_cta() * self.ctas) as usize
    }

    pub fn warp(self, cta: u32, warp: u32) -> u32 {
        cta * self.per_cta() + warp
    }

    pub fn cp_async(self, cta: u32, warp: u32) -> u32 {
        cta * self.per_cta() + self.warps + warp
    }

    fn of_kind(self, k: Kind, cta: u32, warp: u32) -> u32 {
        debug_assert!(self.has(k), "an agent of a kind the program does not use");
        cta * self.per_cta() + self.kind_base(k) + warp
    }

    /// The bulk-store agent of a warp.
    pub fn bulk(self, cta: u32, warp: u32) -> u32 {
        self.of_kind(Kind::Bulk, cta, warp)
    }

    /// The wgmma agent of a warp.
    pub fn wgmma(self, cta: u32, warp: u32) -> u32 {
        self.of_kind(Kind::Wgmma, cta, warp)
    }

    /// The tensor-memory component of a warp.
    pub fn tmem(self, cta: u32, warp: u32) -> u32 {
        self.of_kind(Kind::Tmem, cta, warp)
    }

    /// The `tcgen05.mma` agent of a warp.
    pub fn mma(self, cta: u32, warp: u32) -> u32 {
        self.of_kind(Kind::Mma, cta, warp)
    }

    /// TMA load agent `index` (below [`LOAD_AGENTS`]) of block `cta`.
    pub fn load(self, cta: u32, index: u32) -> u32 {
        debug_assert!(self.agents.loads && index < LOAD_AGENTS);
        cta * self.per_cta() + self.loads_base() + index
    }

    /// Commit agent `index` (below [`COMMIT_AGENTS`]) of block `cta`.
    pub fn commit(self, cta: u32, index: u32) -> u32 {
        debug_assert!(self.agents.mma && index < COMMIT_AGENTS);
        cta * self.per_cta() + self.commits_base() + index
    }

    pub fn who(self, comp: u32) -> Who {
        let (cta, i) = (comp / self.per_cta(), comp % self.per_cta());
        let w = self.warps;
        if i >= self.commits_base() {
            return Who::Commit {
                cta,
                index: i - self.commits_base(),
            };
        }
        if i < w {
            return Who::Warp { cta, warp: i };
        }
        if i < 2 * w {
            return Who::CpAsync { cta, warp: i - w };
        }
        if i >= self.loads_base() {
            return Who::Load {
                cta,
                index: i - self.loads_base(),
            };
        }
        let k = KINDS
            .iter()
            .copied()
            .filter(|&k| self.has(k))
            .nth(((i - 2 * w) / w) as usize)
            .unwrap_or(Kind::Bulk);
        let warp = (i - 2 * w) % w;
        match k {
            Kind::Bulk => Who::Bulk { cta, warp },
            Kind::Wgmma => Who::Wgmma { cta, warp },
            Kind::Tmem => Who::Tmem { cta, warp },
            Kind::Mma => Who::Mma { cta, warp },
        }
    }

    /// Whether the component's accesses are in the generic proxy (a warp's own and its
    /// `cp.async` copies): an async-proxy access after its write needs its `fence.proxy.async`.
    pub fn is_generic(self, comp: u32) -> bool {
        comp % self.per_cta() < 2 * self.warps
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn epochs_pack_and_order() {
        let e = epoch(5, 7);
        assert_eq!((comp_of(e), clock_of(e)), (5, 7));
        let mut v = Vc::new(8);
        assert!(!v.covers(e));
        v.join_one(5, 7);
        assert!(v.covers(e));
        let mut w = Vc::new(8);
        w.0[1] = 3;
        v.join(&w);
        assert_eq!(v.0[1], 3);
        v.tick(1).unwrap();
        assert_eq!(v.epoch(1), epoch(1, 4));
    }

    #[test]
    fn components_are_numbered_per_block() {
        let none = Components::new(4, 2, Agents::default()).unwrap();
        assert_eq!(none.len(), 2 * 8);
        assert_eq!(none.who(none.warp(1, 3)), Who::Warp { cta: 1, warp: 3 });
        assert_eq!(
            none.who(none.cp_async(0, 2)),
            Who::CpAsync { cta: 0, warp: 2 }
        );
        let all = Agents {
            bulk: true,
            wgmma: true,
            tmem: true,
            mma: true,
            loads: true,
        };
        let c = Components::new(4, 2, all).unwrap();
        assert_eq!(
            c.len(),
            2 * (6 * 4 + LOAD_AGENTS as usize + COMMIT_AGENTS as usize)
        );
        assert_eq!(c.who(c.bulk(1, 2)), Who::Bulk { cta: 1, warp: 2 });
        assert_eq!(c.who(c.wgmma(0, 3)), Who::Wgmma { cta: 0, warp: 3 });
        assert_eq!(c.who(c.tmem(1, 0)), Who::Tmem { cta: 1, warp: 0 });
        assert_eq!(c.who(c.mma(1, 1)), Who::Mma { cta: 1, warp: 1 });
        assert_eq!(c.who(c.load(1, 7)), Who::Load { cta: 1, index: 7 });
        assert_eq!(c.who(c.commit(1, 3)), Who::Commit { cta: 1, index: 3 });
        assert_eq!(c.who(c.commit(0, 0)), Who::Commit { cta: 0, index: 0 });
        assert!(c.is_generic(c.cp_async(1, 1)) && !c.is_generic(c.load(0, 1)));
        assert!(!c.is_generic(c.commit(1, 2)));
        let some = Agents {
            wgmma: true,
            loads: true,
            ..Agents::default()
        };
        let s = Components::new(12, 2, some).unwrap();
        assert_eq!(s.who(s.wgmma(1, 11)), Who::Wgmma { cta: 1, warp: 11 });
        assert_eq!(s.who(s.load(0, 0)), Who::Load { cta: 0, index: 0 });
        assert!(Components::new(1000, 16, Agents::default()).is_err());
    }
}
