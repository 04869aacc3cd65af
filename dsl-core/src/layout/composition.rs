//! Composition `A o B`: the layout `i -> A(B(i))`.

use super::arith::{abs, add, ceil_div, mul, unwrap, Fail, Res};
use super::coalesce::coalesce_x;
use super::{IntTuple, Layout, LayoutError, Tiler};

/// CuTe's `detail::composition_impl` for a flat `A` (already `coalesce_x`-ed) and one mode of B.
///
/// `reach[j]` accumulates, over B's modes, the largest coordinate each B mode uses in A's mode `j`;
/// see [`composition`] for why. A's modes from `extending` on are those past which B may run
/// (the last, and the one before a kept extent-1 mode): there the result only has to agree with
/// `A o B` below `size(A)`.
fn compose_mode(
    a: &[(i64, i64)],
    bs: &IntTuple,
    bd: &IntTuple,
    reach: &mut [i64],
    b_is_one_mode: bool,
    extending: usize,
) -> Res<(IntTuple, IntTuple)> {
    let (s, d) = match (bs, bd) {
        (IntTuple::Tuple(ss), IntTuple::Tuple(ds)) => {
            // Right-distributivity: compose with each mode of B.
            let (rs, rd) = ss
                .iter()
                .zip(ds)
                .map(|(s, d)| compose_mode(a, s, d, &mut *reach, b_is_one_mode, extending))
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
    let (s0, d0) = init[0];
    if d < 0 && s > 1 && b_is_one_mode && s0 % d.abs() == 0 && s <= s0 / d.abs() {
        // B is one mode that stays inside A's first coalesced mode, where C++ just scales B's
        // stride (its shape_div of signed extents gives -s0/|d|, of which B takes s). With other
        // B modes beside it, their offsets mix signs inside that mode and the modes no longer
        // compose one by one.
        return Ok((IntTuple::Int(s), IntTuple::Int(mul(d, d0)?)));
    }
    if d < 0 && s > 1 {
        // Past A's first mode C++ divides signed extents; rute has not shown that result to be
        // A o B, so it refuses rather than guess.
        return Err(Fail::Rule(format!(
            "B's mode {s}:{d} has a negative stride; rute composes one only when A coalesces to \
             a single mode, or when it is B's only mode and stays inside A's first coalesced mode \
             ({s0}:{d0})"
        )));
    }
    let (mut out_s, mut out_d) = (Vec::new(), Vec::new());
    let (mut rest_s, mut rest_d) = (s, d);
    for (j, &(cs, cd)) in init.iter().enumerate() {
        if !(rest_d % cs == 0 || rest_d < cs) {
            return Err(Fail::Rule(format!(
                "stride divisibility condition: the extent {cs} of A's coalesced mode {cs}:{cd} \
                 does not divide B's remaining stride {rest_d}, which is not smaller than it"
            )));
        }
        let r = abs(rest_d)?;
        let next_s = ceil_div(cs, r)?;
        // C++ checks only the condition above, which lets a stride below a non-multiple extent
        // through; when B's remaining elements then spill past this mode the C++ result is not
        // A o B (e.g. (4,4):(1,10) o 4:3). rute refuses that case instead of computing it, except
        // past an extending mode: the elements that spill there lie at or past size(A), where
        // only C++'s answer is asked for (`tiled_divide((7,1):(4,3), 8:2)`).
        if j < extending && rest_s > 1 && r % cs != 0 && cs % r != 0 && rest_s > next_s {
            return Err(Fail::Rule(format!(
                "stride divisibility condition: B's stride {rest_d} and the extent {cs} of A's \
                 coalesced mode {cs}:{cd} divide neither way, and B's remaining {rest_s} elements \
                 do not fit in that mode"
            )));
        }
        let next_d = mul(ceil_div(r, cs)?, rest_d.signum())?;
        if next_s != 1 && rest_s != 1 {
            let new_s = next_s.min(rest_s);
            if rest_s % new_s != 0 {
                return Err(Fail::Rule(format!(
                    "shape divisibility condition: {new_s} (what A's mode {cs}:{cd} leaves of B's \
                     stride) does not divide B's remaining extent {rest_s}"
                )));
            }
            reach[j] = add(reach[j], mul(new_s - 1, r)?)?;
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
/// its size, as in CuTe (A is first coalesced with `coalesce_x`). One exception, C++'s: when A ends
/// in extent-1 modes and B's modes together run past A's last other mode, that mode extends (the
/// extent-1 modes coalesce away, as `logical_divide((5,1):(1,0), 4:1) == (4,2):(1,4)` needs), so
/// there `R(i) == A(B(i))` holds for the `i` with `B(i) < size(A)`.
///
/// Fails with [`LayoutError::Precondition`] where CuTe's static assertions fail: the *stride
/// divisibility condition* (a stride of B must be divisible by, or smaller than, each coalesced
/// extent of A it passes) and the *shape divisibility condition*; with [`LayoutError::Overflow`]
/// when a stride leaves `i64`. Stride-0 modes of B stay stride 0.
///
/// Where CuTe's C++ would return a layout that is *not* `A o B`, rute refuses (a
/// [`LayoutError::Precondition`] naming the rule) rather than compute it:
/// - a stride of B that neither divides nor is divided by an extent of A it splits, when B's
///   elements spill past that mode (C++ accepts `d < s`: `(4,4):(1,10) o 4:3` gives `(2,2):(3,10)`),
///   unless that mode is the one before A's trailing extent-1 modes, where the elements that spill
///   are those at or past `size(A)` (`(7,1):(4,3) o (8,2):(2,1) == ((4,2),2):((8,3),4)`, C++'s
///   `tiled_divide((7,1):(4,3), 8:2)`);
/// - a negative stride in B when A does not coalesce to one mode (C++ then reads A at negative
///   offsets with truncating division, which is not how rute's layouts evaluate them);
/// - B's modes that together use more of one of A's modes than it has (their sum carries into the
///   next mode, which composing mode by mode cannot express; e.g. `(6,3,3):(27,9,324) o
///   (3,4,2):(1,3,12)`, or a non-injective B such as `(2,2):(2,2)` against a multi-mode A).
///
/// ```
/// use dsl_core::layout::{composition, Layout};
/// let a: Layout = "(6,2):(8,2)".parse().unwrap();
/// let b: Layout = "(4,3):(3,1)".parse().unwrap();
/// assert_eq!(composition(&a, &b).unwrap().to_string(), "((2,2),3):((24,2),8)");
/// ```
pub fn composition(a: &Layout, b: &Layout) -> Result<Layout, LayoutError> {
    let (flat, kept_unit) = coalesce_x(a);
    let mut reach = vec![0i64; flat.len()];
    let b_is_one_mode = b.shape().flatten_ints().iter().filter(|&&e| e > 1).count() <= 1;
    // A's last mode extends without bound, so only the others can overflow into a carry. A
    // trailing extent-1 mode of A is no mode to carry into: it coalesces away, and the mode before
    // it is the last one, which extends (C++ computes these compositions; a divide of a layout
    // ending in extent-1 modes needs them).
    let extending = flat.len().saturating_sub(if kept_unit { 2 } else { 1 });
    let (s, d) = compose_mode(
        &flat,
        b.shape(),
        b.stride(),
        &mut reach,
        b_is_one_mode,
        extending,
    )
    .map_err(|f| f.at("composition", format!("{a}, {b}")))?;
    for (j, &(cs, cd)) in flat.iter().enumerate().take(extending) {
        if reach[j] >= cs {
            return Err(LayoutError::precondition(
                "composition",
                format!("{a}, {b}"),
                format!(
                    "B's modes together reach coordinate {} of A's coalesced mode {cs}:{cd}, so their \
                     offsets carry into the next mode and no layout congruent to B equals A o B",
                    reach[j]
                ),
            ));
        }
    }
    Layout::checked(s, d).map_err(|f| f.at("composition", format!("{a}, {b}")))
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
            Layout::from_modes_checked(out).map_err(|f| f.at("composition", format!("{a}, {b}")))
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
        // C++ accepts this (3 < 4) but returns (2,2):(3,10), which is not A o B: A(B(2)) = 12.
        let e = comp("(4,4):(1,10)", "4:3");
        assert!(e.contains("stride divisibility"), "{e}");
        // When B's elements stay inside the mode, a non-dividing stride is fine.
        assert_eq!(comp("(4,4):(1,10)", "2:3"), "2:3");
        // Each mode of B alone is fine, but together they carry (C++: (3,(2,2),2):(27,(81,9),18)).
        let e = comp("(6,3,3):(27,9,324)", "(3,4,2):(1,3,12)");
        assert!(e.contains("carry"), "{e}");
        let e = comp("(4,4):(1,10)", "(2,2):(2,2)");
        assert!(e.contains("carry"), "{e}");
        // A trailing extent-1 mode coalesces away: its mode before extends (C++'s result).
        assert_eq!(comp("(5,1):(1,0)", "(4,2):(1,4)"), "(4,2):(1,4)");
        assert_eq!(
            comp("(3,5,1):(1,10,0)", "(3,(3,2)):(1,(3,9))"),
            "(3,(3,2)):(1,(10,30))"
        );
        // Modes before it still carry (C++: (2,2):(2,2), whose offset 4 is not A(4) = 11).
        let e = comp("(3,5,1):(1,10,0)", "(2,2):(2,2)");
        assert!(e.contains("carry"), "{e}");
        // Past that mode B may also spill with a stride that divides neither way: the elements
        // that spill are those at or past size(A), which C++ puts in the kept extent-1 mode. Below
        // size(A) the result is A o B: offsets 0, 8, 16, 24 are A(0), A(2), A(4), A(6).
        assert_eq!(comp("(7,1):(4,3)", "(8,2):(2,1)"), "((4,2),2):((8,3),4)");
        assert_eq!(comp("(7,1,1):(4,3,5)", "8:2"), "(4,2):(8,5)");
        // Before a mode that is not the last, the same spill is still refused.
        let e = comp("(7,2,1):(4,100,0)", "8:2");
        assert!(e.contains("stride divisibility"), "{e}");
        // Negative strides: fine against a single-mode A, or inside A's first mode (A read at
        // negative offsets with truncating division, as C++ does); refused past A's first mode.
        assert_eq!(comp("(4,8):(1,4)", "4:-1"), "4:-1");
        assert_eq!(comp("(4,4):(1,10)", "4:-1"), "4:-1");
        let e = comp("(4,4):(1,10)", "8:-1");
        assert!(e.contains("negative"), "{e}");
        // Non-injective but carry-free B is fine.
        assert_eq!(comp("(4,4):(1,10)", "(2,2):(1,1)"), "(2,2):(1,1)");
        // Hostile strides are refused when the layout is made, so composition never sees them.
        let e = "(2,4):(1,4611686018427387904)"
            .parse::<Layout>()
            .unwrap_err()
            .to_string();
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
