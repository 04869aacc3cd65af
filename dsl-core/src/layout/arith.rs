//! Checked integer arithmetic and small tuple/layout builders shared by the algebra operations.
//!
//! The algebra's inner functions return [`Fail`], which says *what* went wrong but not in which
//! public operation; the public entry points attach their CuTe name and arguments with [`Fail::at`].

use super::{IntTuple, Layout, LayoutError};

/// Why an inner step of an operation failed.
#[derive(Debug)]
pub(crate) enum Fail {
    /// A value left the range of `i64`.
    Overflow,
    /// A precondition of the operation, as a sentence.
    Rule(String),
    /// An error already attributed to a nested public operation.
    Inner(LayoutError),
}

impl From<LayoutError> for Fail {
    fn from(e: LayoutError) -> Self {
        Fail::Inner(e)
    }
}

impl Fail {
    /// Attribute the failure to the public operation `op` called with `args`.
    pub(crate) fn at(self, op: &'static str, args: impl Into<String>) -> LayoutError {
        match self {
            Fail::Overflow => LayoutError::Overflow {
                op,
                args: args.into(),
            },
            Fail::Rule(rule) => LayoutError::precondition(op, args, rule),
            Fail::Inner(e) => e,
        }
    }
}

/// Result of an inner step.
pub(crate) type Res<T> = Result<T, Fail>;

/// `a * b`, or [`Fail::Overflow`].
pub(crate) fn mul(a: i64, b: i64) -> Res<i64> {
    a.checked_mul(b).ok_or(Fail::Overflow)
}

/// `a + b`, or [`Fail::Overflow`].
pub(crate) fn add(a: i64, b: i64) -> Res<i64> {
    a.checked_add(b).ok_or(Fail::Overflow)
}

/// `|a|`, or [`Fail::Overflow`] for `i64::MIN`.
pub(crate) fn abs(a: i64) -> Res<i64> {
    a.checked_abs().ok_or(Fail::Overflow)
}

/// CuTe's `ceil_div` of non-negative `a` by positive `b`, without the overflow of `(a + b - 1) / b`.
pub(crate) fn ceil_div(a: i64, b: i64) -> Res<i64> {
    if b <= 0 || a < 0 {
        return Err(Fail::Rule(format!(
            "ceil_div({a}, {b}) needs a non-negative dividend and a positive divisor"
        )));
    }
    Ok(a / b + i64::from(a % b != 0))
}

/// The product of all integers of `t` (CuTe's `product` / `size`), checked.
pub(crate) fn product(t: &IntTuple) -> Res<i64> {
    match t {
        IntTuple::Int(v) => Ok(*v),
        IntTuple::Tuple(ms) => ms.iter().try_fold(1i64, |acc, m| mul(acc, product(m)?)),
    }
}

/// CuTe's `size(layout)`, checked.
pub(crate) fn size(l: &Layout) -> Res<i64> {
    product(l.shape())
}

/// CuTe's `cosize(layout)`: `sum_i (s_i - 1) * |d_i| + 1`, checked. CuTe takes the absolute value
/// of each stride, so a layout with negative strides has the cosize of its mirror image.
pub(crate) fn cosize(l: &Layout) -> Res<i64> {
    let shapes = l.shape().flatten_ints();
    let strides = l.stride().flatten_ints();
    shapes
        .iter()
        .zip(&strides)
        .try_fold(1i64, |acc, (&s, &d)| add(acc, mul(s - 1, abs(d)?)?))
}

/// CuTe's `unwrap`: strip one-element tuples until a non-tuple or a tuple of rank != 1 remains.
pub(crate) fn unwrap(t: IntTuple) -> IntTuple {
    match t {
        IntTuple::Tuple(mut v) if v.len() == 1 => unwrap(v.remove(0)),
        other => other,
    }
}

/// The flat (shape, stride) pairs of a layout, depth first.
pub(crate) fn flat_modes(l: &Layout) -> Vec<(i64, i64)> {
    l.shape()
        .flatten_ints()
        .into_iter()
        .zip(l.stride().flatten_ints())
        .collect()
}

/// A layout from flat (shape, stride) pairs: one pair gives an int layout `s:d`, several a flat tuple.
pub(crate) fn from_flat(modes: &[(i64, i64)]) -> Res<Layout> {
    if let [(s, d)] = modes {
        Layout::checked(IntTuple::Int(*s), IntTuple::Int(*d))
    } else {
        Layout::checked(
            IntTuple::Tuple(modes.iter().map(|m| IntTuple::Int(m.0)).collect()),
            IntTuple::Tuple(modes.iter().map(|m| IntTuple::Int(m.1)).collect()),
        )
    }
}

/// CuTe's `compact_major<LayoutLeft>(shape, current)` for static shapes: column-major strides
/// starting at `current`, where a mode of extent 1 gets stride 0 (as CuTe does for a static `_1`).
pub(crate) fn compact_left(shape: &IntTuple, current: i64) -> Res<IntTuple> {
    fn go(s: &IntTuple, cur: &mut i64) -> Res<IntTuple> {
        match s {
            IntTuple::Int(1) => Ok(IntTuple::Int(0)),
            IntTuple::Int(v) => {
                let here = *cur;
                *cur = mul(*cur, *v)?;
                Ok(IntTuple::Int(here))
            }
            IntTuple::Tuple(ms) => Ok(IntTuple::Tuple(
                ms.iter().map(|m| go(m, cur)).collect::<Res<_>>()?,
            )),
        }
    }
    let mut cur = current;
    go(shape, &mut cur)
}

/// CuTe's `exchange_sort` of indices by key, as its `SortByKey` does. It is not a stable sort:
/// which of several equal keys comes first matters to the inverses, so rute copies CuTe's order.
pub(crate) fn exchange_sort_by_key(keys: &[i64]) -> Vec<usize> {
    let mut kv: Vec<(i64, usize)> = keys.iter().copied().zip(0..).collect();
    for i in 0..kv.len() {
        for j in i + 1..kv.len() {
            if kv[j].0 < kv[i].0 {
                kv.swap(i, j);
            }
        }
    }
    kv.into_iter().map(|(_, i)| i).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exchange_sort_matches_cute_order_on_ties() {
        // keys [1,1,0]: i=0 swaps with j=2, giving [(0,2),(1,1),(1,0)].
        assert_eq!(exchange_sort_by_key(&[1, 1, 0]), vec![2, 1, 0]);
        assert_eq!(exchange_sort_by_key(&[3, 1, 2]), vec![1, 2, 0]);
    }

    #[test]
    fn ceil_div_does_not_overflow() {
        assert_eq!(ceil_div(i64::MAX, 2).unwrap(), i64::MAX / 2 + 1);
        assert_eq!(ceil_div(7, 2).unwrap(), 4);
        assert!(ceil_div(1, 0).is_err());
    }
}
