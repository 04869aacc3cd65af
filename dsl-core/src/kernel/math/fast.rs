//! The fast f32 functions: the hardware's `.approx` instructions, as CUDA's fast intrinsics
//! (`__expf`, `__logf`, `__sinf`, ...) and `-use_fast_math` use them. Their results are what the
//! hardware's function units give, which the PTX ISA bounds but does not specify bit for bit,
//! so they are measured on a GPU, not folded on the host.

use super::super::context::emit;
use super::super::value::{DeviceType, Var};
use super::accurate::{self, LN2, LOG2E};
use crate::ir::op::{ApproxOp, Arith, Subnormals};

/// `op.approx.ty` on `x`.
pub(super) fn approx<T: DeviceType>(op: ApproxOp, x: Var<T>) -> Var<T> {
    approx_with(op, Subnormals::Kept, x)
}

/// `op.approx.ty` on `x`, subnormals kept or flushed.
pub(crate) fn approx_with<T: DeviceType>(
    op: ApproxOp,
    subnormals: Subnormals,
    x: Var<T>,
) -> Var<T> {
    let a = x.operand();
    let out = Var::<T>::uninit();
    if let Some(dst) = out.reg() {
        emit(Arith::Approx {
            op,
            ty: T::TY,
            subnormals,
            dst,
            a,
        });
    }
    out
}

/// `ex2.approx(x * log2(e))` (CUDA's `__expf`).
pub(super) fn exp(x: Var<f32>) -> Var<f32> {
    approx(ApproxOp::Ex2, x * LOG2E)
}

/// `ex2.approx.f32`.
pub(super) fn exp2(x: Var<f32>) -> Var<f32> {
    approx(ApproxOp::Ex2, x)
}

/// `lg2.approx(x) * ln(2)` (CUDA's `__logf`).
pub(super) fn ln(x: Var<f32>) -> Var<f32> {
    approx(ApproxOp::Lg2, x) * LN2
}

/// `lg2.approx.f32`.
pub(super) fn log2(x: Var<f32>) -> Var<f32> {
    approx(ApproxOp::Lg2, x)
}

/// `tanh.approx.f32`.
pub(super) fn tanh(x: Var<f32>) -> Var<f32> {
    approx(ApproxOp::Tanh, x)
}

/// The accurate erf's polynomials with `ex2.approx` as the tail's exponential (the hardware has
/// no erf; CUDA has no fast one).
pub(super) fn erf(x: Var<f32>) -> Var<f32> {
    accurate::erf_with(x, exp)
}

/// `sin.approx.f32`.
pub(super) fn sin(x: Var<f32>) -> Var<f32> {
    approx(ApproxOp::Sin, x)
}

/// `cos.approx.f32`.
pub(super) fn cos(x: Var<f32>) -> Var<f32> {
    approx(ApproxOp::Cos, x)
}

/// `sqrt.approx.f32`.
pub(super) fn sqrt(x: Var<f32>) -> Var<f32> {
    approx(ApproxOp::Sqrt, x)
}

/// `rsqrt.approx.f32`.
pub(super) fn rsqrt(x: Var<f32>) -> Var<f32> {
    approx(ApproxOp::Rsqrt, x)
}

/// `rcp.approx.f32`.
pub(super) fn recip(x: Var<f32>) -> Var<f32> {
    approx(ApproxOp::Rcp, x)
}
