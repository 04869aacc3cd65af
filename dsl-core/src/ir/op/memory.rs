//! Loads and stores per state space, 8 to 128 bits, scalar or vector (`.v2`, `.v4`), with
//! optional cache operators and memory orders. Available on every target.

use super::OpInfo;
use crate::ir::error::IrError;
use crate::ir::space::{MemOrder, Scope, StateSpace};
use crate::ir::target::{PtxVersion, Requirement, Target};
use crate::ir::types::Type;
use crate::ir::value::{Address, Operand, Reg};

/// Cache operator of a load.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LdCache {
    /// `.ca`: cache at all levels
    Ca,
    /// `.cg`: cache in L2 only
    Cg,
    /// `.cs`: streaming, likely accessed once
    Cs,
    /// `.lu`: last use
    Lu,
    /// `.cv`: don't cache, fetch again
    Cv,
}

/// Cache operator of a store.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StCache {
    /// `.wb`: write back
    Wb,
    /// `.cg`: L2 only
    Cg,
    /// `.cs`: streaming
    Cs,
    /// `.wt`: write through
    Wt,
}

/// Memory ops. A vector access of `n` elements of type `ty` moves `n * ty.bits()` bits, at most
/// 128, from an address aligned to that many bytes.
#[derive(Debug, Clone, PartialEq)]
pub enum Memory {
    /// `ld{.order}.space{.nc}{.cache}{.vN}.ty {dsts}, [addr]`.
    Ld {
        /// State space of `addr`.
        space: StateSpace,
        /// Element type (8-bit types load into 16- or 32-bit registers).
        ty: Type,
        /// One register per element: 1 (scalar), 2 or 4.
        dsts: Vec<Reg>,
        /// Source address.
        addr: Address,
        /// Cache operator.
        cache: Option<LdCache>,
        /// Read through the non-coherent (texture) path: `ld.global.nc`, read-only data.
        nc: bool,
        /// `.volatile`, `.relaxed` or `.acquire`; `None` is a weak load.
        order: Option<MemOrder>,
    },
    /// `st{.order}.space{.cache}{.vN}.ty [addr], {srcs}`.
    St {
        /// State space of `addr`.
        space: StateSpace,
        /// Element type.
        ty: Type,
        /// One operand per element: 1, 2 or 4.
        srcs: Vec<Operand>,
        /// Destination address.
        addr: Address,
        /// Cache operator.
        cache: Option<StCache>,
        /// `.relaxed` or `.release`; `None` is a weak store.
        order: Option<MemOrder>,
    },
    /// `prefetch.space.level [addr]` into L2 (`.global.L2`) or L1 (`.global.L1`).
    Prefetch {
        /// `Global`, `Local` or `Generic`.
        space: StateSpace,
        /// Prefetch into L2 (`true`) or L1.
        l2: bool,
        /// Address.
        addr: Address,
    },
}

impl Memory {
    /// Number of elements moved.
    pub fn vector_len(&self) -> usize {
        match self {
            Memory::Ld { dsts, .. } => dsts.len(),
            Memory::St { srcs, .. } => srcs.len(),
            Memory::Prefetch { .. } => 0,
        }
    }
    /// Bytes moved (0 for prefetch).
    pub fn bytes(&self) -> u32 {
        match self {
            Memory::Ld { ty, .. } | Memory::St { ty, .. } => ty.bytes() * self.vector_len() as u32,
            Memory::Prefetch { .. } => 0,
        }
    }
    /// A `.shared::cluster` address or a cluster-scope order: sm_90 and PTX 7.8.
    fn needs_cluster(&self) -> bool {
        match self {
            Memory::Ld { space, order, .. } | Memory::St { space, order, .. } => {
                *space == StateSpace::SharedCluster
                    || order.map(|o| o.scope()) == Some(Scope::Cluster)
            }
            Memory::Prefetch { .. } => false,
        }
    }
}

/// The rules loads and stores share: 1, 2 or 4 elements of a type that lives in memory, each in
/// a register of the element's width (an 8-bit element in any wider register).
fn check_elements(
    m: &'static str,
    ty: Type,
    n: usize,
    regs: impl IntoIterator<Item = Reg>,
) -> Result<(), IrError> {
    if !matches!(n, 1 | 2 | 4) {
        return Err(IrError::bad(
            m,
            format!("{n} elements: scalar, v2 or v4 only"),
        ));
    }
    if ty == Type::Pred {
        return Err(IrError::bad(m, "predicates do not live in memory"));
    }
    for r in regs {
        if r.ty.bits() < ty.bits() || (ty.bits() > 8 && r.ty.bits() != ty.bits()) {
            return Err(IrError::bad(
                m,
                format!("{} register for a {ty} element", r.ty),
            ));
        }
    }
    Ok(())
}

impl OpInfo for Memory {
    fn mnemonic(&self) -> &'static str {
        match self {
            Memory::Ld { .. } => "ld",
            Memory::St { .. } => "st",
            Memory::Prefetch { .. } => "prefetch",
        }
    }
    fn requires(&self) -> Requirement {
        if self.needs_cluster() {
            Requirement::at_least(Target::Sm90a)
        } else {
            Requirement::ANY
        }
    }
    fn ptx_version(&self) -> PtxVersion {
        if self.needs_cluster() {
            PtxVersion::new(7, 8)
        } else {
            PtxVersion::new(6, 0)
        }
    }
    fn check(&self) -> Result<(), IrError> {
        let m = self.mnemonic();
        let n = self.vector_len();
        match self {
            Memory::Ld {
                ty,
                dsts,
                space,
                nc,
                order,
                cache,
                ..
            } => {
                check_elements(m, *ty, n, dsts.iter().copied())?;
                if *nc && *space != StateSpace::Global {
                    return Err(IrError::bad(m, "the .nc path reads global memory only"));
                }
                if order.is_some() && (cache.is_some() || *nc) {
                    return Err(IrError::bad(m, "ordered loads take no cache operator"));
                }
                if matches!(order, Some(MemOrder::Release(_) | MemOrder::AcqRel(_))) {
                    return Err(IrError::bad(m, "a load is relaxed or acquire"));
                }
            }
            Memory::St {
                ty,
                srcs,
                space,
                order,
                cache,
                ..
            } => {
                check_elements(m, *ty, n, srcs.iter().filter_map(Operand::reg))?;
                if matches!(space, StateSpace::Param | StateSpace::Const) {
                    return Err(IrError::bad(
                        m,
                        "kernel parameters and constants are read-only",
                    ));
                }
                if order.is_some() && cache.is_some() {
                    return Err(IrError::bad(m, "ordered stores take no cache operator"));
                }
                if matches!(order, Some(MemOrder::Acquire(_) | MemOrder::AcqRel(_))) {
                    return Err(IrError::bad(m, "a store is relaxed or release"));
                }
            }
            Memory::Prefetch { space, .. } => {
                if !matches!(
                    space,
                    StateSpace::Global | StateSpace::Local | StateSpace::Generic
                ) {
                    return Err(IrError::bad(
                        m,
                        "prefetch reads global, local or generic addresses",
                    ));
                }
            }
        }
        if self.bytes() > 16 {
            return Err(IrError::bad(
                m,
                format!("{} bytes: at most 128 bits per access", self.bytes()),
            ));
        }
        Ok(())
    }
}
