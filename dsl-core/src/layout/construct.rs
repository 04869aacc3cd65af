//! CuTe's layout builders used by the algebra: append/prepend, zip, tile_unzip, shape_div.

use super::arith::{ceil_div, product, Fail, Res};
use super::{IntTuple, Layout, LayoutError, Tiler};

/// CuTe's `append(layout, x)`: a layout with the modes of `l` followed by `x` (an int-shaped `l` is
/// its own single mode). Fails with [`LayoutError::Overflow`] when the result's size or span
/// leaves `i64`.
pub fn append(l: &Layout, x: &Layout) -> Result<Layout, LayoutError> {
    let mut modes = l.modes();
    modes.push(x.clone());
    Layout::from_modes_checked(modes).map_err(|f| f.at("append", format!("{l}, {x}")))
}

/// CuTe's `prepend(layout, x)`: `x` followed by the modes of `l`. Fails like [`append`].
pub fn prepend(l: &Layout, x: &Layout) -> Result<Layout, LayoutError> {
    let mut modes = vec![x.clone()];
    modes.extend(l.modes());
    Layout::from_modes_checked(modes).map_err(|f| f.at("prepend", format!("{l}, {x}")))
}

/// CuTe's `append<N>(layout)`: pad `l` with `1:0` modes up to rank `n`. A layout already of rank
/// `n` is returned unchanged (an int-shaped layout stays int-shaped when `n == 1`).
pub fn append_to_rank(l: &Layout, n: usize) -> Result<Layout, LayoutError> {
    let r = l.rank();
    if n < r {
        return Err(LayoutError::precondition(
            "append",
            format!("{l}, {n}"),
            format!("the layout has rank {r}, more than {n}"),
        ));
    }
    if n == r {
        return Ok(l.clone());
    }
    let mut modes = l.modes();
    modes.resize(n, Layout::unit());
    // 1:0 modes add nothing to the size or the span.
    Layout::from_modes_checked(modes).map_err(|f| f.at("append", format!("{l}, {n}")))
}

/// CuTe's `zip(layoutA, layoutB)`: `((a0,b0),(a1,b1),...)` for two layouts of equal rank; an
/// int-shaped `a` gives the rank-1 `((a,b))`. Fails with [`LayoutError::Overflow`] when the
/// result's size or span leaves `i64`.
///
/// Where C++ does not compile (a rank-1 tuple `a` with an int-shaped `b`, as `blocked_product`
/// meets for a block `((6,2)):((4,24))` and a tiler `4:1`), rute reads `b` as the rank-1 `(b)`.
pub fn zip(a: &Layout, b: &Layout) -> Result<Layout, LayoutError> {
    zip_impl(a, b).map_err(|f| f.at("zip", format!("{a}, {b}")))
}

fn zip_impl(a: &Layout, b: &Layout) -> Res<Layout> {
    if a.shape().is_int() {
        let pair = Layout::from_modes_checked(vec![a.clone(), b.clone()])?;
        return Layout::from_modes_checked(vec![pair]);
    }
    if a.rank() != b.rank() {
        return Err(Fail::Rule(format!(
            "mismatched ranks {} and {}",
            a.rank(),
            b.rank()
        )));
    }
    let pairs = a
        .modes()
        .into_iter()
        .zip(b.modes())
        .map(|(x, y)| Layout::from_modes_checked(vec![x, y]))
        .collect::<Res<_>>()?;
    Layout::from_modes_checked(pairs)
}

/// CuTe's `zip2_by` on a layout, guided by a tiler: `((A,a),((B,b),(C,c)),d)` with guide
/// `(X,(X,X))` becomes `((A,(B,C)),(a,(b,c),d))`.
fn zip2_by(l: &Layout, guide: &Tiler) -> Res<Layout> {
    match guide {
        Tiler::Layout(_) => {
            if l.shape().is_int() || l.rank() != 2 {
                return Err(Fail::Rule(format!("{l} is not a rank-2 layout")));
            }
            Ok(l.clone())
        }
        Tiler::Tuple(items) => {
            let modes = l.modes();
            if l.shape().is_int() || modes.len() < items.len() {
                return Err(Fail::Rule(format!(
                    "{l} has fewer modes than the tiler {guide}"
                )));
            }
            let (mut firsts, mut seconds) = (Vec::new(), Vec::new());
            for (m, g) in modes.iter().zip(items) {
                let split = zip2_by(m, g)?;
                firsts.push(split.mode(0)?);
                seconds.push(split.mode(1)?);
            }
            seconds.extend(modes[items.len()..].iter().cloned());
            // The modes of `l` regrouped: the size and span stay those of `l`.
            Layout::from_modes_checked(vec![
                Layout::from_modes_checked(firsts)?,
                Layout::from_modes_checked(seconds)?,
            ])
        }
    }
}

