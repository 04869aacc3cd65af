//! Math on device floats: `exp`, `exp2`, `ln`, `log2`, `tanh`, `erf`, `sin`, `cos`, `sqrt`,
//! `rsqrt`, `recip`, `abs`, `min`, `max` and `mul_add`, as methods of [`Var<f32>`], `Var<f16>`,
//! `Var<bf16>` and the pairs [`Var<F16x2>`](super::F16x2), [`Var<BF16x2>`](super::BF16x2).
//!
//! Each transcendental function comes in two variants, as CUDA has `expf` and `__expf`:
//! - `x.exp()` is accurate: a range reduction and a minimax polynomial built from IEEE
//!   operations only (`fma.rn`, `div.rn`, `sqrt.rn`, integer and bit operations), in the style
//!   of CUDA's libdevice. Its result is fully specified by the PTX ISA, so the builder computes
//!   the same bits on the host for constant inputs (that is how the CPU tests measure it).
//! - `x.exp_fast()` is the hardware's `.approx` instruction (`ex2.approx`, `lg2.approx`,
//!   `sin.approx`, `tanh.approx`, ...), what CUDA's fast intrinsics and `-use_fast_math` emit:
//!   a few instructions instead of a few dozen, with a larger error and a narrower good range.
//!
//! The names are Rust's (`ln`, `recip`, `mul_add`, as on `f32`), so that a kernel and its CPU
//! reference read alike; CUDA's `logf` is [`Var::ln`], `__frcp_rn` is [`Var::recip`], `fmaf` is
//! [`Var::mul_add`]. `abs`, `min`, `max` and `mul_add` are exact (one IEEE operation, one
//! instruction: `abs`, `min`, `max`, `fma.rn`) and have no fast variant: nothing is faster.
//!
//! 16-bit types compute in f32 and round the result to nearest even (`cvt.rn`), as CUDA's
//! `hexp`, `hlog`, `hsin` do, except where every rute target (sm_80 and up) has the function in
//! the 16-bit type itself: `exp2_fast` and `tanh_fast` of f16 and f16x2 are `ex2.approx.f16`,
//! `tanh.approx.f16x2`, ...; `abs`, `min`, `max` and `mul_add` are native for every type
//! (`fma.rn.bf16x2`, `abs.f16`, `min.bf16`). A pair applies the function to each element.
//!
//! # Accuracy
//!
//! Errors are in units in the last place (ulp) of the result's type, the worst over the range,
//! against the exact value (f64). "CPU" is measured on the host by folding the accurate f32
//! sequence (the same bits the GPU computes) over about 2^21 values spread evenly over the
//! range's bit patterns plus every value near the splits and the reduction boundaries
//! (`cargo test -p dsl-core --release math -- --nocapture` prints the worst and where). "GPU"
//! is measured on an H200 by `tests/tests/gpu_math.rs` over about 2^20 values of the range,
//! which also checks that the GPU's bits equal the host fold's for every input (they did: the
//! accurate functions compute the same bits on the GPU and the host, so the two columns differ
//! only by the inputs each tried).
//!
//! | f32 function | range | bound | accurate: CPU | accurate: GPU | fast: GPU |
//! |--------------|-------|-------|---------------|---------------|-----------|
//! | `exp` | [-87.33, 88.72] | 1 | 0.863 | 0.863 | 62.0 (14.5 on [-20, 20]) |
//! | `exp2` | [-126, 128) | 1 | 0.946 | 0.930 | 1.98 |
//! | `ln` | (0, +inf) | 1 | 0.874 | 0.759 | absolute near 1 (see below) |
//! | `log2` | (0, +inf) | 1.1 | 1.040 | 0.917 | absolute near 1 (see below) |
//! | `tanh` | all | 1 | 0.949 | 0.919 | 128 |
//! | `erf` | all | 1.1 | 1.039 | 0.942 | 1.11 |
//! | `sin` | all | 1 | 0.846 | 0.834 | absolute (see below) |
//! | `cos` | all | 1 | 0.849 | 0.850 | absolute (see below) |
//! | `sqrt`, `recip` | all | 0.5 | 0.500 (correctly rounded) | 0.500 | 0.944 (`sqrt`), 0.975 (`recip`) |
//! | `rsqrt` | (0, +inf) | 1 | 0.500 | 0.500 | 1.48 |
//!
//! How the bounds arise: each polynomial's own error is below 2^-27 of the result (its table in
//! the source says), the reductions are exact or carry their rounding error along (Cody-Waite
//! with 2Sum, Fast2Sum in the logarithms, an exact product in `rsqrt`'s Newton step), so what is
//! left is the final rounding (0.5 ulp) and the rounding of the polynomial's last steps.
//! `log2` and `erf` exceed 1 ulp by a few hundredths where their reductions leave the most
//! work to the polynomial (log2 near 4/3, erf near its split at 0.9277). `sin` and `cos`
//! reduce |x| <= 105615 by Cody and Waite's three-part pi/2 and larger |x| by Payne and
//! Hanek's exact method (96 bits of 2/pi, f64 at the end), in a branch that only lanes with
//! such arguments take.
//!
//! The 16-bit accurate functions round an f32 result whose error is below 1.05 f32 ulp (2^-13 of
//! an f16 ulp, 2^-16 of a bf16 ulp), so they are within 0.5 + 2^-13 ulp of the exact value and
//! almost always correctly rounded; `sqrt` and `recip` are always correctly rounded (double
//! rounding from 24 to 11 or 8 bits is innocuous for them). On the H200, over every value of
//! each range, every accurate f16, bf16, f16x2 and bf16x2 function was within 0.500 ulp
//! (correctly rounded at every input tried).
//!
//! The fast variants' errors are what the hardware gives, measured on the H200 (the "fast"
//! column above, worst over the whole range unless a narrower one is named). `exp2_fast`
//! (`ex2.approx`) is within 2 ulp; `exp_fast` loses accuracy as |x| grows, since `x log2 e` is
//! rounded before `ex2.approx` (62 ulp at x = -86.7, 14.5 within [-20, 20]). `ln_fast`,
//! `log2_fast`, `sin_fast` and `cos_fast` have an absolute error, not a relative one: near the
//! zeros of the function (`ln` and `log2` at 1, `sin` at 0, `cos` at odd multiples of pi/2) the
//! result is small and its error in ulps unbounded (measured: 10^7 ulp of `ln_fast` next to 1,
//! 10^4 ulp of `cos_fast` next to pi/2); `sin_fast` and `cos_fast` are meant for [-pi, pi] and
//! lose all accuracy far outside it. `tanh_fast` (`tanh.approx`) is within 128 ulp, `erf_fast`
//! 1.11, `rsqrt_fast` 1.48. In f16, `exp2_fast` and `tanh_fast` (native 16-bit instructions)
//! were within 1 and 1.01 ulp, and every other fast 16-bit function within 0.51 ulp except the
//! same absolute-error cases (`sin_fast` and `cos_fast` on [-pi, pi]: 3 and 0.68 ulp in f16,
//! 256 and 0.5 in bf16).
//!
//! Outside the ranges the functions keep IEEE 754's special values: `exp` of a large argument
//! is +inf or 0, `ln(0)` is -inf, `ln` of a negative is NaN, `sin(inf)` is NaN, NaN stays NaN,
//! `sin`, `tanh` and `erf` keep the sign of zero.
//!
//! ```
//! use dsl_core::kernel::*;
//!
//! // GELU(x) = x/2 (1 + erf(x / sqrt 2)), and its tanh approximation with the fast variants.
//! let k = build_kernel("gelu", |k| {
//!     let x = k.param_ptr::<f32>("x");
//!     let i = thread_idx_x();
//!     let v = x.load_at(i);
//!     let exact = v * 0.5f32 * (1.0f32 + (v * std::f32::consts::FRAC_1_SQRT_2).erf());
//!     let inner = v * 0.797_884_6f32 * (1.0f32 + 0.044_715f32 * v * v);
//!     let fast = v * 0.5f32 * (1.0f32 + inner.tanh_fast());
//!     x.store_at(i, exact.max(fast));
//! })
//! .unwrap();
//! ```

