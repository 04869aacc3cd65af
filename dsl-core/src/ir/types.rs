//! Value types of the IR, named as PTX names its fundamental types.

use std::fmt;

/// The type of a register, an immediate or a memory element.
///
/// The 8-bit types exist for memory operations only (loads widen into 16/32-bit registers, stores
/// narrow from them); registers are 16 bits or wider, or predicates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Type {
    /// A one-bit predicate.
    Pred,
    /// Untyped 8 bits (memory only).
    B8,
    /// Unsigned 8 bits (memory only).
    U8,
    /// Signed 8 bits (memory only).
    S8,
    /// Untyped 16 bits.
    B16,
    /// Unsigned 16 bits.
    U16,
    /// Signed 16 bits.
    S16,
    /// Untyped 32 bits.
    B32,
    /// Unsigned 32 bits.
    U32,
    /// Signed 32 bits.
    S32,
    /// Untyped 64 bits.
    B64,
    /// Unsigned 64 bits.
    U64,
    /// Signed 64 bits.
    S64,
    /// IEEE half precision.
    F16,
    /// Two halves packed in 32 bits (element 0 in the low half).
    F16x2,
    /// bfloat16.
    BF16,
    /// Two bfloat16 packed in 32 bits (element 0 in the low half).
    BF16x2,
    /// IEEE single precision.
    F32,
    /// IEEE double precision.
    F64,
}

/// What kind of arithmetic a type carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TypeKind {
    /// A predicate.
    Pred,
    /// Raw bits (`.bN`).
    Bits,
    /// Unsigned integer.
    Unsigned,
    /// Signed integer.
    Signed,
    /// Floating point, scalar or packed.
    Float,
}

impl Type {
    /// Every type, in declaration order.
    pub const ALL: [Type; 19] = [
        Type::Pred,
        Type::B8,
        Type::U8,
        Type::S8,
        Type::B16,
        Type::U16,
        Type::S16,
        Type::B32,
        Type::U32,
        Type::S32,
        Type::B64,
        Type::U64,
        Type::S64,
        Type::F16,
        Type::F16x2,
        Type::BF16,
        Type::BF16x2,
        Type::F32,
        Type::F64,
    ];

    /// Width in bits (a predicate counts 1).
    pub fn bits(self) -> u32 {
        use Type::*;
        match self {
            Pred => 1,
            B8 | U8 | S8 => 8,
            B16 | U16 | S16 | F16 | BF16 => 16,
            B32 | U32 | S32 | F32 | F16x2 | BF16x2 => 32,
            B64 | U64 | S64 | F64 => 64,
        }
    }

    /// Width in bytes, rounded up (a predicate counts 1).
    pub fn bytes(self) -> u32 {
        self.bits().div_ceil(8)
    }

    /// The kind of arithmetic the type carries.
    pub fn kind(self) -> TypeKind {
        use Type::*;
        match self {
            Pred => TypeKind::Pred,
            B8 | B16 | B32 | B64 => TypeKind::Bits,
            U8 | U16 | U32 | U64 => TypeKind::Unsigned,
            S8 | S16 | S32 | S64 => TypeKind::Signed,
            F16 | F16x2 | BF16 | BF16x2 | F32 | F64 => TypeKind::Float,
        }
    }

    /// Integer types (signed or unsigned, not raw bits).
    pub fn is_int(self) -> bool {
        matches!(self.kind(), TypeKind::Unsigned | TypeKind::Signed)
    }

    /// Signed integer types.
    pub fn is_signed(self) -> bool {
        self.kind() == TypeKind::Signed
    }

    /// Floating-point types, scalar or packed.
    pub fn is_float(self) -> bool {
        self.kind() == TypeKind::Float
    }

    /// The packed two-element float types.
    pub fn is_packed(self) -> bool {
        matches!(self, Type::F16x2 | Type::BF16x2)
    }

    /// The bfloat16 types, scalar or packed (several ops need sm_90 for them).
    pub fn is_bf16(self) -> bool {
        matches!(self, Type::BF16 | Type::BF16x2)
    }

    /// Whether a register may hold this type (8-bit types live in memory only).
    pub fn is_register_type(self) -> bool {
        self.bits() != 8
    }

    /// The raw-bits type of the same width (`B8`..`B64`; a predicate stays a predicate).
    pub fn bits_type(self) -> Type {
        match self.bits() {
            1 => Type::Pred,
            8 => Type::B8,
            16 => Type::B16,
            32 => Type::B32,
            _ => Type::B64,
        }
    }

    /// The name PTX gives the type, without the dot (`f16x2`, `u32`, `pred`).
    pub fn name(self) -> &'static str {
        use Type::*;
        match self {
            Pred => "pred",
            B8 => "b8",
            U8 => "u8",
            S8 => "s8",
            B16 => "b16",
            U16 => "u16",
            S16 => "s16",
            B32 => "b32",
            U32 => "u32",
            S32 => "s32",
            B64 => "b64",
            U64 => "u64",
            S64 => "s64",
            F16 => "f16",
            F16x2 => "f16x2",
            BF16 => "bf16",
            BF16x2 => "bf16x2",
            F32 => "f32",
            F64 => "f64",
        }
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widths_and_kinds() {
        for t in Type::ALL {
            assert_eq!(t.bits_type().bits(), t.bits(), "{t}");
            assert!(t.bits() <= 64);
        }
        assert_eq!(Type::F16x2.bits(), 32);
        assert!(Type::BF16x2.is_packed() && Type::BF16x2.is_bf16());
        assert!(!Type::U8.is_register_type());
        assert!(Type::S32.is_signed() && Type::S32.is_int());
        assert!(!Type::B32.is_int());
    }
}
