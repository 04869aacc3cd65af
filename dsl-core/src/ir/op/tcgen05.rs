//! Fifth-generation tensor core ops (`tcgen05.*`), **sm_100a only** (PTX 8.6): tensor memory
//! (TMEM) allocation, the single-thread issued `tcgen05.mma`, commit to an mbarrier, TMEM loads,
//! and the fences ordering them against thread synchronization.

use super::OpInfo;
use crate::ir::error::IrError;
use crate::ir::target::{PtxVersion, Requirement, Target};
use crate::ir::types::Type;
use crate::ir::value::{Address, Operand, Reg};

/// How many blocks (one or a pair in the cluster) an op acts for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CtaGroup {
    /// `.cta_group::1`
    One,
    /// `.cta_group::2`: the op spans a pair of blocks.
    Two,
}

impl CtaGroup {
    /// 1 or 2.
    pub fn count(self) -> u32 {
        match self {
            CtaGroup::One => 1,
            CtaGroup::Two => 2,
        }
    }
}

/// Input kind of `tcgen05.mma`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MmaKind {
    /// `.kind::f16`: f16/bf16 inputs, f16/f32 accumulate.
    F16,
    /// `.kind::tf32`
    Tf32,
    /// `.kind::f8f6f4`
    F8f6f4,
    /// `.kind::i8`
    I8,
}

impl MmaKind {
    /// `f16`, `tf32`, `f8f6f4` or `i8`.
    pub fn name(self) -> &'static str {
        match self {
            MmaKind::F16 => "f16",
            MmaKind::Tf32 => "tf32",
            MmaKind::F8f6f4 => "f8f6f4",
            MmaKind::I8 => "i8",
        }
    }
}

/// Where `tcgen05.mma` reads A from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Tcgen05A {
    /// A shared-memory matrix descriptor (u64).
    Desc(Operand),
    /// A tensor-memory address (u32).
    Tmem(Operand),
}

/// Data-path shape of a TMEM load/store: lanes x bits per access.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TmemShape {
    /// `.32x32b`: each thread of the warp owns one TMEM lane, one 32-bit column per repetition.
    S32x32b,
    /// `.16x64b`
    S16x64b,
    /// `.16x128b`
    S16x128b,
    /// `.16x256b`
    S16x256b,
}

impl TmemShape {
    /// 32-bit registers per thread per repetition.
    pub fn regs_per_rep(self) -> usize {
        match self {
            TmemShape::S32x32b | TmemShape::S16x64b => 1,
            TmemShape::S16x128b => 2,
            TmemShape::S16x256b => 4,
        }
    }
    /// The shape's name, `32x32b`...
    pub fn name(self) -> &'static str {
        match self {
            TmemShape::S32x32b => "32x32b",
            TmemShape::S16x64b => "16x64b",
            TmemShape::S16x128b => "16x128b",
            TmemShape::S16x256b => "16x256b",
        }
    }
}

/// tcgen05 ops.
#[derive(Debug, Clone, PartialEq)]
pub enum Tcgen05 {
    /// `tcgen05.alloc.cta_group.sync.aligned.shared::cta.b32 [dst], ncols`: allocate `ncols`
    /// TMEM columns and write their base address to shared memory at `dst`. One warp executes it.
    Alloc {
        /// Blocks the allocation is for.
        cta_group: CtaGroup,
        /// Shared address receiving the TMEM address (u32).
        dst: Address,
        /// Columns: a power of two in 32..=512 (u32).
        ncols: Operand,
    },
    /// `tcgen05.dealloc.cta_group.sync.aligned.b32 taddr, ncols`.
    Dealloc {
        /// Blocks the allocation was for.
        cta_group: CtaGroup,
        /// TMEM address from `Alloc` (u32).
        taddr: Operand,
        /// Columns, as allocated.
        ncols: Operand,
    },
    /// `tcgen05.relinquish_alloc_permit.cta_group.sync.aligned`: this block will allocate no more.
    RelinquishAllocPermit {
        /// Blocks.
        cta_group: CtaGroup,
    },
    /// `tcgen05.mma.cta_group.kind [d_tmem], a, b_desc, idesc, enable_input_d`: `D = A*B (+ D)`,
    /// issued by one thread.
    Mma {
        /// One block or a pair.
        cta_group: CtaGroup,
        /// Input kind.
        kind: MmaKind,
        /// TMEM address of D (u32).
        d_tmem: Operand,
        /// A from a descriptor or TMEM.
        a: Tcgen05A,
        /// B's shared-memory descriptor (u64).
        b_desc: Operand,
        /// Instruction descriptor (u32): types, transposes, M and N.
        idesc: Operand,
        /// Accumulate into D when true (predicate register or host constant 0/1).
        enable_input_d: Operand,
    },
    /// `tcgen05.commit.cta_group.mbarrier::arrive::one.shared::cluster{.multicast::cluster}.b64
    /// [mbar]{, cta_mask}`: arrive on the mbarrier when all prior MMAs of this thread completed.
    Commit {
        /// Blocks.
        cta_group: CtaGroup,
        /// Barrier address.
        mbar: Address,
        /// Arrive on the barrier at the same offset in every block of this u16 mask.
        multicast: Option<Operand>,
    },
    /// `tcgen05.ld.sync.aligned.shape.xN{.pack::16b}.b32 {dsts}, [taddr]`.
    Ld {
        /// Data-path shape.
        shape: TmemShape,
        /// Repetitions N: a power of two, 1..=128.
        num: u32,
        /// Pack two 16-bit columns into one register.
        pack16: bool,
        /// `shape.regs_per_rep() * num` b32 registers.
        dsts: Vec<Reg>,
        /// TMEM address (u32): lane in bits 16..32, column in 0..16.
        taddr: Operand,
    },
    /// `tcgen05.st.sync.aligned.shape.xN{.unpack::16b}.b32 [taddr], {srcs}`.
    St {
        /// Data-path shape.
        shape: TmemShape,
        /// Repetitions N.
        num: u32,
        /// Unpack each register into two 16-bit columns.
        unpack16: bool,
        /// TMEM address.
        taddr: Operand,
        /// `shape.regs_per_rep() * num` b32 operands.
        srcs: Vec<Operand>,
    },
    /// `tcgen05.wait::ld.sync.aligned`: wait for this thread's prior `tcgen05.ld`.
    WaitLd,
    /// `tcgen05.wait::st.sync.aligned`.
    WaitSt,
    /// `tcgen05.fence::before_thread_sync`: order prior tcgen05 ops before a barrier.
    FenceBeforeThreadSync,
    /// `tcgen05.fence::after_thread_sync`: order later tcgen05 ops after a barrier.
    FenceAfterThreadSync,
}