mod accurate;
mod fast;
pub(crate) use fast::approx_with;
#[cfg(test)]
mod tests;

use half::{bf16, f16};

use super::context::emit;
use super::ops::{unary, Num, Signed};
use super::value::{BF16x2, Const, DeviceType, F16x2, IntoVar, Repr, Var};
use crate::ir::op::{ApproxOp, Arith, FloatRound, RoundedOp, Subnormals, UnOp};

mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for half::f16 {}
    impl Sealed for half::bf16 {}
    impl Sealed for super::F16x2 {}
    impl Sealed for super::BF16x2 {}
}

/// The device float types of the math functions: `f32`, [`half::f16`], [`half::bf16`],
/// [`F16x2`] and [`BF16x2`]. Implemented by rute only.
pub trait Float: Num + Signed + sealed::Sealed {
    /// `f`, an f32 function, applied to each element: converted to f32 (exact), computed, and
    /// rounded back to nearest even.
    fn map_f32(x: Var<Self>, f: fn(Var<f32>) -> Var<f32>) -> Var<Self>;

    /// Whether `op.approx` exists for this type itself on every target rute supports (sm_80 and
    /// up): then the fast variant uses it rather than computing in f32.
    fn has_native(op: ApproxOp) -> bool;
}

/// `impl Float` for each type: how it maps an f32 function over its elements, and which
/// `.approx` instructions it has natively.
macro_rules! float_types {
    ($($t:ty: map $map:expr, native $native:expr;)*) => {$(
        impl Float for $t {
            fn map_f32(x: Var<$t>, f: fn(Var<f32>) -> Var<f32>) -> Var<$t> {
                let map: fn(Var<$t>, fn(Var<f32>) -> Var<f32>) -> Var<$t> = $map;
                map(x, f)
            }
            fn has_native(op: ApproxOp) -> bool {
                let native: fn(ApproxOp) -> bool = $native;
                native(op)
            }
        }
    )*};
}

