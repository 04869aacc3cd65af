//! Overflow-checked evaluation, so that no input to the calculator can panic on arithmetic.
//!
//! Every layout is range-checked when it is made ([`Layout::new`]: its size and its largest offset
//! fit in an `i64`), and the algebra's operations refuse results that would not be. What is left to
//! check here is a composed layout's offset on top of its inner layout's span, and evaluation at
//! coordinates past the size.

use crate::layout::{ComposedLayout, IntTuple, Layout, LayoutError};

/// The most offsets `--values` will list.
pub const MAX_VALUES: i64 = 1 << 20;

fn overflow(what: &str) -> LayoutError {
    LayoutError::Overflow {
        op: "layout",
        args: what.to_string(),
    }
}

/// The most integers the shape of a value the calculator makes may have. An operation's result is
/// bounded by its arguments, but `select` repeats modes, so nested `select(make_layout(..), 0, 0,
/// ...)` grow tenfold a level: 290 characters made 44 million integers (712 MB).
pub const MAX_MODES: usize = 1 << 22;

/// The integers of `t`.
pub fn leaves(t: &IntTuple) -> usize {
    match t {
        IntTuple::Int(_) => 1,
        IntTuple::Tuple(ms) => ms.iter().map(leaves).fold(0, usize::saturating_add),
    }
}

/// Ok when a result of `count` integers is one the calculator keeps.
pub fn check_count(count: usize) -> Result<(), LayoutError> {
    if count > MAX_MODES {
        return Err(LayoutError::TooLarge {
            count,
            limit: MAX_MODES,
        });
    }
    Ok(())
}

/// Ok when `size(l)` and every `|l(i)|` for `i < size(l)` fit in an `i64`, which every layout
/// keeps (see [`Layout::check_range`]), and `l` has at most [`MAX_MODES`] integers.
pub fn check_layout(l: &Layout) -> Result<(), LayoutError> {
    l.check_range()?;
    check_count(leaves(l.shape()))
}

/// `check_layout` of a composed layout's inner layout, and room for its offset.
pub fn check_composed(c: &ComposedLayout) -> Result<(), LayoutError> {
    check_layout(&c.layout)?;
    let strides = c.layout.stride().flatten_ints();
    let extents = c.layout.shape().flatten_ints();
    let span: i64 = extents
        .iter()
        .zip(&strides)
        .map(|(e, d)| (e - 1) * d.abs())
        .sum();
    c.offset
        .checked_abs()
        .and_then(|o| o.checked_add(span))
        .map(|_| ())
        .ok_or_else(|| overflow(&c.to_string()))
}

/// CuTe's `crd2idx(crd, shape, stride)`, every step checked (see [`IntTuple::crd2idx`]).
pub fn crd2idx(crd: &IntTuple, shape: &IntTuple, stride: &IntTuple) -> Result<i64, LayoutError> {
    shape.crd2idx(crd, stride)
}

/// The offset of coordinate `crd` (an int index or a tuple) in `l`, checked.
pub fn eval_layout(l: &Layout, crd: &IntTuple) -> Result<i64, LayoutError> {
    l.crd2idx(crd)
}

/// The offset of coordinate `crd` in a composed layout, checked.
pub fn eval_composed(c: &ComposedLayout, crd: &IntTuple) -> Result<i64, LayoutError> {
    let inner = eval_layout(&c.layout, crd)?;
    let shifted = c.offset.checked_add(inner).ok_or(LayoutError::Overflow {
        op: "eval",
        args: format!("{c}, {crd}"),
    })?;
    Ok(c.swizzle.apply(shifted))
}

/// `size(l)`, refusing more than [`MAX_VALUES`] (a list the terminal can take).
pub fn listable_size(what: &str, shape: &IntTuple) -> Result<i64, LayoutError> {
    match shape.checked_product() {
        Some(n) if n <= MAX_VALUES => Ok(n),
        _ => Err(LayoutError::precondition(
            "values",
            what,
            format!("lists at most {MAX_VALUES} offsets"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agrees_with_the_algebra_in_range() {
        for s in ["((2,4),8):((1,2),8)", "(3,4):(0,-1)", "8:3", "(8):(1)"] {
            let l: Layout = s.parse().unwrap();
            check_layout(&l).unwrap();
            for i in 0..l.size() {
                let got = eval_layout(&l, &IntTuple::Int(i)).unwrap();
                assert_eq!(got, l.eval(i).unwrap(), "{s} at {i}");
            }
        }
    }

    #[test]
    fn overflow_is_refused() {
        // Layouts whose size or span overflow are refused when they are made.
        for s in [
            "(4294967296,4294967296):(1,4294967296)",
            "(2,2):(4611686018427387904,4611686018427387904)",
            "2:-9223372036854775808",
        ] {
            let e = s.parse::<Layout>().unwrap_err().to_string();
            assert!(e.contains("overflow"), "{s}: {e}");
        }
        let l: Layout = "8:1000000000000".parse().unwrap();
        check_layout(&l).unwrap();
        assert!(eval_layout(&l, &IntTuple::Int(i64::MAX / 2)).is_err());
    }
}
