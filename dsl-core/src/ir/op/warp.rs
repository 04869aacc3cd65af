//! Warp-collective ops: `shfl.sync`, `vote.sync`, `redux.sync` (sm_80), `elect.sync` (sm_90),
//! `activemask`.

use super::OpInfo;
use crate::ir::error::IrError;
use crate::ir::target::{PtxVersion, Requirement, Target};
use crate::ir::types::Type;
use crate::ir::value::{Operand, Reg};

/// Which lane a shuffle reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ShflMode {
    /// `.up`: lane - b
    Up,
    /// `.down`: lane + b
    Down,
    /// `.bfly`: lane ^ b
    Bfly,
    /// `.idx`: lane b
    Idx,
}

impl ShflMode {
    /// `up`, `down`, `bfly` or `idx`.
    pub fn name(self) -> &'static str {
        match self {
            ShflMode::Up => "up",
            ShflMode::Down => "down",
            ShflMode::Bfly => "bfly",
            ShflMode::Idx => "idx",
        }
    }
}

/// What a vote computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum VoteMode {
    /// `.all`: a predicate, true when every active lane's is.
    All,
    /// `.any`: a predicate, true when some lane's is.
    Any,
    /// `.uni`: a predicate, true when all lanes agree.
    Uni,
    /// `.ballot.b32`: a u32 with bit i set when lane i's predicate is.
    Ballot,
}

/// The reduction of `redux.sync`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReduxOp {
    /// `.add` (u32/s32)
    Add,
    /// `.min` (u32/s32)
    Min,
    /// `.max` (u32/s32)
    Max,
    /// `.and` (b32)
    And,
    /// `.or` (b32)
    Or,
    /// `.xor` (b32)
    Xor,
}

/// Warp-collective ops. `membermask` is the u32 mask of participating lanes.
#[derive(Debug, Clone, PartialEq)]
pub enum Warp {
    /// `shfl.sync.mode.b32 dst|dst_pred, a, b, c, membermask`.
    Shfl {
        /// Which lane to read.
        mode: ShflMode,
        /// Result (32 bits).
        dst: Reg,
        /// Optional predicate: true when the source lane was in range.
        dst_pred: Option<Reg>,
        /// Value to share (32 bits).
        a: Operand,
        /// Lane offset, xor mask or index (u32).
        b: Operand,
        /// Clamp and segment mask (`0x1f` for a whole warp with up/idx/bfly... `0` for up).
        c: Operand,
        /// Participating lanes.
        membermask: Operand,
    },
    /// `vote.sync.mode dst, {!}pred, membermask`.
    Vote {
        /// What to compute.
        mode: VoteMode,
        /// A predicate (All/Any/Uni) or u32 (Ballot).
        dst: Reg,
        /// The lane's vote.
        pred: Operand,
        /// Vote with the negation of `pred`.
        negate: bool,
        /// Participating lanes.
        membermask: Operand,
    },
    /// `redux.sync.op.ty dst, src, membermask` (sm_80).
    Redux {
        /// The reduction.
        op: ReduxOp,
        /// u32, s32 or b32.
        ty: Type,
        /// Result.
        dst: Reg,
        /// Lane value.
        src: Operand,
        /// Participating lanes.
        membermask: Operand,
    },
    /// `elect.sync dst_lane|dst_pred, membermask` (sm_90): one lane of the mask gets true.
    Elect {
        /// The elected lane's index (u32), or `None` for the sink `_`.
        dst_lane: Option<Reg>,
        /// True in the elected lane.
        dst_pred: Reg,
        /// Participating lanes.
        membermask: Operand,
    },
    /// `activemask.b32 dst`: the lanes currently executing.
    Activemask {
        /// Result (u32).
        dst: Reg,
    },
    /// `bar.warp.sync membermask` (CUDA's `__syncwarp`): waits for the lanes of the mask, and
    /// orders the memory accesses of each before the barrier before those of every other after
    /// it (the one way lanes of a warp may pass data through memory).
    Sync {
        /// Participating lanes.
        membermask: Operand,
    },
}

impl OpInfo for Warp {
    fn mnemonic(&self) -> &'static str {
        match self {
            Warp::Shfl { .. } => "shfl.sync",
            Warp::Vote { .. } => "vote.sync",
            Warp::Redux { .. } => "redux.sync",
            Warp::Elect { .. } => "elect.sync",
            Warp::Activemask { .. } => "activemask",
            Warp::Sync { .. } => "bar.warp.sync",
        }
    }
    fn requires(&self) -> Requirement {
        match self {
            Warp::Elect { .. } => Requirement::at_least(Target::Sm90a),
            _ => Requirement::ANY,
        }
    }
    fn ptx_version(&self) -> PtxVersion {
        match self {
            Warp::Elect { .. } => PtxVersion::new(8, 0),
            Warp::Redux { .. } => PtxVersion::new(7, 0),
            Warp::Activemask { .. } => PtxVersion::new(6, 2),
            _ => PtxVersion::new(6, 0),
        }
    }
    fn check(&self) -> Result<(), IrError> {
        let m = self.mnemonic();
        match self {
            Warp::Shfl { dst, dst_pred, .. } => {
                if dst.ty.bits() != 32 || dst_pred.is_some_and(|p| p.ty != Type::Pred) {
                    return Err(IrError::bad(m, "shuffles move 32-bit values"));
                }
            }
            Warp::Vote { mode, dst, .. } => {
                let want = if *mode == VoteMode::Ballot { 32 } else { 1 };
                if dst.ty.bits() != want {
                    return Err(IrError::bad(m, format!("result must be {want} bits")));
                }
            }
            Warp::Redux { op, ty, .. } => {
                let ok = match op {
                    ReduxOp::Add | ReduxOp::Min | ReduxOp::Max => {
                        matches!(ty, Type::U32 | Type::S32)
                    }
                    _ => *ty == Type::B32,
                };
                if !ok {
                    return Err(IrError::bad(m, format!("no form on {ty}")));
                }
            }
            Warp::Elect { dst_pred, .. } => {
                if dst_pred.ty != Type::Pred {
                    return Err(IrError::bad(m, "the result must be a predicate"));
                }
            }
            Warp::Activemask { dst } => {
                if dst.ty.bits() != 32 {
                    return Err(IrError::bad(m, "the result is 32 bits"));
                }
            }
            Warp::Sync { .. } => {}
        }
        Ok(())
    }
}
