//! Coalesce and filter: the same function of the index with fewer modes.

use super::arith::{flat_modes, from_flat};
use super::{IntTuple, Layout, LayoutError};

/// CuTe's `detail::bw_coalesce`, walking the flat modes from the back: the coalesced flat modes
/// (`[(1, 0)]` when nothing but extent-1 modes is left).
///
/// `extend` selects CuTe's `coalesce_x`: a trailing extent-1 mode is kept (as extent 2) so that the
/// result also agrees with the input past its size, where the last mode extends. The flag says
/// whether that kept mode is still a mode of its own at the end (it is not when the mode before it
/// merged into it).
fn bw_coalesce(modes: &[(i64, i64)], extend: bool) -> (Vec<(i64, i64)>, bool) {
    let Some(&(last_s, last_d)) = modes.last() else {
        return (vec![(1, 0)], false);
    };
    let mut kept_unit = extend && last_s == 1;
    // Built back to front, reversed at the end; while it has one entry it is CuTe's integral
    // `NewShape`.
    let mut new: Vec<(i64, i64)> = vec![(if kept_unit { 2 } else { last_s }, last_d)];
    for &(s, d) in modes[..modes.len() - 1].iter().rev() {
        if s == 1 {
            continue;
        }
        let front = new.len() - 1;
        if front == 0 && new[0].0 == 1 {
            new[0] = (s, d);
            continue;
        }
        let (fs, fd) = new[front];
        // Merge `s:d` into the front `s0:d0` when `d0 == s*d`; a product past i64 cannot match.
        match (s.checked_mul(d), s.checked_mul(fs)) {
            (Some(reach), Some(merged)) if reach == fd => {
                new[front] = (merged, d);
                kept_unit &= front != 0;
            }
            _ => new.push((s, d)),
        }
    }
    if new.len() == 1 && new[0].0 == 1 {
        return (vec![(1, 0)], false);
    }
    new.reverse();
    (new, kept_unit)
}

/// The layout of flat modes that keep a valid layout's function: coalesce and filter keep the size
/// (or shrink it) and the span, so the result keeps a layout's rules.
fn same_range(modes: &[(i64, i64)]) -> Layout {
    from_flat(modes).unwrap_or_else(|_| unreachable!("coalesce keeps the size and the span"))
}

/// CuTe's `coalesce(layout)`: the same function of the index with as few modes as possible.
///
/// Post-conditions: `size(R) == size(L)`, `depth(R) <= 1`, `R(i) == L(i)` for `i < size(L)`.
/// Extent-1 modes are dropped, `s0:d0, s1:d1` merge into `s0*s1:d0` when `d1 == s0*d0`; a layout of
/// only extent-1 modes becomes `1:0`, and a single remaining mode is an int layout `n:d`.
///
/// ```
/// use dsl_core::layout::{coalesce, Layout};
/// let l: Layout = "(2,(1,6)):(1,(6,2))".parse().unwrap();
/// assert_eq!(coalesce(&l).to_string(), "12:1");
/// ```
pub fn coalesce(l: &Layout) -> Layout {
    same_range(&bw_coalesce(&flat_modes(l), false).0)
}

/// CuTe's `detail::coalesce_x` as flat modes: like [`coalesce`], but the modes also give the
/// input's function past its size (`R(i) == L(i)` for all `i >= 0`, the last mode of `L`
/// extending). Not a layout: the kept trailing mode doubles the size, which may leave `i64`.
///
/// The flag is true when the last mode is `L`'s trailing extent-1 mode, kept (as extent 2) as a
/// mode of its own.
pub(crate) fn coalesce_x(l: &Layout) -> (Vec<(i64, i64)>, bool) {
    bw_coalesce(&flat_modes(l), true)
}

/// CuTe's `coalesce(layout, trg_profile)`: coalesce each mode of the profile separately.
///
/// An int profile coalesces the whole layout. A tuple profile of rank `r <= rank(L)` coalesces
/// mode `i < r` by profile item `i` (recursively) and keeps modes `r..` as they are; the result is a
/// tuple of rank `rank(L)`.
///
/// ```
/// use dsl_core::layout::{coalesce_with, IntTuple, Layout};
/// let l: Layout = "(2,(1,6)):(1,(6,2))".parse().unwrap();
/// let r = coalesce_with(&l, &IntTuple::ints(&[1, 1])).unwrap();
/// assert_eq!(r.to_string(), "(2,6):(1,2)");
/// ```
pub fn coalesce_with(l: &Layout, profile: &IntTuple) -> Result<Layout, LayoutError> {
    match profile {
        IntTuple::Int(_) => Ok(coalesce(l)),
        IntTuple::Tuple(items) => {
            let modes = l.modes();
            if items.len() > modes.len() {
                return Err(LayoutError::precondition(
                    "coalesce",
                    format!("{l}, {profile}"),
                    format!(
                        "the profile has rank {} but the layout only rank {}",
                        items.len(),
                        modes.len()
                    ),
                ));
            }
            let mut out = Vec::with_capacity(modes.len());
            for (i, m) in modes.into_iter().enumerate() {
                out.push(match items.get(i) {
                    Some(p) => coalesce_with(&m, p)?,
                    None => m,
                });
            }
            Layout::from_modes_checked(out).map_err(|f| f.at("coalesce", format!("{l}, {profile}")))
        }
    }
}