impl OpInfo for Tcgen05 {
    fn mnemonic(&self) -> &'static str {
        match self {
            Tcgen05::Alloc { .. } => "tcgen05.alloc",
            Tcgen05::Dealloc { .. } => "tcgen05.dealloc",
            Tcgen05::RelinquishAllocPermit { .. } => "tcgen05.relinquish_alloc_permit",
            Tcgen05::Mma { .. } => "tcgen05.mma",
            Tcgen05::Commit { .. } => "tcgen05.commit",
            Tcgen05::Ld { .. } => "tcgen05.ld",
            Tcgen05::St { .. } => "tcgen05.st",
            Tcgen05::WaitLd => "tcgen05.wait::ld",
            Tcgen05::WaitSt => "tcgen05.wait::st",
            Tcgen05::FenceBeforeThreadSync => "tcgen05.fence::before_thread_sync",
            Tcgen05::FenceAfterThreadSync => "tcgen05.fence::after_thread_sync",
        }
    }
    fn requires(&self) -> Requirement {
        Requirement::only(Target::Sm100a)
    }
    fn ptx_version(&self) -> PtxVersion {
        PtxVersion::new(8, 6)
    }
    fn check(&self) -> Result<(), IrError> {
        let m = self.mnemonic();
        match self {
            Tcgen05::Alloc { ncols, .. } | Tcgen05::Dealloc { ncols, .. } => {
                if let Operand::Imm(n) = ncols {
                    if !(32..=512).contains(n) || (n & (n - 1)) != 0 {
                        return Err(IrError::bad(
                            m,
                            format!("{n} columns: a power of two in 32..=512"),
                        ));
                    }
                }
            }
            Tcgen05::Ld {
                shape, num, dsts, ..
            } => {
                check_num(m, *num)?;
                let want = shape.regs_per_rep() * *num as usize;
                if dsts.len() != want || dsts.iter().any(|r| r.ty.bits() != 32) {
                    return Err(IrError::bad(
                        m,
                        format!("{}.x{num} loads {want} 32-bit registers", shape.name()),
                    ));
                }
            }
            Tcgen05::St {
                shape, num, srcs, ..
            } => {
                check_num(m, *num)?;
                let want = shape.regs_per_rep() * *num as usize;
                if srcs.len() != want
                    || srcs
                        .iter()
                        .any(|o| o.reg().is_some_and(|r| r.ty.bits() != 32))
                {
                    return Err(IrError::bad(
                        m,
                        format!("{}.x{num} stores {want} 32-bit registers", shape.name()),
                    ));
                }
            }
            Tcgen05::Mma { enable_input_d, .. }
                if enable_input_d.reg().is_some_and(|r| r.ty != Type::Pred) =>
            {
                return Err(IrError::bad(m, "enable-input-d is a predicate"));
            }
            _ => {}
        }
        Ok(())
    }
}

fn check_num(m: &'static str, num: u32) -> Result<(), IrError> {
    if !num.is_power_of_two() || num > 128 {
        return Err(IrError::bad(
            m,
            format!(".x{num}: repetitions are a power of two up to 128"),
        ));
    }
    Ok(())
}