/// CuTe's `tile_unzip(layout, tiler)`: gather the rank-2 modes found at the tiler's terminals into
/// `((tiles...), (rests..., untouched modes...))`.
pub(crate) fn tile_unzip(l: &Layout, tiler: &Tiler) -> Res<Layout> {
    zip2_by(l, tiler)
}

/// The modes CuTe's slice `m(repeat<R>(_))` leaves of one mode `m` of rank `R`: CuTe's `repeat<1>(_)`
/// is `_` itself, so a rank-1 mode is kept whole (a one-mode tuple stays a tuple), while a wider mode
/// is spliced in mode by mode.
fn sliced_modes(m: Layout) -> Vec<Layout> {
    if m.rank() == 1 {
        vec![m]
    } else {
        m.modes()
    }
}

/// `(m0, m1.modes()...)`: CuTe's `result(_, repeat<R1>(_))`.
pub(crate) fn unpack_second(l: &Layout) -> Res<Layout> {
    let mut out = vec![l.mode(0)?];
    out.extend(sliced_modes(l.mode(1)?));
    Layout::from_modes_checked(out)
}

/// `(m0.modes()..., m1.modes()...)`: CuTe's `result(repeat<R0>(_), repeat<R1>(_))`.
pub(crate) fn unpack_both(l: &Layout) -> Res<Layout> {
    let mut out = sliced_modes(l.mode(0)?);
    out.extend(sliced_modes(l.mode(1)?));
    Layout::from_modes_checked(out)
}

/// CuTe's `shape_div(a, b)`: element-wise for two tuples (equal rank), `b` folded across the modes
/// of a tuple `a` (`shape_div((4,5,6),40) == (1,1,3)`), `shape_div(a, product(b))` for an int `a`.
/// For ints it requires `a % b == 0 || b % a == 0` (CuTe's divisibility condition) and returns
/// `ceil_div(a, b)`.
pub fn shape_div(a: &IntTuple, b: &IntTuple) -> Result<IntTuple, LayoutError> {
    fn go(a: &IntTuple, b: &IntTuple) -> Res<IntTuple> {
        match (a, b) {
            (IntTuple::Tuple(xs), IntTuple::Tuple(ys)) => {
                if xs.len() != ys.len() {
                    return Err(Fail::Rule("mismatched ranks".into()));
                }
                Ok(IntTuple::Tuple(
                    xs.iter()
                        .zip(ys)
                        .map(|(x, y)| go(x, y))
                        .collect::<Res<_>>()?,
                ))
            }
            (IntTuple::Tuple(xs), IntTuple::Int(_)) => {
                let mut rest = b.clone();
                let mut out = Vec::with_capacity(xs.len());
                for x in xs {
                    out.push(go(x, &rest)?);
                    rest = go(&rest, x)?;
                }
                Ok(IntTuple::Tuple(out))
            }
            (IntTuple::Int(_), IntTuple::Tuple(_)) => go(a, &IntTuple::Int(product(b)?)),
            (IntTuple::Int(x), IntTuple::Int(y)) => {
                if *x < 1 || *y < 1 || (x % y != 0 && y % x != 0) {
                    return Err(Fail::Rule(format!(
                        "divisibility condition: neither of {x} and {y} divides the other"
                    )));
                }
                Ok(IntTuple::Int(ceil_div(*x, *y)?))
            }
        }
    }
    go(a, b).map_err(|f| f.at("shape_div", format!("{a}, {b}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lay(s: &str) -> Layout {
        s.parse().unwrap()
    }

    #[test]
    fn builders() {
        assert_eq!(append_to_rank(&lay("4:1"), 1).unwrap().to_string(), "4:1");
        assert_eq!(
            append_to_rank(&lay("4:1"), 3).unwrap().to_string(),
            "(4,1,1):(1,0,0)"
        );
        assert_eq!(
            zip(&lay("(2,3):(1,2)"), &lay("(4,5):(6,24)"))
                .unwrap()
                .to_string(),
            "((2,4),(3,5)):((1,6),(2,24))"
        );
        assert_eq!(
            zip(&lay("2:1"), &lay("4:2")).unwrap().to_string(),
            "((2,4)):((1,2))"
        );
        assert_eq!(
            append(&lay("2:1"), &lay("4:2")).unwrap().to_string(),
            "(2,4):(1,2)"
        );
        assert_eq!(
            prepend(&lay("2:1"), &lay("4:2")).unwrap().to_string(),
            "(4,2):(2,1)"
        );
    }

    #[test]
    fn shape_div_cases() {
        let t = |s: &str| -> IntTuple { s.parse::<Layout>().unwrap().shape().clone() };
        assert_eq!(
            shape_div(&t("(4,5,6)"), &IntTuple::Int(40))
                .unwrap()
                .to_string(),
            "(1,1,3)"
        );
        assert_eq!(
            shape_div(&IntTuple::Int(2), &IntTuple::Int(8))
                .unwrap()
                .to_string(),
            "1"
        );
        assert!(shape_div(&IntTuple::Int(6), &IntTuple::Int(4)).is_err());
    }
}