/// CuTe's `filter_zeros`: every mode with stride 0 gets extent 1 (strides and structure unchanged).
///
/// ```
/// use dsl_core::layout::{filter_zeros, Layout};
/// let l: Layout = "(4,(2,3)):(0,(1,0))".parse().unwrap();
/// assert_eq!(filter_zeros(&l).to_string(), "(1,(2,1)):(0,(1,0))");
/// ```
pub fn filter_zeros(l: &Layout) -> Layout {
    fn go(s: &IntTuple, d: &IntTuple) -> IntTuple {
        match (s, d) {
            (IntTuple::Tuple(ss), IntTuple::Tuple(ds)) => {
                IntTuple::Tuple(ss.iter().zip(ds).map(|(s, d)| go(s, d)).collect())
            }
            (_, IntTuple::Int(0)) => IntTuple::Int(1),
            _ => s.clone(),
        }
    }
    // Extents only shrink, so the size shrinks and the span stays.
    Layout::checked(go(l.shape(), l.stride()), l.stride().clone())
        .unwrap_or_else(|_| unreachable!("filter_zeros keeps the span and shrinks the size"))
}

/// CuTe's `filter`: `coalesce(filter_zeros(l))`, the layout without stride-0 and extent-1 modes
/// (`1:0` when nothing is left). Its image is the image of `l`, each offset hit once per
/// non-broadcast coordinate.
///
/// ```
/// use dsl_core::layout::{filter, Layout};
/// let l: Layout = "(4,(2,3)):(0,(1,2))".parse().unwrap();
/// assert_eq!(filter(&l).to_string(), "6:1");
/// ```
pub fn filter(l: &Layout) -> Layout {
    coalesce(&filter_zeros(l))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lay(s: &str) -> Layout {
        s.parse().unwrap()
    }

    #[test]
    fn cute_doc_examples() {
        assert_eq!(coalesce(&lay("(2,(1,6)):(1,(6,2))")).to_string(), "12:1");
        let r = coalesce_with(&lay("(2,(1,6)):(1,(6,2))"), &IntTuple::ints(&[1, 1])).unwrap();
        assert_eq!(r.to_string(), "(2,6):(1,2)");
        assert_eq!(coalesce(&lay("(2,4):(1,2)")).to_string(), "8:1");
    }

    #[test]
    fn edge_forms() {
        assert_eq!(coalesce(&lay("(1,1):(3,4)")).to_string(), "1:0");
        assert_eq!(coalesce(&lay("1:5")).to_string(), "1:0");
        assert_eq!(coalesce(&lay("(2,1):(3,7)")).to_string(), "2:3");
        assert_eq!(coalesce(&lay("(4,1):(1,0)")).to_string(), "4:1");
        assert_eq!(coalesce(&lay("(2,3):(0,0)")).to_string(), "6:0");
        assert_eq!(
            coalesce(&lay("(2,3,4):(1,4,2)")).to_string(),
            "(2,3,4):(1,4,2)"
        );
        assert_eq!(coalesce(&lay("(2,2,3):(1,2,8)")).to_string(), "(4,3):(1,8)");
        // coalesce_x keeps a trailing extent-1 mode so the function past the size is unchanged.
        assert_eq!(
            coalesce_x(&lay("(4,1):(1,0)")),
            (vec![(4, 1), (2, 0)], true)
        );
        assert_eq!(coalesce_x(&lay("(1,1):(3,5)")), (vec![(2, 5)], true));
        // The mode before the kept one merges into it: (3,2):(2,6) is 6:2.
        assert_eq!(coalesce_x(&lay("(3,1):(2,6)")), (vec![(6, 2)], false));
        assert_eq!(coalesce_x(&lay("(4,2):(1,4)")), (vec![(8, 1)], false));
    }

    #[test]
    fn profile_rules() {
        let l = lay("((2,2),(3,1)):((1,2),(4,9))");
        assert_eq!(
            coalesce_with(&l, &IntTuple::ints(&[0]))
                .unwrap()
                .to_string(),
            "(4,(3,1)):(1,(4,9))"
        );
        assert!(coalesce_with(&l, &IntTuple::ints(&[0, 0, 0])).is_err());
        assert_eq!(filter(&lay("(4,2):(0,0)")).to_string(), "1:0");
    }
}
