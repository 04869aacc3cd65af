//! Instruction families. Each family is an enum (or struct) in its own module with typed
//! operands, and implements [`OpInfo`]: its PTX mnemonic, the targets it runs on, the PTX ISA
//! version that introduced it, and a structural check of its operands. [`Op`] is the sum of all
//! families.

pub mod address;
pub mod arith;
pub mod atomic;
pub mod barrier;
pub mod bulk;
pub mod compare;
pub mod convert;
pub mod cp_async;
pub mod data;
pub mod fence;
pub mod matrix;
pub mod mbarrier;
pub mod memory;
pub mod mma;
pub mod regs;
pub mod setmaxnreg;
pub mod tcgen05;
pub mod warp;
pub mod wgmma;

pub use address::AddressOp;
pub use arith::{ApproxOp, Arith, BinOp, FloatRound, MulMode, RoundedOp, Subnormals, UnOp};
pub use atomic::{AtomOp, Atomic};
pub use barrier::{Barrier, ClusterArriveSem};
pub use bulk::{Bulk, TensorMapRef};
pub use compare::{CmpOp, Compare};
pub use convert::{default_round, Convert, CvtRound};
pub use cp_async::{CpAsync, CpAsyncCache};
pub use data::Data;
pub use fence::{AsyncProxySpace, Fence, FenceSem};
pub use matrix::{Matrix, MatrixCount};
pub use mbarrier::Mbarrier;
pub use memory::{LdCache, Memory, StCache};
pub use mma::MmaSync;
pub use regs::Regs;
pub use setmaxnreg::Setmaxnreg;
pub use tcgen05::{CtaGroup, MmaKind, Tcgen05, Tcgen05A, TmemShape};
pub use warp::{ReduxOp, ShflMode, VoteMode, Warp};
pub use wgmma::{ScaleD, Wgmma, WgmmaA, WgmmaMma};

use super::error::IrError;
use super::target::{PtxVersion, Requirement, Target};

/// What every op tells codegen and the checks.
pub trait OpInfo {
    /// The PTX mnemonic that names the op in errors (`wgmma.mma_async`, `cp.async`).
    fn mnemonic(&self) -> &'static str;
    /// The targets the op runs on.
    fn requires(&self) -> Requirement;
    /// The PTX ISA version that introduced the op in this form (codegen emits the maximum over
    /// the kernel's ops and the target's own minimum).
    fn ptx_version(&self) -> PtxVersion;
    /// The lowest target the op runs on (`None` only for a contradictory op).
    fn min_target(&self) -> Option<Target> {
        self.requires().min_target()
    }
    /// Structural validity of the operands (counts, widths, ranges).
    fn check(&self) -> Result<(), IrError> {
        Ok(())
    }
}

macro_rules! families {
    ($($(#[$doc:meta])* $variant:ident($ty:ty),)*) => {
        /// One IR instruction: a member of one family.
        #[derive(Debug, Clone, PartialEq)]
        pub enum Op {
            $($(#[$doc])* $variant($ty),)*
        }

        $(impl From<$ty> for Op {
            fn from(x: $ty) -> Op {
                Op::$variant(x)
            }
        })*

        impl OpInfo for Op {
            fn mnemonic(&self) -> &'static str {
                match self { $(Op::$variant(x) => x.mnemonic(),)* }
            }
            fn requires(&self) -> Requirement {
                match self { $(Op::$variant(x) => x.requires(),)* }
            }
            fn ptx_version(&self) -> PtxVersion {
                match self { $(Op::$variant(x) => x.ptx_version(),)* }
            }
            fn check(&self) -> Result<(), IrError> {
                match self { $(Op::$variant(x) => x.check(),)* }
            }
        }

        impl Regs for Op {
            fn for_each_use(&self, f: &mut dyn FnMut(crate::ir::Reg)) {
                match self { $(Op::$variant(x) => x.for_each_use(f),)* }
            }
            fn for_each_def(&self, f: &mut dyn FnMut(crate::ir::Reg)) {
                match self { $(Op::$variant(x) => x.for_each_def(f),)* }
            }
        }
    };
}

families! {
    /// Integer and float arithmetic.
    Arith(Arith),
    /// Conversions.
    Convert(Convert),
    /// `setp` / `selp`.
    Compare(Compare),
    /// Moves, special registers, symbol addresses, packing.
    Data(Data),
    /// Shuffles, votes, warp reductions, elect.
    Warp(Warp),
    /// Loads and stores.
    Memory(Memory),
    /// `atom` / `red`.
    Atomic(Atomic),
    /// Block and cluster barriers.
    Barrier(Barrier),
    /// Fences.
    Fence(Fence),
    /// `cvta` / `mapa`.
    Address(AddressOp),
    /// sm_80 `cp.async`.
    CpAsync(CpAsync),
    /// `ldmatrix` / `stmatrix`.
    Matrix(Matrix),
    /// sm_80 `mma.sync`.
    Mma(MmaSync),
    /// sm_90a `wgmma.*`.
    Wgmma(Wgmma),
    /// `mbarrier.*`.
    Mbarrier(Mbarrier),
    /// TMA `cp.async.bulk.tensor` and bulk groups.
    Bulk(Bulk),
    /// `setmaxnreg`.
    Setmaxnreg(Setmaxnreg),
    /// sm_100a `tcgen05.*`.
    Tcgen05(Tcgen05),
}
