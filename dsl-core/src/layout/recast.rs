//! Recast a layout between element widths: upcast (fewer, wider elements), downcast (more,
//! narrower ones).

use super::arith::{abs, ceil_div, mul, Fail, Res};
use super::{IntTuple, Layout, LayoutError};

fn upcast_impl(s: &IntTuple, d: &IntTuple, n: i64) -> Res<(IntTuple, IntTuple)> {
    match (s, d) {
        (IntTuple::Tuple(ss), IntTuple::Tuple(ds)) => {
            let (rs, rd) = ss
                .iter()
                .zip(ds)
                .map(|(s, d)| upcast_impl(s, d, n))
                .collect::<Res<Vec<_>>>()?
                .into_iter()
                .unzip();
            Ok((IntTuple::Tuple(rs), IntTuple::Tuple(rd)))
        }
        (IntTuple::Int(s), IntTuple::Int(0)) => Ok((IntTuple::Int(*s), IntTuple::Int(0))),
        (IntTuple::Int(s), IntTuple::Int(d)) => {
            if d % n != 0 && n % d != 0 {
                return Err(Fail::Rule(format!(
                    "divisibility condition: the stride {d} and the factor {n} divide neither way"
                )));
            }
            let ad = abs(*d)?;
            let shape = ceil_div(*s, ceil_div(n, ad)?)?;
            let stride = mul(d.signum(), ceil_div(ad, n)?)?;
            Ok((IntTuple::Int(shape), IntTuple::Int(stride)))
        }
        _ => Err(Fail::Rule("shape and stride are not congruent".into())),
    }
}

fn downcast_impl(s: &IntTuple, d: &IntTuple, n: i64) -> Res<(IntTuple, IntTuple)> {
    match (s, d) {
        (IntTuple::Tuple(ss), IntTuple::Tuple(ds)) => {
            let (rs, rd) = ss
                .iter()
                .zip(ds)
                .map(|(s, d)| downcast_impl(s, d, n))
                .collect::<Res<Vec<_>>>()?
                .into_iter()
                .unzip();
            Ok((IntTuple::Tuple(rs), IntTuple::Tuple(rd)))
        }
        (IntTuple::Int(s), IntTuple::Int(d)) if *d == 1 || *d == -1 => {
            Ok((IntTuple::Int(mul(*s, n)?), IntTuple::Int(*d)))
        }
        (IntTuple::Int(s), IntTuple::Int(d)) => Ok((IntTuple::Int(*s), IntTuple::Int(mul(*d, n)?))),
        _ => Err(Fail::Rule("shape and stride are not congruent".into())),
    }
}

fn check_factor(n: i64) -> Res<()> {
    if n < 1 {
        return Err(Fail::Rule(format!("the factor {n} must be at least 1")));
    }
    Ok(())
}

fn upcast_checked(l: &Layout, n: i64) -> Res<Layout> {
    check_factor(n)?;
    let (s, d) = upcast_impl(l.shape(), l.stride(), n)?;
    Layout::checked(s, d)
}

fn downcast_checked(l: &Layout, n: i64) -> Res<Layout> {
    check_factor(n)?;
    if !l.stride().flatten_ints().contains(&1) {
        return Err(Fail::Rule(
            "downcast requires adjacent elements: the layout has no stride-1 mode".into(),
        ));
    }
    let (s, d) = downcast_impl(l.shape(), l.stride(), n)?;
    Layout::checked(s, d)
}

/// CuTe's `upcast<N>(layout)`: the layout in units of `N` old elements.
///
/// Mode by mode (structure kept): stride 0 stays; otherwise the stride must divide or be divided by
/// `N` (CuTe's divisibility condition), the extent becomes `ceil_div(s, ceil_div(N, |d|))` and the
/// stride `sign(d) * ceil_div(|d|, N)`. So a stride-1 mode shrinks by `N` and larger strides divide
/// by `N`.
///
/// ```
/// use dsl_core::layout::{upcast, Layout};
/// let l: Layout = "(8,4):(1,8)".parse().unwrap();
/// assert_eq!(upcast(&l, 2).unwrap().to_string(), "(4,4):(1,4)");
/// ```
pub fn upcast(l: &Layout, n: i64) -> Result<Layout, LayoutError> {
    upcast_checked(l, n).map_err(|f| f.at("upcast", format!("{l}, {n}")))
}

