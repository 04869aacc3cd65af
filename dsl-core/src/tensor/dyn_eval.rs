//! Evaluating a layout at a device index: the arithmetic a partition's thread offset costs.

use crate::kernel::Var;
use crate::layout::{Layout, LayoutError, Swizzle};

/// `swizzle(x)` for a device offset `x` ([`Swizzle::apply`] emitted: a mask, a shift, an xor;
/// nothing for the identity).
pub fn swizzle_dyn(swizzle: &Swizzle, x: Var<u32>) -> Var<u32> {
    if swizzle.is_identity() {
        return x;
    }
    let y = x & (swizzle.yyy_mask() as u32);
    let sh = swizzle.shift();
    let y = if sh >= 0 {
        y >> (sh as u32)
    } else {
        y << sh.unsigned_abs()
    };
    x ^ y
}

/// `layout(x)` for a device index `x` known to be `< bound`, emitted as shifts and masks where the
/// extents are powers of two (division and remainder otherwise); modes of extent 1 or stride 0
/// emit nothing, and the final `% extent` is left out where `bound` makes it a no-op.
///
/// Post-condition: for every host `x < bound`, the emitted value equals `layout.eval(x)`.
pub fn eval_dyn(layout: &Layout, x: Var<u32>, bound: i64) -> Result<Var<u32>, LayoutError> {
    let shape = layout.shape().flatten_ints();
    let stride = layout.stride().flatten_ints();
    let mut div = 1i64;
    let mut acc: Var<u32> = Var::konst(0);
    for (&s, &d) in shape.iter().zip(&stride) {
        if s != 1 && d != 0 {
            if d < 0 || d > i64::from(u32::MAX) {
                return Err(LayoutError::precondition(
                    "eval_dyn",
                    layout.to_string(),
                    "device offsets are unsigned 32-bit: strides must be in 0..2^32",
                ));
            }
            let mut c = if div == 1 {
                x
            } else if div.count_ones() == 1 {
                x >> (div.trailing_zeros())
            } else {
                x / (div as u32)
            };
            let next = div.saturating_mul(s);
            if next < bound {
                c = if s.count_ones() == 1 {
                    c & ((s - 1) as u32)
                } else {
                    c % (s as u32)
                };
            }
            acc = add(acc, scale(c, d as u32));
        }
        div = div.saturating_mul(s);
    }
    Ok(acc)
}

/// `a + b` without an instruction where either is the constant 0. (Not `+=`: that would write
/// into `a`'s register, which copies of a tensor share.)
pub(crate) fn add(a: Var<u32>, b: Var<u32>) -> Var<u32> {
    match (a.as_const(), b.as_const()) {
        (Some(0), _) => b,
        (_, Some(0)) => a,
        _ => a + b,
    }
}

/// `a * c` for a host `c`: nothing for 1, a shift for powers of two.
pub(crate) fn scale(a: Var<u32>, c: u32) -> Var<u32> {
    match c {
        0 => Var::konst(0),
        1 => a,
        c if c.is_power_of_two() => a << c.trailing_zeros(),
        c => a * c,
    }
}