// ex2.approx and tanh.approx take f16 and f16x2 from sm_75; their bf16 forms need sm_90.
float_types! {
    f32: map |x, f| f(x), native |_| true;
    f16: map |x, f| f(x.cast::<f32>()).cast::<f16>(),
        native |op| matches!(op, ApproxOp::Ex2 | ApproxOp::Tanh);
    bf16: map |x, f| f(x.cast::<f32>()).cast::<bf16>(), native |_| false;
    F16x2: map |x, f| {
        let [lo, hi] = x.to_f32();
        Var::<F16x2>::from_f32(f(lo), f(hi))
    }, native |op| matches!(op, ApproxOp::Ex2 | ApproxOp::Tanh);
    BF16x2: map |x, f| {
        let [lo, hi] = x.to_f32();
        Var::<BF16x2>::from_f32(f(lo), f(hi))
    }, native |_| false;
}

/// `op.rn.f32 x` (`sqrt.rn`, `rcp.rn`), folded on the host for a constant.
fn rounded(op: RoundedOp, x: Var<f32>) -> Var<f32> {
    if let Repr::Const(c) = x.repr {
        if let Some(r) = super::fold::rounded(op, FloatRound::Rn, f32::TY, c) {
            return Var::from_repr(Repr::Const(r));
        }
    }
    let a = x.operand();
    let out = Var::<f32>::uninit();
    if let Some(dst) = out.reg() {
        emit(Arith::Rounded {
            op,
            rnd: FloatRound::Rn,
            ty: f32::TY,
            dst,
            a,
        });
    }
    out
}

