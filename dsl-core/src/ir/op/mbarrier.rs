//! Shared-memory barriers (`mbarrier.*`). `init`, plain `arrive` and `test_wait` exist from sm_80;
//! arrive counts, transaction counts (`expect_tx`), `try_wait` and cluster scope need sm_90.

use super::OpInfo;
use crate::ir::error::IrError;
use crate::ir::space::{Scope, StateSpace};
use crate::ir::target::{PtxVersion, Requirement, Target};
use crate::ir::types::Type;
use crate::ir::value::{Address, Operand, Reg};

/// Mbarrier ops. Addresses point at an 8-byte aligned b64 barrier object in `.shared::cta`
/// (`space: Shared`) or, for remote arrivals, `.shared::cluster` (an address from `mapa`).
#[derive(Debug, Clone, PartialEq)]
pub enum Mbarrier {
    /// `mbarrier.init.shared::cta.b64 [addr], count`: expect `count` arrivals per phase.
    Init {
        /// Barrier address.
        addr: Address,
        /// Expected arrivals (u32).
        count: Operand,
    },
    /// `mbarrier.inval.shared::cta.b64 [addr]`.
    Inval {
        /// Barrier address.
        addr: Address,
    },
    /// `mbarrier.arrive{.release.scope}{.space}.b64 state, [addr]{, count}`.
    Arrive {
        /// Receives the phase token (b64); `None` writes the sink `_` (required for
        /// `.shared::cluster`).
        state: Option<Reg>,
        /// `Shared` (this block) or `SharedCluster` (possibly another block's barrier).
        space: StateSpace,
        /// Release scope: `Cta` (default) or `Cluster`.
        scope: Scope,
        /// Barrier address.
        addr: Address,
        /// Arrivals to count, default 1 (a count needs sm_90).
        count: Option<Operand>,
    },
    /// `mbarrier.arrive.expect_tx{.release.scope}{.space}.b64 state, [addr], tx_count`: arrive
    /// once and raise the expected transaction bytes.
    ArriveExpectTx {
        /// Phase token or sink.
        state: Option<Reg>,
        /// `Shared` or `SharedCluster`.
        space: StateSpace,
        /// `Cta` or `Cluster`.
        scope: Scope,
        /// Barrier address.
        addr: Address,
        /// Bytes the phase will also wait for (u32).
        tx_count: Operand,
    },
    /// `mbarrier.expect_tx{.relaxed.scope}{.space}.b64 [addr], tx_count`.
    ExpectTx {
        /// `Shared` or `SharedCluster`.
        space: StateSpace,
        /// `Cta` or `Cluster`.
        scope: Scope,
        /// Barrier address.
        addr: Address,
        /// Bytes (u32).
        tx_count: Operand,
    },
    /// `mbarrier.try_wait.parity{.acquire.scope}.shared::cta.b64 done, [addr], parity{, hint}`:
    /// `done` is true once the phase with the given parity completed; may time out with false,
    /// so callers loop.
    TryWaitParity {
        /// Predicate result.
        done: Reg,
        /// `Cta` or `Cluster` acquire scope.
        scope: Scope,
        /// Barrier address.
        addr: Address,
        /// Phase parity to wait for (u32, 0 or 1).
        parity: Operand,
        /// Suspend-time hint in nanoseconds (u32).
        suspend_hint: Option<Operand>,
    },
    /// `mbarrier.test_wait.parity.shared::cta.b64 done, [addr], parity` (sm_80): non-blocking test.
    TestWaitParity {
        /// Predicate result.
        done: Reg,
        /// Barrier address.
        addr: Address,
        /// Phase parity (u32).
        parity: Operand,
    },
}

impl Mbarrier {
    fn needs_sm90(&self) -> bool {
        match self {
            Mbarrier::Init { .. } | Mbarrier::Inval { .. } | Mbarrier::TestWaitParity { .. } => {
                false
            }
            Mbarrier::Arrive {
                space,
                scope,
                count,
                ..
            } => *space == StateSpace::SharedCluster || *scope == Scope::Cluster || count.is_some(),
            _ => true,
        }
    }
}

impl OpInfo for Mbarrier {
    fn mnemonic(&self) -> &'static str {
        match self {
            Mbarrier::Init { .. } => "mbarrier.init",
            Mbarrier::Inval { .. } => "mbarrier.inval",
            Mbarrier::Arrive { .. } => "mbarrier.arrive",
            Mbarrier::ArriveExpectTx { .. } => "mbarrier.arrive.expect_tx",
            Mbarrier::ExpectTx { .. } => "mbarrier.expect_tx",
            Mbarrier::TryWaitParity { .. } => "mbarrier.try_wait.parity",
            Mbarrier::TestWaitParity { .. } => "mbarrier.test_wait.parity",
        }
    }
    fn requires(&self) -> Requirement {
        if self.needs_sm90() {
            Requirement::at_least(Target::Sm90a)
        } else {
            Requirement::at_least(Target::Sm80)
        }
    }
    fn ptx_version(&self) -> PtxVersion {
        match self {
            Mbarrier::Init { .. } | Mbarrier::Inval { .. } => PtxVersion::new(7, 0),
            Mbarrier::TestWaitParity { .. } => PtxVersion::new(7, 1),
            Mbarrier::Arrive {
                space: StateSpace::Shared,
                scope: Scope::Cta,
                count: None,
                ..
            } => PtxVersion::new(7, 0),
            Mbarrier::TryWaitParity {
                scope: Scope::Cta, ..
            } => PtxVersion::new(7, 8),
            _ => PtxVersion::new(8, 0),
        }
    }
    fn check(&self) -> Result<(), IrError> {
        let m = self.mnemonic();
        let (space, scope, state) = match self {
            Mbarrier::Arrive {
                space,
                scope,
                state,
                ..
            }
            | Mbarrier::ArriveExpectTx {
                space,
                scope,
                state,
                ..
            } => (*space, *scope, *state),
            Mbarrier::ExpectTx { space, scope, .. } => (*space, *scope, None),
            Mbarrier::TryWaitParity { scope, done, .. } => {
                if done.ty != Type::Pred || !matches!(scope, Scope::Cta | Scope::Cluster) {
                    return Err(IrError::bad(
                        m,
                        "waits at cta or cluster scope into a predicate",
                    ));
                }
                return Ok(());
            }
            Mbarrier::TestWaitParity { done, .. } => {
                if done.ty != Type::Pred {
                    return Err(IrError::bad(m, "the result is a predicate"));
                }
                return Ok(());
            }
            _ => return Ok(()),
        };
        if !matches!(space, StateSpace::Shared | StateSpace::SharedCluster) {
            return Err(IrError::bad(
                m,
                "barriers live in .shared::cta or .shared::cluster",
            ));
        }
        if !matches!(scope, Scope::Cta | Scope::Cluster) {
            return Err(IrError::bad(m, "scope is cta or cluster"));
        }
        if space == StateSpace::SharedCluster && state.is_some() {
            return Err(IrError::bad(
                m,
                "a .shared::cluster arrive returns no state; use the sink",
            ));
        }
        if state.is_some_and(|s| s.ty.bits() != 64) {
            return Err(IrError::bad(m, "the state token is 64 bits"));
        }
        Ok(())
    }
}
