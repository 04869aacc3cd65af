//! State spaces and memory scopes, shared by the memory, atomic, fence and barrier families.

/// Where an address points.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StateSpace {
    /// A generic address (the hardware resolves the window).
    Generic,
    /// `.global`
    Global,
    /// `.shared` / `.shared::cta`: this block's shared memory.
    Shared,
    /// `.shared::cluster`: shared memory of any block in the cluster (sm_90).
    SharedCluster,
    /// `.local`: per-thread stack memory.
    Local,
    /// `.param`: kernel parameters.
    Param,
    /// `.const`: constant bank.
    Const,
}

impl StateSpace {
    /// The PTX spelling without the dot (`shared::cluster`); `Generic` is empty.
    pub fn name(self) -> &'static str {
        match self {
            StateSpace::Generic => "",
            StateSpace::Global => "global",
            StateSpace::Shared => "shared",
            StateSpace::SharedCluster => "shared::cluster",
            StateSpace::Local => "local",
            StateSpace::Param => "param",
            StateSpace::Const => "const",
        }
    }
}

/// The set of threads a memory ordering or atomic is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Scope {
    /// `.cta`: the block.
    Cta,
    /// `.cluster`: the cluster (sm_90).
    Cluster,
    /// `.gpu`: the device.
    Gpu,
    /// `.sys`: the device and the host.
    Sys,
}

impl Scope {
    /// `cta`, `cluster`, `gpu` or `sys`.
    pub fn name(self) -> &'static str {
        match self {
            Scope::Cta => "cta",
            Scope::Cluster => "cluster",
            Scope::Gpu => "gpu",
            Scope::Sys => "sys",
        }
    }
}

/// A memory-ordering qualifier on loads, stores and atomics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MemOrder {
    /// `.relaxed.scope`
    Relaxed(Scope),
    /// `.acquire.scope` (loads and atomics)
    Acquire(Scope),
    /// `.release.scope` (stores and atomics)
    Release(Scope),
    /// `.acq_rel.scope` (atomics)
    AcqRel(Scope),
}

impl MemOrder {
    /// The scope the order applies to.
    pub fn scope(self) -> Scope {
        match self {
            MemOrder::Relaxed(s) | MemOrder::Acquire(s) | MemOrder::Release(s) => s,
            MemOrder::AcqRel(s) => s,
        }
    }
}
