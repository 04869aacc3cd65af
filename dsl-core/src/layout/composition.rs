//! Composition `A o B`: the layout `i -> A(B(i))`.

use super::arith::{abs, ceil_div, flat_modes, mul, unwrap, Fail, Res};
use super::coalesce::coalesce_x;
use super::{IntTuple, Layout, LayoutError, Tiler};

/// CuTe's `detail::composition_impl` for a flat `A` (already `coalesce_x`-ed) and one mode of B.
fn compose_mode(a: &[(i64, i64)], bs: &IntTuple, bd: &IntTuple) -> Res<(IntTuple, IntTuple)> {
    let (s, d) = match (bs, bd) {
        (IntTuple::Tuple(ss), IntTuple::Tuple(ds)) => {
            // Right-distributivity: compose with each mode of B.
            let (rs, rd) = ss
                .iter()
                .zip(ds)
                .map(|(s, d)| compose_mode(a, s, d))
                .collect::<Res<Vec<_>>>()?
                .into_iter()
                .unzip();
            return Ok((IntTuple::Tuple(rs), IntTuple::Tuple(rd)));
        }
        (IntTuple::Int(s), IntTuple::Int(d)) => (*s, *d),
        _ => return Err(Fail::Rule("B's shape and stride are not congruent".into())),
    };
    if d == 0 {
        return Ok((IntTuple::Int(s), IntTuple::Int(0)));
    }
    let Some((&(_, last_d), init)) = a.split_last() else {
        return Err(Fail::Rule("A has no modes".into()));
    };
    if init.is_empty() {
        return Ok((IntTuple::Int(s), IntTuple::Int(mul(d, last_d)?)));
    }
    let (mut out_s, mut out_d) = (Vec::new(), Vec::new());
    let (mut rest_s, mut rest_d) = (s, d);
    for &(cs, cd) in init {
        if !(rest_d % cs == 0 || rest_d < cs) {
            return Err(Fail::Rule(format!(
                "stride divisibility condition: the extent {cs} of A's coalesced mode {cs}:{cd} \
                 does not divide B's remaining stride {rest_d}, which is not smaller than it"
            )));
        }
        let next_s = ceil_div(cs, abs(rest_d)?)?;
        let next_d = mul(ceil_div(abs(rest_d)?, cs)?, rest_d.signum())?;
        if next_s != 1 && rest_s != 1 {
            let new_s = next_s.min(rest_s);
            if rest_s % new_s != 0 {
                return Err(Fail::Rule(format!(
                    "shape divisibility condition: {new_s} (what A's mode {cs}:{cd} leaves of B's \
                     stride) does not divide B's remaining extent {rest_s}"
                )));
            }
            out_s.push(IntTuple::Int(new_s));
            out_d.push(IntTuple::Int(mul(rest_d, cd)?));
            rest_s /= new_s;
        }
        rest_d = next_d;
    }
    if out_s.is_empty() {
        return Ok((IntTuple::Int(rest_s), IntTuple::Int(mul(rest_d, last_d)?)));
    }
    if rest_s == 1 {
        return Ok((
            unwrap(IntTuple::Tuple(out_s)),
            unwrap(IntTuple::Tuple(out_d)),
        ));
    }
    out_s.push(IntTuple::Int(rest_s));
    out_d.push(IntTuple::Int(mul(rest_d, last_d)?));
    Ok((IntTuple::Tuple(out_s), IntTuple::Tuple(out_d)))
}

/// CuTe's `composition(A, B)`: the layout `R = A o B`.
///
/// Post-conditions: `R` is congruent to `B` mode by mode (each int mode of B may become a tuple),
/// and `R(i) == A(B(i))` for every `i < size(B)`, where A is read with its last mode extending past
/// its size, as in CuTe (A is first coalesced with `coalesce_x`).
///
/// Fails with [`LayoutError::Precondition`] where CuTe's static assertions fail: the *stride
/// divisibility condition* (a stride of B must be divisible by, or smaller than, each coalesced
/// extent of A it passes) and the *shape divisibility condition*; with [`LayoutError::Overflow`]
/// when a stride leaves `i64`. Stride-0 modes of B stay stride 0.
///
/// ```
/// use dsl_core::layout::{composition, Layout};
/// let a: Layout = "(6,2):(8,2)".parse().unwrap();
/// let b: Layout = "(4,3):(3,1)".parse().unwrap();
/// assert_eq!(composition(&a, &b).unwrap().to_string(), "((2,2),3):((24,2),8)");
/// ```
pub fn composition(a: &Layout, b: &Layout) -> Result<Layout, LayoutError> {
    let flat = flat_modes(&coalesce_x(a));
    let (s, d) = compose_mode(&flat, b.shape(), b.stride())
        .map_err(|f| f.at("composition", format!("{a}, {b}")))?;
    Ok(Layout::from_parts(s, d))
}

