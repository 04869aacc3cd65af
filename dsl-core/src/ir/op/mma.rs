//! Warp-level matrix multiply-accumulate `mma.sync.aligned.m16n8k16.row.col` (sm_80): f16 inputs
//! with f16 or f32 accumulators, bf16 inputs with f32 accumulators.

use super::OpInfo;
use crate::ir::error::IrError;
use crate::ir::target::{PtxVersion, Requirement, Target};
use crate::ir::types::Type;
use crate::ir::value::{Operand, Reg};

/// `D = A * B + C` for one 16x8x16 tile per warp, A row-major, B column-major.
///
/// Per thread: `a` is 4 b32 registers (8 halves), `b` is 2, `c`/`d` are 4 f32 registers for an
/// f32 accumulator or 2 f16x2 registers for an f16 one.
#[derive(Debug, Clone, PartialEq)]
pub struct MmaSync {
    /// Input element type: `F16` or `BF16`.
    pub ab_ty: Type,
    /// Accumulator type of C and D: `F32`, or `F16` (only with f16 inputs).
    pub acc_ty: Type,
    /// Result fragment.
    pub d: Vec<Reg>,
    /// A fragment.
    pub a: Vec<Reg>,
    /// B fragment.
    pub b: Vec<Reg>,
    /// C fragment (registers, or immediates such as 0 for a fresh accumulator).
    pub c: Vec<Operand>,
}

impl MmaSync {
    /// Registers per thread of the accumulator.
    pub fn acc_regs(&self) -> usize {
        if self.acc_ty == Type::F32 {
            4
        } else {
            2
        }
    }
}

impl OpInfo for MmaSync {
    fn mnemonic(&self) -> &'static str {
        "mma.sync"
    }
    fn requires(&self) -> Requirement {
        Requirement::at_least(Target::Sm80)
    }
    fn ptx_version(&self) -> PtxVersion {
        PtxVersion::new(7, 0)
    }
    fn check(&self) -> Result<(), IrError> {
        let ok_types = matches!(
            (self.ab_ty, self.acc_ty),
            (Type::F16, Type::F16) | (Type::F16, Type::F32) | (Type::BF16, Type::F32)
        );
        if !ok_types {
            return Err(IrError::bad(
                "mma.sync",
                format!("m16n8k16 has no {} -> {} form", self.ab_ty, self.acc_ty),
            ));
        }
        let acc = self.acc_regs();
        let all32 = |rs: &[Reg]| rs.iter().all(|r| r.ty.bits() == 32);
        if self.a.len() != 4 || self.b.len() != 2 || !all32(&self.a) || !all32(&self.b) {
            return Err(IrError::bad(
                "mma.sync",
                "A takes 4 and B 2 32-bit registers",
            ));
        }
        if self.d.len() != acc || self.c.len() != acc || !all32(&self.d) {
            return Err(IrError::bad(
                "mma.sync",
                format!(
                    "a {} accumulator takes {acc} 32-bit registers for C and D",
                    self.acc_ty
                ),
            ));
        }
        Ok(())
    }
}
