//! Conversions between types (`cvt`), including packing two f32 into f16x2/bf16x2.
//!
//! Every target has `cvt`; bf16 converts to and from f32 from sm_80 (and the f32-pair packing
//! `cvt.rn.{f16x2,bf16x2}.f32` exists from sm_80), while other bf16 conversions need sm_90.

use super::OpInfo;
use crate::ir::error::IrError;
use crate::ir::target::{PtxVersion, Requirement, Target};
use crate::ir::types::Type;
use crate::ir::value::{Operand, Reg};

/// Rounding of a conversion: float rounding (`.rn`...) for float results, integer rounding
/// (`.rni`...) for float-to-integer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CvtRound {
    /// to nearest even (float result)
    Rn,
    /// toward zero (float result)
    Rz,
    /// toward -inf (float result)
    Rm,
    /// toward +inf (float result)
    Rp,
    /// to nearest even integer
    Rni,
    /// toward zero, integer (Rust's `as`)
    Rzi,
    /// toward -inf, integer
    Rmi,
    /// toward +inf, integer
    Rpi,
}

impl CvtRound {
    /// The modifier without the dot.
    pub fn name(self) -> &'static str {
        match self {
            CvtRound::Rn => "rn",
            CvtRound::Rz => "rz",
            CvtRound::Rm => "rm",
            CvtRound::Rp => "rp",
            CvtRound::Rni => "rni",
            CvtRound::Rzi => "rzi",
            CvtRound::Rmi => "rmi",
            CvtRound::Rpi => "rpi",
        }
    }
}

/// The rounding PTX requires for a conversion from `src` to `dst` (`None` where it allows none):
/// float narrowing and int-to-float take `Rn`, float-to-int takes `Rzi` (truncation, as Rust's
/// `as` does; PTX saturates and maps NaN to 0 like Rust).
pub fn default_round(dst: Type, src: Type) -> Option<CvtRound> {
    match (dst.is_float(), src.is_float()) {
        (true, true) if dst.bits() < src.bits() => Some(CvtRound::Rn),
        (true, false) => Some(CvtRound::Rn),
        (false, true) => Some(CvtRound::Rzi),
        _ => None,
    }
}

/// Conversion ops.
#[derive(Debug, Clone, PartialEq)]
pub enum Convert {
    /// `cvt{.rnd}{.sat}.dst_ty.src_ty dst, src`.
    Cvt {
        /// Result type.
        dst_ty: Type,
        /// Source type.
        src_ty: Type,
        /// Rounding (see [`default_round`]).
        rnd: Option<CvtRound>,
        /// Clamp to the result's range (`.sat`).
        sat: bool,
        /// Result.
        dst: Reg,
        /// Source.
        src: Operand,
    },
    /// `cvt.rn{.relu}.{f16x2,bf16x2}.f32 dst, hi, lo`: the result's upper half is `hi` converted,
    /// its lower half `lo` (so element 0 of the pair is `lo`).
    PackF32 {
        /// `F16x2` or `BF16x2`.
        dst_ty: Type,
        /// Clamp negatives to zero (`.relu`).
        relu: bool,
        /// Result.
        dst: Reg,
        /// Goes to bits 16..32.
        hi: Operand,
        /// Goes to bits 0..16.
        lo: Operand,
    },
}

impl OpInfo for Convert {
    fn mnemonic(&self) -> &'static str {
        "cvt"
    }

    fn requires(&self) -> Requirement {
        match self {
            Convert::Cvt { dst_ty, src_ty, .. } if needs_sm90(*dst_ty, *src_ty) => {
                Requirement::at_least(Target::Sm90a)
            }
            _ => Requirement::ANY,
        }
    }

    fn ptx_version(&self) -> PtxVersion {
        match self {
            Convert::Cvt { dst_ty, src_ty, .. } if needs_sm90(*dst_ty, *src_ty) => {
                PtxVersion::new(7, 8)
            }
            Convert::Cvt { src_ty, .. } if src_ty.is_bf16() => PtxVersion::new(7, 1),
            Convert::Cvt { dst_ty, .. } if dst_ty.is_bf16() => PtxVersion::new(7, 0),
            Convert::PackF32 { .. } => PtxVersion::new(7, 0),
            _ => PtxVersion::new(6, 0),
        }
    }

    fn check(&self) -> Result<(), IrError> {
        match self {
            Convert::Cvt {
                dst_ty,
                src_ty,
                dst,
                ..
            } => {
                if dst_ty.is_packed() || src_ty.is_packed() {
                    return Err(IrError::bad(
                        "cvt",
                        "packed types convert with PackF32 or by moving halves",
                    ));
                }
                if *dst_ty == Type::Pred || *src_ty == Type::Pred {
                    return Err(IrError::bad("cvt", "predicates convert with selp/setp"));
                }
                let byte_bf16 = |a: Type, b: Type| a.is_bf16() && b.bits() == 8;
                if byte_bf16(*dst_ty, *src_ty) || byte_bf16(*src_ty, *dst_ty) {
                    return Err(IrError::bad(
                        "cvt",
                        "PTX has no conversion between bf16 and 8-bit integers; go through 16 bits",
                    ));
                }
                if dst.ty.bits() != dst_ty.bits() && dst_ty.is_register_type() {
                    return Err(IrError::bad(
                        "cvt",
                        format!("result {} is not {dst_ty}", dst.ty),
                    ));
                }
                Ok(())
            }
            Convert::PackF32 { dst_ty, dst, .. } => {
                if !dst_ty.is_packed() || dst.ty.bits() != 32 {
                    return Err(IrError::bad(
                        "cvt",
                        "packing writes an f16x2 or bf16x2 register",
                    ));
                }
                Ok(())
            }
        }
    }
}

/// sm_80 converts bf16 only to and from f32 (`cvt.rn.bf16.f32`, and `cvt.f32.bf16` from PTX 7.1);
/// every other conversion with a bf16 side (f64, f16, integers) arrived with sm_90, as ptxas
/// confirms.
fn needs_sm90(dst: Type, src: Type) -> bool {
    (dst == Type::BF16 && src != Type::F32) || (src == Type::BF16 && dst != Type::F32)
}
