//! Values: virtual registers, immediates, and memory addresses.

use super::types::Type;

/// A virtual register of one type. PTX registers are mutable, so a dynamic variable is one
/// register that assignments write again; `id` is unique within its kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Reg {
    /// Index into the kernel's register file ([`crate::ir::Kernel::regs`]).
    pub id: u32,
    /// The register's type.
    pub ty: Type,
}

/// An instruction input: a register or an immediate. Immediates take the type of the operand slot
/// they fill (the op's type), so `Imm(1)` in an `add.f32` slot is codegen's business to print as a
/// float; the builder folds operations on two immediates on the host.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Operand {
    /// A register.
    Reg(Reg),
    /// An integer immediate (also predicates: 0 or 1).
    Imm(i64),
    /// A floating-point immediate.
    ImmF(f64),
}

impl Operand {
    /// The register, if this operand is one.
    pub fn reg(&self) -> Option<Reg> {
        match self {
            Operand::Reg(r) => Some(*r),
            _ => None,
        }
    }
    /// Whether this operand is an immediate.
    pub fn is_imm(&self) -> bool {
        !matches!(self, Operand::Reg(_))
    }
}

impl From<Reg> for Operand {
    fn from(r: Reg) -> Self {
        Operand::Reg(r)
    }
}

/// What an address is relative to.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum AddrBase {
    /// A register holding an address in the op's state space (32 or 64 bits).
    Reg(Reg),
    /// A named variable: a kernel parameter, a static shared allocation or the dynamic shared
    /// memory array.
    Symbol(String),
}

/// A memory operand `[base + offset]`; the state space is the op's.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Address {
    /// What the address is relative to.
    pub base: AddrBase,
    /// Byte offset added to the base.
    pub offset: i64,
}

impl Address {
    /// `[reg + offset]`.
    pub fn reg(r: Reg, offset: i64) -> Self {
        Address {
            base: AddrBase::Reg(r),
            offset,
        }
    }
    /// `[symbol + offset]`.
    pub fn symbol(name: impl Into<String>, offset: i64) -> Self {
        Address {
            base: AddrBase::Symbol(name.into()),
            offset,
        }
    }
}

/// A predicate guard `@p` / `@!p` on a single instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Guard {
    /// The predicate register.
    pub pred: Reg,
    /// Run the instruction when the predicate is false instead.
    pub negate: bool,
}
