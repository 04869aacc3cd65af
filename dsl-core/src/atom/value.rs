//! The element types atoms move and multiply, named as CuTe names them.

use std::fmt;

/// An element type of a copy or an MMA (CuTe's `half_t`, `bfloat16_t`, `float`, `uintN_t`).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum ValType {
    /// IEEE binary16 (`half_t`).
    F16,
    /// bfloat16 (`bfloat16_t`).
    BF16,
    /// IEEE binary32 (`float`).
    F32,
    /// 8-bit unsigned (`uint8_t`).
    U8,
    /// 16-bit unsigned (`uint16_t`).
    U16,
    /// 32-bit unsigned (`uint32_t`).
    U32,
    /// 64-bit unsigned (`uint64_t`).
    U64,
    /// 128-bit unsigned (`uint128_t`), the vector width of a 16-byte access.
    U128,
}

impl ValType {
    /// Every type, for lookups by name.
    pub const ALL: [ValType; 8] = [
        ValType::F16,
        ValType::BF16,
        ValType::F32,
        ValType::U8,
        ValType::U16,
        ValType::U32,
        ValType::U64,
        ValType::U128,
    ];

    /// Width in bits (CuTe's `sizeof_bits`).
    pub fn bits(self) -> u32 {
        match self {
            ValType::U8 => 8,
            ValType::F16 | ValType::BF16 | ValType::U16 => 16,
            ValType::F32 | ValType::U32 => 32,
            ValType::U64 => 64,
            ValType::U128 => 128,
        }
    }

    /// CuTe's C++ spelling (`half_t`, `uint128_t`, ...).
    pub fn cute_name(self) -> &'static str {
        match self {
            ValType::F16 => "half_t",
            ValType::BF16 => "bfloat16_t",
            ValType::F32 => "float",
            ValType::U8 => "uint8_t",
            ValType::U16 => "uint16_t",
            ValType::U32 => "uint32_t",
            ValType::U64 => "uint64_t",
            ValType::U128 => "uint128_t",
        }
    }

    /// The unsigned type of `bits` width (8..128), as CuTe spells the `T` of `UniversalCopy<T>`.
    pub fn uint_of_bits(bits: u32) -> Option<ValType> {
        match bits {
            8 => Some(ValType::U8),
            16 => Some(ValType::U16),
            32 => Some(ValType::U32),
            64 => Some(ValType::U64),
            128 => Some(ValType::U128),
            _ => None,
        }
    }

    /// Parse CuTe's spelling, or rute's short one (`f16`, `bf16`, `f32`, `u8`..`u128`).
    pub fn from_name(name: &str) -> Option<ValType> {
        let n = name.trim().trim_start_matches("cute::");
        ValType::ALL.into_iter().find(|t| {
            t.cute_name() == n || t.short_name() == n || (n == "half" && *t == ValType::F16)
        })
    }

    /// rute's short spelling (`f16`, `bf16`, `f32`, `u8`, ..., `u128`).
    pub fn short_name(self) -> &'static str {
        match self {
            ValType::F16 => "f16",
            ValType::BF16 => "bf16",
            ValType::F32 => "f32",
            ValType::U8 => "u8",
            ValType::U16 => "u16",
            ValType::U32 => "u32",
            ValType::U64 => "u64",
            ValType::U128 => "u128",
        }
    }
}

impl fmt::Display for ValType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.cute_name())
    }
}

/// CuTe's spelling of the unsigned type of `bits` width (`uint128_t`), or `uint{bits}` for a
/// width it does not have (so that an invalid operation still names what was asked).
pub(crate) fn uint_name(bits: u32) -> String {
    ValType::uint_of_bits(bits)
        .map(|t| t.cute_name().to_string())
        .unwrap_or_else(|| format!("uint{bits}"))
}