/// The fast variant of a function with an `.approx` instruction: native where the type has it,
/// else the f32 instruction on each element.
fn approx_or_f32<T: Float>(op: ApproxOp, x: Var<T>, f32_fast: fn(Var<f32>) -> Var<f32>) -> Var<T> {
    if T::has_native(op) {
        fast::approx(op, x)
    } else {
        T::map_f32(x, f32_fast)
    }
}

macro_rules! math_fns {
    ($(
        $(#[$doc:meta])* $name:ident => $acc:path;
        $(#[$fdoc:meta])* $fname:ident => $fast:expr;
    )*) => {
        impl<T: Float> Var<T> {$(
            $(#[$doc])*
            pub fn $name(self) -> Var<T> {
                T::map_f32(self, $acc)
            }
            $(#[$fdoc])*
            pub fn $fname(self) -> Var<T> {
                let f: fn(Var<T>) -> Var<T> = $fast;
                f(self)
            }
        )*}
    };
}

math_fns! {
    /// e^x, accurate (CUDA's `expf`): reduction by ln 2 in two parts, a degree-6 polynomial,
    /// scaling by 2^j; f32 within 1 ulp on [-87.3, 88.7] (see the [module](self) table).
    exp => accurate::exp;
    /// e^x as `ex2.approx(x log2 e)` (CUDA's `__expf`): its error grows with |x|, since the
    /// product's rounding is amplified by |x| (see the [module](self) table).
    exp_fast => |x| T::map_f32(x, fast::exp);
    /// 2^x, accurate (CUDA's `exp2f`): within 1 ulp for f32 (see the [module](self) table).
    exp2 => accurate::exp2;
    /// 2^x as `ex2.approx` (native for f32, f16 and f16x2).
    exp2_fast => |x| approx_or_f32(ApproxOp::Ex2, x, fast::exp2);
    /// The natural logarithm, accurate (CUDA's `logf`): within 1 ulp for f32; `ln(0) = -inf`,
    /// negative inputs give NaN.
    ln => accurate::ln;
    /// The natural logarithm as `lg2.approx(x) * ln 2` (CUDA's `__logf`).
    ln_fast => |x| T::map_f32(x, fast::ln);
    /// log2 x, accurate (CUDA's `log2f`): within 1.1 ulp for f32.
    log2 => accurate::log2;
    /// log2 x as `lg2.approx.f32`.
    log2_fast => |x| T::map_f32(x, fast::log2);
    /// tanh x, accurate (CUDA's `tanhf`): an odd polynomial below |x| = 0.9, `1 - 2/(e^2|x| + 1)`
    /// above; within 1 ulp for f32.
    tanh => accurate::tanh;
    /// tanh x as `tanh.approx` (native for f32, f16 and f16x2; CUDA's `__tanhf`): a relative
    /// error near 2^-11, enough for activations.
    tanh_fast => |x| approx_or_f32(ApproxOp::Tanh, x, fast::tanh);
    /// The error function, accurate (CUDA's `erff`): an odd polynomial below |x| = 0.9277,
    /// `1 - e^q(|x|)` above; within 1.1 ulp for f32.
    erf => accurate::erf;
    /// The error function with `ex2.approx` as the tail's exponential (the hardware has no erf
    /// instruction).
    erf_fast => |x| T::map_f32(x, fast::erf);
    /// sin x, accurate (CUDA's `sinf`): a reduction by pi/2 (Cody-Waite up to |x| = 105615,
    /// Payne-Hanek beyond) and two polynomials; within 1 ulp for f32 over all of f32.
    sin => accurate::sin;
    /// sin x as `sin.approx.f32` (CUDA's `__sinf`): an absolute error near 2^-21 on [-pi, pi],
    /// growing outside it.
    sin_fast => |x| T::map_f32(x, fast::sin);
    /// cos x, accurate (CUDA's `cosf`): as [`Var::sin`] one quadrant on.
    cos => accurate::cos;
    /// cos x as `cos.approx.f32` (CUDA's `__cosf`).
    cos_fast => |x| T::map_f32(x, fast::cos);
    /// The square root, correctly rounded (`sqrt.rn.f32`; CUDA's `sqrtf`, `__fsqrt_rn`).
    sqrt => accurate::sqrt;
    /// The square root as `sqrt.approx.f32` (CUDA's `sqrtf` under `-use_fast_math`).
    sqrt_fast => |x| T::map_f32(x, fast::sqrt);
    /// 1/sqrt(x) as `rcp.rn(sqrt.rn(x))` and one Newton step: within 1 ulp for f32 (CUDA's
    /// `rsqrtf` is the approximation, `rsqrt_fast` here).
    rsqrt => accurate::rsqrt;
    /// 1/sqrt(x) as `rsqrt.approx.f32` (CUDA's `rsqrtf`).
    rsqrt_fast => |x| T::map_f32(x, fast::rsqrt);
    /// 1/x, correctly rounded (`rcp.rn.f32`; CUDA's `__frcp_rn`).
    recip => accurate::recip;
    /// 1/x as `rcp.approx.f32`.
    recip_fast => |x| T::map_f32(x, fast::recip);
}

impl Var<f32> {
    /// 2^x as `ex2.approx.ftz.f32`: [`Var::exp2_fast`] with subnormal inputs and results flushed
    /// to zero of the same sign (CUDA's `exp2f` under `-use_fast_math`, which implies
    /// `-ftz=true`). One instruction on the GPU, where `exp2_fast` adds a few to scale
    /// subnormals in and out; for code whose values never need them, such as an activation's
    /// exponential, where 2^x below 2^-126 is as good as 0.
    pub fn exp2_fast_ftz(self) -> Var<f32> {
        fast::approx_with(ApproxOp::Ex2, Subnormals::FlushedToZero, self)
    }

    /// 1/x as `rcp.approx.ftz.f32`: [`Var::recip_fast`] with subnormals flushed to zero of the
    /// same sign (so 1/x of a subnormal is infinite, and of x past 2^126 is 0), one instruction
    /// on the GPU.
    pub fn recip_fast_ftz(self) -> Var<f32> {
        fast::approx_with(ApproxOp::Rcp, Subnormals::FlushedToZero, self)
    }
}

impl<T: Float> Var<T> {
    /// |x| (`abs.f32`, `abs.f16x2`, ...): exact, NaN stays NaN.
    pub fn abs(self) -> Var<T> {
        unary(UnOp::Abs, self)
    }

    /// `self * b + c` rounded once (`fma.rn.f32`, `fma.rn.f16`, `fma.rn.bf16x2`, ...; CUDA's
    /// `fmaf`, `__hfma`, `__hfma2`). Folded for f32 constants.
    pub fn mul_add(self, b: impl IntoVar<T>, c: impl IntoVar<T>) -> Var<T> {
        let (b, c) = (b.into_var(), c.into_var());
        if let (
            f32::TY,
            Repr::Const(Const::Float(x)),
            Repr::Const(Const::Float(y)),
            Repr::Const(Const::Float(z)),
        ) = (T::TY, self.repr, b.repr, c.repr)
        {
            let r = (x as f32).mul_add(y as f32, z as f32);
            return Var::from_repr(Repr::Const(Const::Float(f64::from(r))));
        }
        let (ao, bo, co) = (self.operand(), b.operand(), c.operand());
        let out = Var::<T>::uninit();
        if let Some(dst) = out.reg() {
            emit(Arith::Fma {
                rnd: FloatRound::Rn,
                ty: T::TY,
                dst,
                a: ao,
                b: bo,
                c: co,
            });
        }
        out
    }
}
