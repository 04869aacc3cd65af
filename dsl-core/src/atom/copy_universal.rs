//! `UniversalCopy<uintN_t>`: a plain load and store of `N` bits by one thread
//! (`include/cute/arch/copy.hpp`), between any two of global and shared memory.

use super::copy::{wrong_ends, CopyEnd, CopyOperation, CopyTraits, EndKind};
use super::value::ValType;
use crate::ir::op::{Compare, Memory};
use crate::ir::{Address, Operand, Reg, StateSpace, Type};
use crate::kernel::{emit, Arm, Cond, Var};
use crate::layout::LayoutError;

/// `UniversalCopy<uintN_t>` with `bits` in 8, 16, 32, 64, 128: `ld` of the bits into registers,
/// `st` of them. A global source out of bounds loads from the tile's origin and stores zeros (a
/// zero-filling copy, as `cp.async` with source size 0); a global destination out of bounds
/// stores nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct UniversalCopy {
    /// Width of the access.
    pub bits: u32,
}

impl CopyOperation for UniversalCopy {
    fn name(&self) -> String {
        format!("UniversalCopy<{}>", super::value::uint_name(self.bits))
    }
    fn traits(&self) -> Result<CopyTraits, String> {
        match ValType::uint_of_bits(self.bits) {
            Some(_) => Ok(CopyTraits::per_thread(self.bits)),
            None => Err(format!(
                "UniversalCopy moves 8, 16, 32, 64 or 128 bits, not {}",
                self.bits
            )),
        }
    }
    fn src_kind(&self) -> EndKind {
        EndKind::Memory
    }
    fn dst_kind(&self) -> EndKind {
        EndKind::Memory
    }
    fn call(&self, _: ValType, src: &CopyEnd, dst: &CopyEnd) -> Result<(), LayoutError> {
        let (src_space, src_addr, src_pred) = match src {
            CopyEnd::Global { addr, pred } => (StateSpace::Global, addr, *pred),
            CopyEnd::Shared { addr } => (StateSpace::Shared, addr, None),
            CopyEnd::Registers(_) => return Err(wrong_ends(self, src, dst)),
        };
        let (dst_space, dst_addr, dst_pred) = match dst {
            CopyEnd::Global { addr, pred } => (StateSpace::Global, addr, *pred),
            CopyEnd::Shared { addr } => (StateSpace::Shared, addr, None),
            CopyEnd::Registers(_) => return Err(wrong_ends(self, src, dst)),
        };
        let (ty, n) = match self.bits {
            8 => (Type::B8, 1),
            16 => (Type::B16, 1),
            bits => (Type::B32, (bits / 32) as usize),
        };
        let regs: Vec<Reg> = (0..n).map(|_| word(ty)).collect();
        emit(Memory::Ld {
            space: src_space,
            ty,
            dsts: regs.clone(),
            addr: src_addr.clone(),
            cache: None,
            nc: false,
            order: None,
        });
        let srcs: Vec<Operand> = regs
            .iter()
            .map(|&r| match src_pred {
                None => Operand::Reg(r),
                Some(p) => {
                    let out = word(ty);
                    emit(Compare::Selp {
                        // selp has no 8-bit form; b8 words live in 32-bit registers.
                        ty: if ty == Type::B8 { Type::B32 } else { ty },
                        dst: out,
                        a: Operand::Reg(r),
                        b: Operand::Imm(0),
                        cond: p.operand(),
                    });
                    Operand::Reg(out)
                }
            })
            .collect();
        let store = |addr: Address| {
            emit(Memory::St {
                space: dst_space,
                ty,
                srcs: srcs.clone(),
                addr,
                cache: None,
                order: None,
            })
        };
        match dst_pred {
            None => store(dst_addr.clone()),
            Some(p) => p.if_(|arm| {
                if arm == Arm::Then {
                    store(dst_addr.clone())
                }
            }),
        }
        Ok(())
    }
}

/// A new register of one `ty` word: b16 words in 16-bit registers, b8 and b32 words in 32-bit
/// ones (PTX loads and stores sub-word types through wider registers).
fn word(ty: Type) -> Reg {
    match ty {
        Type::B16 => Var::<half::f16>::uninit().to_reg(),
        _ => Var::<u32>::uninit().to_reg(),
    }
}