/// CuTe's `downcast<N>(layout)`: the layout in units of `1/N` old elements.
///
/// Requires a stride-1 mode somewhere (CuTe: "downcast requires adjacent elements"). Mode by mode:
/// a stride of `1` or `-1` multiplies the extent by `N`; every other stride is multiplied by `N`.
///
/// ```
/// use dsl_core::layout::{downcast, Layout};
/// let l: Layout = "(4,4):(1,4)".parse().unwrap();
/// assert_eq!(downcast(&l, 2).unwrap().to_string(), "(8,4):(1,8)");
/// ```
pub fn downcast(l: &Layout, n: i64) -> Result<Layout, LayoutError> {
    downcast_checked(l, n).map_err(|f| f.at("downcast", format!("{l}, {n}")))
}

fn gcd(a: i64, b: i64) -> i64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

fn recast_checked(l: &Layout, old_bits: u32, new_bits: u32) -> Res<Layout> {
    if old_bits == 0 || new_bits == 0 {
        return Err(Fail::Rule("element widths must be at least 1 bit".into()));
    }
    let (old, new) = (i64::from(old_bits), i64::from(new_bits));
    let g = gcd(new, old);
    let (num, den) = (new / g, old / g);
    match (num, den) {
        (1, 1) => Ok(l.clone()),
        (1, den) => downcast_checked(l, den),
        (num, 1) => upcast_checked(l, num),
        (num, den) => downcast_checked(&upcast_checked(l, num)?, den),
    }
}

/// CuTe's `recast_layout<Old, New>(layout)` with element widths in bits: the same memory seen as
/// elements of `new_bits` instead of `old_bits`. With `new/old = num/den` in lowest terms it is the
/// layout itself, `downcast<den>`, `upcast<num>`, or `downcast<den>(upcast<num>(l))`; it fails where
/// those fail (a stride that does not divide, no stride-1 mode to split).
///
/// ```
/// use dsl_core::layout::{recast_layout, Layout};
/// let l: Layout = "(8,4):(1,8)".parse().unwrap();
/// assert_eq!(recast_layout(&l, 16, 32).unwrap().to_string(), "(4,4):(1,4)");
/// assert_eq!(recast_layout(&l, 16, 8).unwrap().to_string(), "(16,4):(1,16)");
/// ```
pub fn recast_layout(l: &Layout, old_bits: u32, new_bits: u32) -> Result<Layout, LayoutError> {
    recast_checked(l, old_bits, new_bits)
        .map_err(|f| f.at("recast_layout", format!("{l}, {old_bits}, {new_bits}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lay(s: &str) -> Layout {
        s.parse().unwrap()
    }

    #[test]
    fn upcast_rules() {
        // Stride 2 with N=4: extent ceil(4 / ceil(4/2)) = 2, stride ceil(2/4) = 1.
        assert_eq!(
            upcast(&lay("(4,3):(2,0)"), 4).unwrap().to_string(),
            "(2,3):(1,0)"
        );
        assert_eq!(
            upcast(&lay("((2,4),8):((1,2),-16)"), 2)
                .unwrap()
                .to_string(),
            "((1,4),8):((1,1),-8)"
        );
        let e = upcast(&lay("(4,3):(1,3)"), 2).unwrap_err().to_string();
        assert!(e.contains("divisibility"), "{e}");
    }

    #[test]
    fn downcast_rules() {
        let e = downcast(&lay("(4,4):(-1,4)"), 2).unwrap_err().to_string();
        assert!(e.contains("stride-1"), "{e}");
        assert_eq!(
            downcast(&lay("((4,2),4):((1,0),8)"), 4)
                .unwrap()
                .to_string(),
            "((16,2),4):((1,0),32)"
        );
        assert!(downcast(&lay("4:1"), 0).is_err());
        assert!(downcast(&lay("4611686018427387904:1"), 4).is_err());
    }

    #[test]
    fn recast_ratios() {
        let l = lay("(8,4):(1,8)");
        assert_eq!(recast_layout(&l, 16, 16).unwrap(), l);
        // 16 -> 24 bits: upcast<3> then downcast<2>; stride 8 does not meet 3's divisibility.
        assert!(recast_layout(&l, 16, 24).is_err());
        let m = lay("(6,4):(1,6)");
        assert_eq!(
            recast_layout(&m, 16, 24).unwrap().to_string(),
            "(4,4):(1,4)"
        );
        assert!(recast_layout(&l, 0, 8).is_err());
    }
}
