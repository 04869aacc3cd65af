//! `UniversalCopy<uintN_t>`: a plain load and store of `N` bits by one thread
//! (`include/cute/arch/copy.hpp`), between any two of global and shared memory.

use super::copy::{wrong_ends, CopyEnd, CopyOperation, CopyTraits, EndKind};
use super::value::ValType;
use crate::ir::op::{Compare, Memory};
use crate::ir::{Address, Operand, Reg, StateSpace, Type};
use crate::kernel::{emit, Arm, Cond, Var};
use crate::layout::LayoutError;

/// `UniversalCopy<uintN_t>` with `bits` in 8, 16, 32, 64, 128, between any two of global
/// memory, shared memory and registers: `ld` of the bits into registers and `st` of them (a
/// register source is stored as it is, a register destination loaded into). A global source
/// out of bounds loads from the tile's origin and stores zeros (a zero-filling copy, as
/// `cp.async` with source size 0); a global destination out of bounds stores nothing.
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
        EndKind::Any
    }
    fn dst_kind(&self) -> EndKind {
        EndKind::Any
    }
    fn call(&self, val: ValType, src: &CopyEnd, dst: &CopyEnd) -> Result<(), LayoutError> {
        let memory = |end: &CopyEnd| match end {
            CopyEnd::Global { addr, pred } => Some((StateSpace::Global, addr.clone(), *pred)),
            CopyEnd::Shared { addr } => Some((StateSpace::Shared, addr.clone(), None)),
            CopyEnd::Registers(_) => None,
        };
        let (ty, n) = match self.bits {
            8 => (Type::B8, 1),
            16 => (Type::B16, 1),
            bits => (Type::B32, (bits / 32) as usize),
        };
        // A register end holds the values one per register (32-bit values) or in pairs: either
        // way the words of the access.
        let words = |end: &CopyEnd| match end {
            CopyEnd::Registers(r) if r.len() == n => Some(r.clone()),
            _ => None,
        };
        let (src_mem, dst_mem) = (memory(src), memory(dst));
        let regs: Vec<Reg> = match (&src_mem, words(src)) {
            (Some((space, addr, _)), _) => {
                let regs: Vec<Reg> = (0..n).map(|_| word(ty)).collect();
                emit(Memory::Ld {
                    space: *space,
                    ty,
                    dsts: regs.clone(),
                    addr: addr.clone(),
                    cache: None,
                    nc: false,
                    order: None,
                });
                regs
            }
            (None, Some(r)) => r,
            (None, None) => return Err(wrong_ends(self, src, dst)),
        };
        // Zero what a global source out of bounds loaded (from the tile's origin).
        let src_pred = src_mem.as_ref().and_then(|m| m.2);
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
        let Some((dst_space, dst_addr, dst_pred)) = dst_mem else {
            // Into registers: move the words there.
            let Some(dsts) = words(dst) else {
                return Err(wrong_ends(self, src, dst));
            };
            if !self.bits.is_multiple_of(val.bits()) {
                return Err(wrong_ends(self, src, dst));
            }
            for (d, s) in dsts.iter().zip(srcs) {
                emit(crate::ir::op::Data::Mov {
                    ty: d.ty.bits_type(),
                    dst: *d,
                    src: s,
                });
            }
            return Ok(());
        };
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
            None => store(dst_addr),
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
