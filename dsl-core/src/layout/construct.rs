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

/// The error of a tiler with more modes than the layout it applies to.
pub(crate) fn too_many_modes(op: &'static str, a: &Layout, b: &Tiler, n: usize) -> LayoutError {
    LayoutError::precondition(
        op,
        format!("{a}, {b}"),
        format!(
            "the tiler has rank {n} but the layout only rank {}",
            a.rank()
        ),
    )
}

/// One of the operations that apply a tiler mode by mode (`logical_divide`, `logical_product`), on
/// one mode and one layout of the tiler.
pub(crate) type ByLayout = fn(&Layout, &Tiler) -> Result<Layout, LayoutError>;

/// CuTe's `tile_unzip(f(A, tiler), tiler)` (`zip2_by` guided by the tiler), for `f` an operation
/// that applies the tiler mode by mode and gives a rank-2 `(tile, rest)` for a layout tiler:
/// `((tiles...), (rests..., modes the tiler does not reach...))`. Mode by mode, so `f(A, tiler)`
/// is never made whole: the memory needed is the result's.
pub(crate) fn tile_unzip_of(
    op: &'static str,
    f: ByLayout,
    a: &Layout,
    b: &Tiler,
) -> Result<Layout, LayoutError> {
    let Tiler::Tuple(items) = b else {
        // Rank 2 already: CuTe's zip2_by leaves it as it is.
        return f(a, b);
    };
    if items.len() > a.rank() {
        return Err(too_many_modes(op, a, b, items.len()));
    }
    let mut modes = a.modes().into_iter();
    let (mut firsts, mut seconds) = (Vec::with_capacity(items.len()), Vec::new());
    for item in items {
        let Some(m) = modes.next() else { break };
        let (first, second) = two_modes(tile_unzip_of(op, f, &m, item)?)
            .map_err(|e| e.at(op, format!("{a}, {b}")))?;
        firsts.push(first);
        seconds.push(second);
    }
    seconds.extend(modes);
    // f's result with its modes regrouped: checked as f's result would be.
    let regroup = || {
        Layout::from_modes_checked(vec![
            Layout::from_modes_checked(firsts)?,
            Layout::from_modes_checked(seconds)?,
        ])
    };
    regroup().map_err(|e| e.at(op, format!("{a}, {b}")))
}

/// The modes CuTe's slice `m(repeat<R>(_))` leaves of one mode `m` of rank `R`: CuTe's `repeat<1>(_)`
/// is `_` itself, so a rank-1 mode is kept whole (a one-mode tuple stays a tuple), while a wider mode
/// is spliced in mode by mode.
fn sliced_modes(m: Layout) -> Vec<Layout> {
    if m.rank() == 1 {
        vec![m]
    } else {
        m.into_modes()
    }
}

/// The two modes of a rank-2 layout, moved out.
fn two_modes(l: Layout) -> Res<(Layout, Layout)> {
    let printed_rank = l.rank();
    let mut modes = l.into_modes().into_iter();
    match (modes.next(), modes.next(), modes.next()) {
        (Some(m0), Some(m1), None) => Ok((m0, m1)),
        _ => Err(Fail::Rule(format!(
            "a layout of rank {printed_rank} is not rank 2"
        ))),
    }
}

/// `(m0, m1.modes()...)`: CuTe's `result(_, repeat<R1>(_))`.
pub(crate) fn unpack_second(l: Layout) -> Res<Layout> {
    let (m0, m1) = two_modes(l)?;
    let mut out = vec![m0];
    out.extend(sliced_modes(m1));
    Layout::from_modes_checked(out)
}

/// `(m0.modes()..., m1.modes()...)`: CuTe's `result(repeat<R0>(_), repeat<R1>(_))`.
pub(crate) fn unpack_both(l: Layout) -> Res<Layout> {
    let (m0, m1) = two_modes(l)?;
    let mut out = sliced_modes(m0);
    out.extend(sliced_modes(m1));
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
