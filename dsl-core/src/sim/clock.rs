//! Vector clocks and epochs (FastTrack: Flanagan and Freund, PLDI 2009) for happens-before
//! between the warps of a cluster and the asynchronous agents that act for them.
//!
//! A *component* is one clock: each warp has one (the lanes of a warp share it: the simulator
//! orders them by the warp's program order), each warp has an agent for its `cp.async` copies,
//! and each block has a few agents for the async proxy (bulk copies, tensor-core operand reads:
//! the families that model them claim one). A component's clock advances at each release it
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

/// Agents of the async proxy per block.
pub(crate) const PROXY_AGENTS: u32 = 4;

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
    /// Async-proxy agent `index` of that block.
    Proxy { cta: u32, index: u32 },
}

/// How a cluster's components are numbered: per block, its warps, then its warps' `cp.async`
/// agents, then its async-proxy agents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Components {
    pub warps: u32,
    pub ctas: u32,
}

impl Components {
    pub fn new(warps: u32, ctas: u32) -> Result<Components, super::SimError> {
        let c = Components { warps, ctas };
        if c.len() as u32 > MAX_COMPONENTS {
            return Err(super::SimError::Limit(format!(
                "{ctas} blocks of {warps} warps need {} vector-clock components; at most {MAX_COMPONENTS}",
                c.len()
            )));
        }
        Ok(c)
    }

    fn per_cta(self) -> u32 {
        2 * self.warps + PROXY_AGENTS
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

    /// Async-proxy agent `index` of block `cta`: what the bulk-copy and tensor-core families
    /// act as (their accesses are checked with [`Components::is_async_proxy`]).
    #[cfg_attr(not(test), allow(dead_code))]
    pub fn proxy(self, cta: u32, index: u32) -> u32 {
        cta * self.per_cta() + 2 * self.warps + index
    }

    pub fn who(self, comp: u32) -> Who {
        let (cta, i) = (comp / self.per_cta(), comp % self.per_cta());
        if i < self.warps {
            Who::Warp { cta, warp: i }
        } else if i < 2 * self.warps {
            Who::CpAsync {
                cta,
                warp: i - self.warps,
            }
        } else {
            Who::Proxy {
                cta,
                index: i - 2 * self.warps,
            }
        }
    }

    /// Whether the component's accesses are in the async proxy.
    #[cfg_attr(not(test), allow(dead_code))]
    pub fn is_async_proxy(self, comp: u32) -> bool {
        matches!(self.who(comp), Who::Proxy { .. })
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
        let c = Components::new(4, 2).unwrap();
        assert_eq!(c.len(), 2 * (8 + PROXY_AGENTS as usize));
        assert_eq!(c.who(c.warp(1, 3)), Who::Warp { cta: 1, warp: 3 });
        assert_eq!(c.who(c.cp_async(0, 2)), Who::CpAsync { cta: 0, warp: 2 });
        assert_eq!(c.who(c.proxy(1, 0)), Who::Proxy { cta: 1, index: 0 });
        assert!(c.is_async_proxy(c.proxy(0, 1)) && !c.is_async_proxy(c.cp_async(0, 1)));
        assert!(Components::new(1000, 16).is_err());
    }
}
