//! `UniversalCopy<uintN_t>`: a plain load and store of `N` bits by one thread
//! (`include/cute/arch/copy.hpp`), between any two of global and shared memory.

use super::copy::{wrong_ends_because, CopyEnd, CopyOperation, CopyTraits, EndKind};
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
        let instead = if self.bits >= 32 {
            let words = self.bits / 32;
            format!(
                "a register end holds the {} bits of one access as {words} 32-bit register(s), 16-bit values packed in pairs (a `Fragment<u32>` with two values per register), or as {} 16-bit registers, one value each (a `Fragment<f16>`)",
                self.bits,
                2 * words
            )
        } else {
            format!(
                "a register end is one register of at least {} bits",
                self.bits
            )
        };
        let wrong_ends = |s: &CopyEnd, d: &CopyEnd| wrong_ends_because(self, s, d, &instead);
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
        // A register end holds the words of the access (32-bit values one per register, 16-bit
        // values packed in pairs), or 16-bit values one per register, two per word (element 2j
        // in the low half of word j, as in memory).
        let (src_mem, dst_mem) = (memory(src), memory(dst));
        let regs: Vec<Reg> = match (&src_mem, src) {
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
            (None, CopyEnd::Registers(r)) if whole_words(r, n, ty) => r.clone(),
            (None, CopyEnd::Registers(r)) if halves(r, n, ty) => r
                .chunks(2)
                .map(|pair| {
                    let w = word(ty);
                    emit(crate::ir::op::Data::Pack {
                        dst: w,
                        parts: pair.iter().map(|&h| Operand::Reg(h)).collect(),
                    });
                    w
                })
                .collect(),
            _ => return Err(wrong_ends(src, dst)),
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
            // Into registers: move the words there, or split them into the halves.
            if !self.bits.is_multiple_of(val.bits()) {
                return Err(wrong_ends(src, dst));
            }
            match dst {
                CopyEnd::Registers(r) if whole_words(r, n, ty) => {
                    for (d, s) in r.iter().zip(srcs) {
                        emit(crate::ir::op::Data::Mov {
                            ty: d.ty.bits_type(),
                            dst: *d,
                            src: s,
                        });
                    }
                }
                CopyEnd::Registers(r) if halves(r, n, ty) => {
                    for (pair, s) in r.chunks(2).zip(srcs) {
                        let Operand::Reg(w) = s else {
                            return Err(wrong_ends(src, dst));
                        };
                        emit(crate::ir::op::Data::Unpack {
                            dsts: pair.to_vec(),
                            src: w,
                        });
                    }
                }
                _ => return Err(wrong_ends(src, dst)),
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

/// Whether `regs` are the `n` words of an access of `ty` words, each in a register of the word's
/// width (8-bit words in any register of 16 bits or more).
fn whole_words(regs: &[Reg], n: usize, ty: Type) -> bool {
    regs.len() == n
        && regs.iter().all(|r| match ty {
            Type::B8 => r.ty.bits() >= 16,
            _ => r.ty.bits() == ty.bits(),
        })
}

/// Whether `regs` are 16-bit values one per register, filling the `n` 32-bit words of an access.
fn halves(regs: &[Reg], n: usize, ty: Type) -> bool {
    ty == Type::B32 && regs.len() == 2 * n && regs.iter().all(|r| r.ty.bits() == 16)
}

/// A new register of one `ty` word: b16 words in 16-bit registers, b8 and b32 words in 32-bit
/// ones (PTX loads and stores sub-word types through wider registers).
fn word(ty: Type) -> Reg {
    match ty {
        Type::B16 => Var::<half::f16>::uninit().to_reg(),
        _ => Var::<u32>::uninit().to_reg(),
    }
}