/// CuTe's `composition(A, tiler)`.
///
/// A [`Tiler::Layout`] composes the whole of A. A [`Tiler::Tuple`] of rank `r <= rank(A)` composes
/// mode `i` of A with item `i` (recursively) and, as CuTe's C++ does, *drops* the modes of A that
/// the tiler does not reach: the result has rank `r`. (pycute keeps those modes; C++ wins.)
///
/// ```
/// use dsl_core::layout::{composition_tiler, Layout, Tiler};
/// let a: Layout = "(12,(4,8)):(59,(13,1))".parse().unwrap();
/// let t = Tiler::Tuple(vec![
///     Tiler::Layout("3:4".parse().unwrap()),
///     Tiler::Layout("8:2".parse().unwrap()),
/// ]);
/// assert_eq!(composition_tiler(&a, &t).unwrap().to_string(), "(3,(2,4)):(236,(26,1))");
/// ```
pub fn composition_tiler(a: &Layout, b: &Tiler) -> Result<Layout, LayoutError> {
    match b {
        Tiler::Layout(l) => composition(a, l),
        Tiler::Tuple(items) => {
            let modes = a.modes();
            if items.len() > modes.len() {
                return Err(LayoutError::precondition(
                    "composition",
                    format!("{a}, {b}"),
                    format!(
                        "the tiler has rank {} but the layout only rank {}",
                        items.len(),
                        modes.len()
                    ),
                ));
            }
            let out = items
                .iter()
                .zip(modes)
                .map(|(t, m)| composition_tiler(&m, t))
                .collect::<Result<Vec<_>, _>>()?;
            Ok(Layout::from_modes(out))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lay(s: &str) -> Layout {
        s.parse().unwrap()
    }

    fn comp(a: &str, b: &str) -> String {
        match composition(&lay(a), &lay(b)) {
            Ok(l) => l.to_string(),
            Err(e) => format!("Err: {e}"),
        }
    }

    #[test]
    fn cute_doc_examples() {
        assert_eq!(comp("(6,2):(8,2)", "(4,3):(3,1)"), "((2,2),3):((24,2),8)");
        assert_eq!(comp("20:2", "(5,4):(4,1)"), "(5,4):(8,2)");
        // The doc prints `(_5,(_2,_2)):(_16,(_80,_4))` for static integers, rute's only kind.
        assert_eq!(
            comp("(10,2):(16,4)", "(5,4):(1,5)"),
            "(5,(2,2)):(16,(80,4))"
        );
        let a = lay("(12,(4,8)):(59,(13,1))");
        let t = Tiler::from_shape(&[3, 8]).unwrap();
        assert_eq!(
            composition_tiler(&a, &t).unwrap().to_string(),
            "(3,(4,2)):(59,(13,1))"
        );
    }

    #[test]
    fn special_cases() {
        // Stride-0 modes of B are kept as they are.
        assert_eq!(comp("(4,8):(1,4)", "(2,3):(0,1)"), "(2,3):(0,1)");
        // An int A scales B's stride.
        assert_eq!(comp("8:3", "(2,2):(1,2)"), "(2,2):(3,6)");
        // A's last mode extends past its size; coalesce_x keeps a trailing 1-mode (pycute: 8:1).
        assert_eq!(comp("(4,1):(1,0)", "8:1"), "(4,2):(1,0)");
        assert_eq!(comp("(4,3):(3,1)", "12:1"), "(4,3):(3,1)");
    }

    #[test]
    fn divisibility_failures_are_errors() {
        let e = comp("(4,4):(1,5)", "2:6");
        assert!(e.contains("stride divisibility"), "{e}");
        let e = comp("(4,4):(1,5)", "3:2");
        assert!(e.contains("shape divisibility"), "{e}");
        // Hostile strides overflow into an error, not a panic.
        let e = comp("(2,4):(1,4611686018427387904)", "4:4");
        assert!(e.contains("overflow"), "{e}");
    }

    #[test]
    fn tiler_drops_unreached_modes_like_cute() {
        let a = lay("(4,6,2):(1,4,24)");
        let t = Tiler::from_shape(&[2]).unwrap();
        assert_eq!(composition_tiler(&a, &t).unwrap().to_string(), "(2):(1)");
        let too_long = Tiler::from_shape(&[2, 2, 2, 2]).unwrap();
        assert!(composition_tiler(&a, &too_long).is_err());
    }
}
