//! Pairs of 16-bit floats in one 32-bit register ([`F16x2`], [`BF16x2`]): packing two halves,
//! splitting a pair into its halves, broadcasting one half into both, and converting to and
//! from f32. Arithmetic on pairs is the ordinary operators (`add.f16x2`, ...) and the methods
//! of [`super::math`] (`fma.rn.f16x2`, `ex2.approx.f16x2`, ...).
//!
//! ```
//! use dsl_core::kernel::*;
//! use half::f16;
//!
//! let k = build_kernel("pairs", |k| {
//!     let x = k.param_ptr::<F16x2>("x");
//!     let h = k.param::<f16>("h");
//!     let i = thread_idx_x();
//!     let [lo, hi] = x.load_at(i).unpack();          // two Var<f16>
//!     let swapped = Var::<F16x2>::pack(hi, lo);       // mov.b32 {lo, hi}
//!     let scaled = swapped.mul_add(Var::splat(h), Var::splat(f16::ONE));
//!     x.store_at(i, scaled);
//! })
//! .unwrap();
//! ```

use half::{bf16, f16};

use super::context;
use super::value::{BF16x2, Const, DeviceType, F16x2, IntoVar, Repr, Var};
use crate::ir::op::{Convert, Data};

/// A pair of 16-bit floats in one register: [`F16x2`] (halves [`half::f16`]) or [`BF16x2`]
/// (halves [`half::bf16`]). Element 0 is the low 16 bits.
pub trait Pair: DeviceType {
    /// The type of one element.
    type Half: DeviceType;
    /// The bits of a host value of one element.
    fn half_bits(x: f64) -> u16;
    /// The value of one element's bits.
    fn half_value(bits: u16) -> f64;
}

impl Pair for F16x2 {
    type Half = f16;
    fn half_bits(x: f64) -> u16 {
        f16::from_f64(x).to_bits()
    }
    fn half_value(bits: u16) -> f64 {
        f16::from_bits(bits).to_f64()
    }
}

impl Pair for BF16x2 {
    type Half = bf16;
    fn half_bits(x: f64) -> u16 {
        bf16::from_f64(x).to_bits()
    }
    fn half_value(bits: u16) -> f64 {
        bf16::from_bits(bits).to_f64()
    }
}

impl<P: Pair> Var<P> {
    /// The pair `(lo, hi)`: `lo` is element 0, in the low 16 bits (`mov.b32 d, {lo, hi}`;
    /// folded when both are constants).
    pub fn pack(lo: impl IntoVar<P::Half>, hi: impl IntoVar<P::Half>) -> Var<P> {
        let (lo, hi) = (lo.into_var(), hi.into_var());
        if let (Repr::Const(Const::Float(l)), Repr::Const(Const::Float(h))) = (lo.repr, hi.repr) {
            let bits = u32::from(P::half_bits(l)) | (u32::from(P::half_bits(h)) << 16);
            return Var::from_repr(Repr::Const(Const::Int(i64::from(bits))));
        }
        let parts = vec![lo.operand(), hi.operand()];
        let out = Var::<P>::uninit();
        if let Some(dst) = out.reg() {
            context::emit(Data::Pack { dst, parts });
        }
        out
    }

    /// `x` in both elements (CUDA's `__half2half2`, `__bfloat162bfloat162`).
    pub fn splat(x: impl IntoVar<P::Half>) -> Var<P> {
        let x = x.into_var();
        Var::pack(x, x)
    }

    /// The two elements, `[element 0 (low bits), element 1]` (`mov.b32 {lo, hi}, s`; CUDA's
    /// `__low2half`/`__high2half`).
    pub fn unpack(self) -> [Var<P::Half>; 2] {
        if let Repr::Const(Const::Int(bits)) = self.repr {
            let half = |b: i64| Var::from_repr(Repr::Const(Const::Float(P::half_value(b as u16))));
            return [half(bits), half(bits >> 16)];
        }
        let src = self.to_reg();
        let halves = [Var::<P::Half>::uninit(), Var::<P::Half>::uninit()];
        if let (Some(lo), Some(hi)) = (halves[0].reg(), halves[1].reg()) {
            context::emit(Data::Unpack {
                dsts: vec![lo, hi],
                src,
            });
        }
        halves
    }

    /// The pair of `lo` and `hi` each rounded to nearest even (`cvt.rn.f16x2.f32` or
    /// `cvt.rn.bf16x2.f32`, sm_80).
    pub fn from_f32(lo: impl IntoVar<f32>, hi: impl IntoVar<f32>) -> Var<P> {
        let (l, h) = (lo.into_var().operand(), hi.into_var().operand());
        let out = Var::<P>::uninit();
        if let Some(dst) = out.reg() {
            context::emit(Convert::PackF32 {
                dst_ty: P::TY,
                relu: false,
                dst,
                hi: h,
                lo: l,
            });
        }
        out
    }

    /// Both elements as f32 (exact), `[element 0, element 1]`.
    pub fn to_f32(self) -> [Var<f32>; 2] {
        self.unpack().map(|h| h.cast::<f32>())
    }

    /// The 32 bits of the pair as a `u32` (what `mma.sync`'s 16-bit operands take).
    pub fn to_bits(self) -> Var<u32> {
        match self.repr {
            Repr::Const(c) => Var::from_repr(Repr::Const(c)),
            Repr::Reg { .. } => self.bitcast::<u32>(),
        }
    }
}
