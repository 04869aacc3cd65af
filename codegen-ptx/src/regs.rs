//! PTX register pools: one declared pool per class of register type, names numbered in id order.
//!
//! The kernel's register `id` gets the next free index of its class when the pools are built, so
//! the same kernel always gets the same names; scratch registers codegen needs (an immediate that
//! PTX wants in a register, a loop's exit predicate) come after the kernel's own.

use dsl_core::ir::Type;
use std::fmt::Write as _;

/// A class of registers that share one `.reg` declaration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RegClass {
    /// `.reg .pred %p<n>`
    Pred,
    /// `.reg .b16 %h<n>`: 16-bit integers, f16, bf16.
    B16,
    /// `.reg .b32 %r<n>`: 32-bit integers and raw bits, f16x2, bf16x2.
    B32,
    /// `.reg .b64 %rd<n>`: 64-bit integers and addresses.
    B64,
    /// `.reg .f32 %f<n>`
    F32,
    /// `.reg .f64 %fd<n>`
    F64,
}

impl RegClass {
    pub(crate) const ALL: [RegClass; 6] = [
        RegClass::Pred,
        RegClass::B16,
        RegClass::B32,
        RegClass::B64,
        RegClass::F32,
        RegClass::F64,
    ];

    /// The class holding `ty`, `None` for the memory-only 8-bit types.
    pub(crate) fn of(ty: Type) -> Option<RegClass> {
        Some(match ty {
            Type::Pred => RegClass::Pred,
            Type::F32 => RegClass::F32,
            Type::F64 => RegClass::F64,
            t if !t.is_register_type() => return None,
            t => match t.bits() {
                16 => RegClass::B16,
                32 => RegClass::B32,
                _ => RegClass::B64,
            },
        })
    }

    fn prefix(self) -> &'static str {
        match self {
            RegClass::Pred => "%p",
            RegClass::B16 => "%h",
            RegClass::B32 => "%r",
            RegClass::B64 => "%rd",
            RegClass::F32 => "%f",
            RegClass::F64 => "%fd",
        }
    }

    fn decl_type(self) -> &'static str {
        match self {
            RegClass::Pred => "pred",
            RegClass::B16 => "b16",
            RegClass::B32 => "b32",
            RegClass::B64 => "b64",
            RegClass::F32 => "f32",
            RegClass::F64 => "f64",
        }
    }
}

/// The kernel's registers mapped to pool names, plus the scratch registers handed out so far.
#[derive(Debug)]
pub(crate) struct RegPools {
    /// `names[id]` is the PTX name of kernel register `id` (`None` for an 8-bit type).
    names: Vec<Option<String>>,
    /// Registers declared per class, indexed like `RegClass::ALL`.
    counts: [u32; 6],
}

impl RegPools {
    /// Assigns every kernel register its pool index, in id order.
    pub(crate) fn new(regs: &[Type]) -> Self {
        let mut pools = RegPools {
            names: Vec::with_capacity(regs.len()),
            counts: [0; 6],
        };
        for &ty in regs {
            let name = RegClass::of(ty).map(|c| pools.next(c));
            pools.names.push(name);
        }
        pools
    }

    fn next(&mut self, class: RegClass) -> String {
        let i = class as usize;
        let n = self.counts[i];
        self.counts[i] += 1;
        format!("{}{}", class.prefix(), n)
    }

    /// The name of kernel register `id`.
    pub(crate) fn name(&self, id: u32) -> Option<&str> {
        self.names.get(id as usize)?.as_deref()
    }

    /// A fresh scratch register of `class`.
    pub(crate) fn scratch(&mut self, class: RegClass) -> String {
        self.next(class)
    }

    /// `.reg` declarations with exact counts, one line per non-empty pool.
    pub(crate) fn declare(&self, out: &mut String) {
        for class in RegClass::ALL {
            let n = self.counts[class as usize];
            if n > 0 {
                let _ = writeln!(
                    out,
                    "\t.reg .{} {}<{}>;",
                    class.decl_type(),
                    class.prefix(),
                    n
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pools_number_in_id_order() {
        let mut p = RegPools::new(&[Type::U32, Type::F32, Type::S32, Type::Pred, Type::F16x2]);
        assert_eq!(p.name(0), Some("%r0"));
        assert_eq!(p.name(1), Some("%f0"));
        assert_eq!(p.name(2), Some("%r1"));
        assert_eq!(p.name(3), Some("%p0"));
        assert_eq!(p.name(4), Some("%r2"));
        assert_eq!(p.scratch(RegClass::B32), "%r3");
        let mut s = String::new();
        p.declare(&mut s);
        assert_eq!(
            s,
            "\t.reg .pred %p<1>;\n\t.reg .b32 %r<4>;\n\t.reg .f32 %f<1>;\n"
        );
    }
}
