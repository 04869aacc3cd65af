//! Complement: the layout of the "repetitions" of A that fill a codomain.

use super::arith::{ceil_div, compact_left, flat_modes, from_flat, mul, product, Fail, Res};
use super::coalesce::{coalesce, filter};
use super::{IntTuple, Layout, LayoutError};

/// CuTe's `ceil_div(cotarget, n)` for a shape cotarget: an int divides, a tuple folds `n` across its
/// modes from the left, each mode taking what it can.
fn ceil_div_shape(target: &IntTuple, n: i64) -> Res<IntTuple> {
    match target {
        IntTuple::Int(t) => Ok(IntTuple::Int(ceil_div(*t, n)?)),
        IntTuple::Tuple(ms) => {
            let mut rest = n;
            let mut out = Vec::with_capacity(ms.len());
            for m in ms {
                let here = product(m)?;
                out.push(IntTuple::Int(ceil_div(here, rest)?));
                rest = ceil_div(rest, here)?;
            }
            Ok(IntTuple::Tuple(out))
        }
    }
}

/// CuTe's `detail::complement` on a filtered layout and a shape cotarget.
fn complement_impl(l: &Layout, cotarget: &IntTuple) -> Res<Layout> {
    if cotarget.flatten_ints().iter().any(|&c| c < 1) {
        return Err(Fail::Rule(format!(
            "the cotarget {cotarget} must have every extent at least 1"
        )));
    }
    let f = filter(l);
    if let IntTuple::Int(0) = f.stride() {
        // Nothing but broadcast or extent-1 modes: the complement is the whole cotarget.
        let n = product(cotarget)?;
        let s = IntTuple::Int(n);
        let d = compact_left(&s, 1)?;
        return Layout::checked(s, d);
    }
    let mut modes = flat_modes(&f);
    if let Some(&(s, d)) = modes.iter().find(|m| m.1 < 0) {
        return Err(Fail::Rule(format!(
            "the mode {s}:{d} has a negative stride; complement needs non-negative strides"
        )));
    }
    // Sort by stride (CuTe's fold over min/find/remove), checking injectivity as it goes.
    let mut out: Vec<(i64, i64)> = Vec::with_capacity(modes.len() + 1);
    let mut last_stride = 1i64;
    while let Some(min_idx) = (0..modes.len()).min_by_key(|&i| (modes[i].1, i)) {
        let (s, d) = modes[min_idx];
        let new_shape = d / last_stride;
        if new_shape == 0 {
            return Err(Fail::Rule(format!(
                "non-injective layout: the mode {s}:{d} overlaps the modes of smaller stride, \
                 which reach up to offset {last_stride}"
            )));
        }
        out.push((new_shape, last_stride));
        last_stride = mul(d, s)?;
        modes.remove(min_idx);
    }
    let rest_shape = product(&ceil_div_shape(cotarget, last_stride)?)?;
    let rest_stride = compact_left(&IntTuple::Int(rest_shape), last_stride)?;
    out.push((rest_shape, rest_stride.as_int().unwrap_or(0)));
    Ok(coalesce(&from_flat(&out)?))
}

/// CuTe's `complement(A, cotarget)` with a shape cotarget, as `logical_divide` uses it with
/// `shape(coalesce(A))`. A tuple cotarget rounds up mode by mode, which can differ from rounding up
/// its product when the tile does not divide it.
pub fn complement_shape(l: &Layout, cotarget: &IntTuple) -> Result<Layout, LayoutError> {
    complement_impl(l, cotarget).map_err(|f| f.at("complement", format!("{l}, {cotarget}")))
}

/// CuTe's `complement(A, cotarget)`: the layout `C` of the repetitions of A that fill `[0, M)`.
///
/// Post-conditions (C++): `C` is coalesced and strictly increasing; `C(i) != A(j)` for every
/// `i >= 1` and every `j`; `cosize(make_layout(A, C)) >= M`. When A (without its stride-0 and
/// extent-1 modes) is injective with each stride, in increasing order, a multiple of the previous
/// stride times its extent, and `M` is a multiple of the largest `s*d` among A's modes,
/// `make_layout(A, C)` is a bijection onto `[0, M)`.
///
/// Stride-0 and extent-1 modes of A are ignored (`complement(4:0, 8) == 8:1`). Fails with a
/// [`LayoutError::Precondition`] when A is not injective in CuTe's sense (a stride smaller than
/// the reach of the smaller-stride modes), when a stride is negative, or when `cotarget < 1`.
///
/// ```
/// use dsl_core::layout::{complement, Layout};
/// let a: Layout = "4:2".parse().unwrap();
/// assert_eq!(complement(&a, 24).unwrap().to_string(), "(2,3):(1,8)");
/// ```
pub fn complement(l: &Layout, cotarget: i64) -> Result<Layout, LayoutError> {
    complement_shape(l, &IntTuple::Int(cotarget))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn comp(a: &str, m: i64) -> String {
        match complement(&a.parse().unwrap(), m) {
            Ok(l) => l.to_string(),
            Err(e) => format!("Err: {e}"),
        }
    }

    #[test]
    fn cute_doc_examples() {
        assert_eq!(comp("4:1", 24), "6:4");
        assert_eq!(comp("6:4", 24), "4:1");
        assert_eq!(comp("(4,6):(1,4)", 24), "1:0");
        assert_eq!(comp("4:2", 24), "(2,3):(1,8)");
        assert_eq!(comp("(2,4):(1,6)", 24), "3:2");
        assert_eq!(comp("(2,2):(1,6)", 24), "(3,2):(2,12)");
    }

    #[test]
    fn zero_strides_and_errors() {
        assert_eq!(comp("4:0", 8), "8:1");
        assert_eq!(comp("4:0", 1), "1:0");
        assert_eq!(comp("(4,2):(0,1)", 8), "4:2");
        assert!(comp("(3,2):(1,2)", 24).contains("non-injective"));
        assert!(comp("4:-1", 8).contains("negative"));
        assert!(comp("4:1", 0).contains("cotarget"));
        // C++ truncates min_stride / last_stride: (2,2):(1,3) leaves a gap it does not fill.
        assert_eq!(comp("(2,2):(1,3)", 24), "4:6");
    }

    #[test]
    fn tuple_cotarget_rounds_mode_by_mode() {
        let two: Layout = "2:1".parse().unwrap();
        let c = complement_shape(&two, &IntTuple::ints(&[3, 5])).unwrap();
        assert_eq!(c.to_string(), "10:2");
        assert_eq!(complement(&two, 15).unwrap().to_string(), "8:2");
    }
}
