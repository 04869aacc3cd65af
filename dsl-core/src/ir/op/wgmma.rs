//! Warpgroup MMA (`wgmma.*`), **sm_90a only**: the PTX ISA defines it for `sm_90a` and no later
//! architecture-specific target, so a kernel using it does not run on sm_100a.

use super::OpInfo;
use crate::ir::error::IrError;
use crate::ir::target::{PtxVersion, Requirement, Target};
use crate::ir::types::Type;
use crate::ir::value::{Operand, Reg};

/// Where wgmma reads A from.
#[derive(Debug, Clone, PartialEq)]
pub enum WgmmaA {
    /// A 64-bit shared-memory matrix descriptor (u64 operand).
    Desc(Operand),
    /// Four b32 registers per thread (f16x2/bf16x2 pairs) holding this thread's A fragment.
    Regs(Vec<Reg>),
}

/// The accumulate switch `scale-d`: `D = A*B` when false, `D = A*B + D` when true.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ScaleD {
    /// Decided on the host.
    Const(bool),
    /// Decided at run time by a predicate register.
    Pred(Reg),
}

/// `wgmma.mma_async.sync.aligned.m64nNk16.dtype.atype.btype d, a, b_desc, scale-d,
/// imm-scale-a, imm-scale-b{, imm-trans-a}, imm-trans-b`.
#[derive(Debug, Clone, PartialEq)]
pub struct WgmmaMma {
    /// N of the m64nNk16 shape: a multiple of 8 in 8..=256.
    pub n: u32,
    /// Accumulator type: `F32` or `F16`.
    pub d_ty: Type,
    /// Input type of A and B: `F16` or `BF16` (bf16 accumulates into f32 only).
    pub ab_ty: Type,
    /// Accumulator registers, read and written: N/2 f32 or N/4 f16x2 (b32) per thread.
    pub d: Vec<Reg>,
    /// A operand.
    pub a: WgmmaA,
    /// B's shared-memory descriptor (u64).
    pub b_desc: Operand,
    /// Accumulate or overwrite.
    pub scale_d: ScaleD,
    /// `imm-scale-a`: 1 or -1.
    pub scale_a: i8,
    /// `imm-scale-b`: 1 or -1.
    pub scale_b: i8,
    /// Transpose A (`imm-trans-a` = 1; descriptor A only).
    pub tnsp_a: bool,
    /// Transpose B (`imm-trans-b` = 1).
    pub tnsp_b: bool,
}

impl WgmmaMma {
    /// Accumulator registers per thread for this shape and type.
    pub fn d_regs(&self) -> usize {
        let n = self.n as usize;
        if self.d_ty == Type::F32 {
            n / 2
        } else {
            n / 4
        }
    }
}

/// wgmma ops.
#[derive(Debug, Clone, PartialEq)]
pub enum Wgmma {
    /// `wgmma.fence.sync.aligned`: order register accesses before the next `mma_async`.
    Fence,
    /// `wgmma.commit_group.sync.aligned`.
    CommitGroup,
    /// `wgmma.wait_group.sync.aligned n`: wait until at most `n` groups are pending.
    WaitGroup(u32),
    /// `wgmma.mma_async`.
    MmaAsync(WgmmaMma),
}

impl OpInfo for Wgmma {
    fn mnemonic(&self) -> &'static str {
        match self {
            Wgmma::Fence => "wgmma.fence",
            Wgmma::CommitGroup => "wgmma.commit_group",
            Wgmma::WaitGroup(_) => "wgmma.wait_group",
            Wgmma::MmaAsync(_) => "wgmma.mma_async",
        }
    }
    fn requires(&self) -> Requirement {
        Requirement::only(Target::Sm90a)
    }
    fn ptx_version(&self) -> PtxVersion {
        PtxVersion::new(8, 0)
    }
    fn check(&self) -> Result<(), IrError> {
        let m = self.mnemonic();
        let Wgmma::MmaAsync(w) = self else {
            return Ok(());
        };
        if w.n < 8 || w.n > 256 || w.n % 8 != 0 {
            return Err(IrError::bad(
                m,
                format!("N = {} is not a multiple of 8 in 8..=256", w.n),
            ));
        }
        if !matches!(
            (w.ab_ty, w.d_ty),
            (Type::F16, Type::F16) | (Type::F16, Type::F32) | (Type::BF16, Type::F32)
        ) {
            return Err(IrError::bad(
                m,
                format!("no {} -> {} form", w.ab_ty, w.d_ty),
            ));
        }
        if w.d.len() != w.d_regs() || w.d.iter().any(|r| r.ty.bits() != 32) {
            return Err(IrError::bad(
                m,
                format!(
                    "m64n{}k16 with {} accumulates in {} 32-bit registers, got {}",
                    w.n,
                    w.d_ty,
                    w.d_regs(),
                    w.d.len()
                ),
            ));
        }
        if let WgmmaA::Regs(a) = &w.a {
            if a.len() != 4 || a.iter().any(|r| r.ty.bits() != 32) {
                return Err(IrError::bad(m, "A from registers takes 4 32-bit registers"));
            }
            if w.tnsp_a {
                return Err(IrError::bad(m, "A from registers cannot be transposed"));
            }
        }
        if !matches!(w.scale_a, 1 | -1) || !matches!(w.scale_b, 1 | -1) {
            return Err(IrError::bad(m, "imm-scale-a/b are 1 or -1"));
        }
        if let ScaleD::Pred(p) = w.scale_d {
            if p.ty != Type::Pred {
                return Err(IrError::bad(m, "scale-d is a predicate"));
            }
        }
        Ok(())
    }
}
