//! Right and left inverses of a layout.

use super::arith::{exchange_sort_by_key, flat_modes, mul, Fail, Res};
use super::coalesce::coalesce;
use super::{IntTuple, Layout, LayoutError};

/// Flat `(extent, stride)` modes, and the exclusive prefix products of their extents.
type ModesAndPrefix = (Vec<(i64, i64)>, Vec<i64>);

/// The coalesced flat modes and the exclusive prefix products of their extents
/// (`[1, s0, s0*s1, ...]`, one longer than the modes).
fn coalesced_with_preprod(l: &Layout) -> Res<ModesAndPrefix> {
    let modes = flat_modes(&coalesce(l));
    let mut pre = vec![1i64];
    for &(s, _) in &modes {
        let last = pre[pre.len() - 1];
        pre.push(mul(last, s)?);
    }
    Ok((modes, pre))
}

fn build(shapes: Vec<i64>, strides: Vec<i64>) -> Res<Layout> {
    Ok(coalesce(&Layout::checked(
        IntTuple::ints(&shapes),
        IntTuple::ints(&strides),
    )?))
}

fn right_inverse_impl(l: &Layout) -> Res<Layout> {
    let (modes, pre) = coalesced_with_preprod(l)?;
    let strides: Vec<i64> = modes.iter().map(|m| m.1).collect();
    let (mut shapes, mut out_strides) = (vec![1], vec![0]);
    let mut curr = 1i64;
    for i in exchange_sort_by_key(&strides) {
        let (s, d) = modes[i];
        if d == curr {
            shapes.push(s);
            out_strides.push(pre[i]);
            curr = mul(s, d)?;
        }
    }
    build(shapes, out_strides)
}

/// CuTe's `right_inverse(L)`: the largest `R` built from L's stride-1-reachable chain of modes
/// (`d == 1`, then `d == s*d` of the previous, in stride order) such that `L(R(i)) == i` for every
/// `i < size(R)`. It is coalesced; `1:0` when L has no stride-1 mode.
///
/// ```
/// use dsl_core::layout::{right_inverse, Layout};
/// let l: Layout = "(4,8):(8,1)".parse().unwrap();
/// assert_eq!(right_inverse(&l).unwrap().to_string(), "(8,4):(4,1)");
/// ```
pub fn right_inverse(l: &Layout) -> Result<Layout, LayoutError> {
    right_inverse_impl(l).map_err(|f| f.at("right_inverse", l.to_string()))
}

fn left_inverse_impl(l: &Layout) -> Res<Layout> {
    let (modes, pre) = coalesced_with_preprod(l)?;
    let strides: Vec<i64> = modes.iter().map(|m| m.1).collect();
    if let Some(&(s, d)) = modes.iter().find(|m| m.1 < 0) {
        return Err(Fail::Rule(format!(
            "the mode {s}:{d} has a negative stride; left_inverse needs non-negative strides"
        )));
    }
    let sorted = exchange_sort_by_key(&strides);
    let (mut shapes, mut out_strides) = (Vec::new(), vec![0i64]);
    // The product of `shapes` so far: the stride of the previous mode in sorted order.
    let mut reach = 1i64;
    for &i in &sorted {
        let (s, d) = modes[i];
        if d == 0 {
            continue;
        }
        if d % reach != 0 {
            return Err(Fail::Rule(format!(
                "left inverse divisibility condition: the stride {d} of mode {s}:{d} is not a \
                 multiple of the previous stride {reach}"
            )));
        }
        shapes.push(d / reach);
        reach = d;
        out_strides.push(pre[i]);
    }
    // The last mode in stride order keeps its extent: it is the one the inverse extends.
    let last = sorted.last().map_or(1, |&i| modes[i].0);
    shapes.push(last);
    build(shapes, out_strides)
}

/// CuTe's `left_inverse(L)`: a layout `R` with `R(L(i)) == i` for every `i < size(L)` when L is
/// injective (for any L, `L(R(L(i))) == L(i)`). Follows the current C++ construction, not pycute's
/// `right_inverse(make_layout(L, complement(L)))`: modes in stride order, each extent the ratio of
/// consecutive strides, the first paired with stride 0. The result is coalesced.
///
/// Fails with a [`LayoutError::Precondition`] where C++'s static assertion fails (a stride not a
/// multiple of the previous stride in sorted order) and for negative strides.
///
/// ```
/// use dsl_core::layout::{left_inverse, Layout};
/// let l: Layout = "(2,3):(3,1)".parse().unwrap();
/// assert_eq!(left_inverse(&l).unwrap().to_string(), "(3,2):(2,1)");
/// ```
pub fn left_inverse(l: &Layout) -> Result<Layout, LayoutError> {
    left_inverse_impl(l).map_err(|f| f.at("left_inverse", l.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lay(s: &str) -> Layout {
        s.parse().unwrap()
    }

    #[test]
    fn right_inverse_examples() {
        assert_eq!(
            right_inverse(&lay("(4,8):(8,1)")).unwrap().to_string(),
            "(8,4):(4,1)"
        );
        assert_eq!(
            right_inverse(&lay("(2,2):(1,4)")).unwrap().to_string(),
            "2:1"
        );
        assert_eq!(right_inverse(&lay("4:2")).unwrap().to_string(), "1:0");
        assert_eq!(
            right_inverse(&lay("(2,4):(0,1)")).unwrap().to_string(),
            "4:2"
        );
        assert_eq!(
            right_inverse(&lay("(3,2):(2,1)")).unwrap().to_string(),
            "(2,3):(3,1)"
        );
    }

    #[test]
    fn left_inverse_examples() {
        assert_eq!(
            left_inverse(&lay("(2,2):(1,4)")).unwrap().to_string(),
            "(4,2):(1,2)"
        );
        assert_eq!(
            left_inverse(&lay("4:2")).unwrap().to_string(),
            "(2,4):(0,1)"
        );
        let e = left_inverse(&lay("(2,2):(2,3)")).unwrap_err().to_string();
        assert!(e.contains("divisibility"), "{e}");
        assert!(left_inverse(&lay("4:-1")).is_err());
    }
}
