//! `IntTuple`: an integer or a tuple of `IntTuple`s, the type of CuTe's shapes, strides and coordinates.

use std::fmt;

use super::error::LayoutError;

/// An integer or a (possibly nested) tuple of `IntTuple`s.
///
/// Shapes, strides and coordinates of a [`Layout`](super::Layout) are all `IntTuple`s. They print in
/// CuTe's notation: `8`, `(4,2)`, `((2,4),8)`; a one-element tuple prints as `(8)` so that it reads back
/// as a tuple, not an int.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum IntTuple {
    /// A single integer.
    Int(i64),
    /// A tuple of modes, each an int or a tuple.
    Tuple(Vec<IntTuple>),
}

impl IntTuple {
    /// A tuple of plain integers.
    pub fn ints(values: &[i64]) -> IntTuple {
        IntTuple::Tuple(values.iter().map(|&v| IntTuple::Int(v)).collect())
    }

    /// True for a single integer.
    pub fn is_int(&self) -> bool {
        matches!(self, IntTuple::Int(_))
    }

    /// The integer, if this is one.
    pub fn as_int(&self) -> Option<i64> {
        match self {
            IntTuple::Int(v) => Some(*v),
            IntTuple::Tuple(_) => None,
        }
    }

    /// The modes of a tuple; an int is its own single mode.
    pub fn modes(&self) -> Vec<IntTuple> {
        match self {
            IntTuple::Int(_) => vec![self.clone()],
            IntTuple::Tuple(t) => t.clone(),
        }
    }

    /// CuTe's `rank`: 1 for an int, the number of modes for a tuple.
    pub fn rank(&self) -> usize {
        match self {
            IntTuple::Int(_) => 1,
            IntTuple::Tuple(t) => t.len(),
        }
    }

    /// CuTe's `depth`: 0 for an int, one more than the deepest mode for a tuple.
    pub fn depth(&self) -> usize {
        match self {
            IntTuple::Int(_) => 0,
            IntTuple::Tuple(t) => 1 + t.iter().map(IntTuple::depth).max().unwrap_or(0),
        }
    }

    /// CuTe's `size` of a shape: the product of all its integers (1 for an empty tuple). It
    /// saturates at `i64::MIN`/`i64::MAX` rather than overflow; [`IntTuple::checked_product`] says
    /// when it would. (The shape of a [`Layout`](super::Layout) never overflows.)
    pub fn product(&self) -> i64 {
        match self {
            IntTuple::Int(v) => *v,
            IntTuple::Tuple(t) => t
                .iter()
                .fold(1i64, |acc, m| acc.saturating_mul(m.product())),
        }
    }

    /// The product of all integers, or `None` when it overflows `i64`.
    pub fn checked_product(&self) -> Option<i64> {
        match self {
            IntTuple::Int(v) => Some(*v),
            IntTuple::Tuple(t) => t
                .iter()
                .try_fold(1i64, |acc, m| acc.checked_mul(m.checked_product()?)),
        }
    }

    /// The sum of all integers, saturating at `i64::MIN`/`i64::MAX` rather than overflow.
    pub fn sum(&self) -> i64 {
        match self {
            IntTuple::Int(v) => *v,
            IntTuple::Tuple(t) => t.iter().fold(0i64, |acc, m| acc.saturating_add(m.sum())),
        }
    }

    /// All integers, depth first, as a flat list.
    pub fn flatten_ints(&self) -> Vec<i64> {
        let mut out = Vec::new();
        self.visit_ints(&mut |v| out.push(v));
        out
    }

    /// CuTe's `flatten`: an int stays an int; a tuple becomes the flat tuple of its integers.
    pub fn flatten(&self) -> IntTuple {
        match self {
            IntTuple::Int(_) => self.clone(),
            IntTuple::Tuple(_) => IntTuple::ints(&self.flatten_ints()),
        }
    }

    fn visit_ints(&self, f: &mut impl FnMut(i64)) {
        match self {
            IntTuple::Int(v) => f(*v),
            IntTuple::Tuple(t) => t.iter().for_each(|m| m.visit_ints(f)),
        }
    }

    /// True when `self` and `other` have the same tree structure (CuTe's `congruent`).
    pub fn congruent(&self, other: &IntTuple) -> bool {
        match (self, other) {
            (IntTuple::Int(_), IntTuple::Int(_)) => true,
            (IntTuple::Tuple(a), IntTuple::Tuple(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.congruent(y))
            }
            _ => false,
        }
    }

    /// Apply `f` to every integer, keeping the structure.
    pub fn map_ints(&self, f: &mut impl FnMut(i64) -> i64) -> IntTuple {
        match self {
            IntTuple::Int(v) => IntTuple::Int(f(*v)),
            IntTuple::Tuple(t) => IntTuple::Tuple(t.iter().map(|m| m.map_ints(f)).collect()),
        }
    }

    /// CuTe's `prefix_product` of a shape: the compact column-major (generalized) strides, congruent
    /// to the shape, starting from `init`.
    pub fn prefix_product(&self, init: i64) -> IntTuple {
        let mut acc = init;
        self.map_ints(&mut |v| {
            let here = acc;
            acc = acc.saturating_mul(v);
            here
        })
    }

    /// Compact column-major strides for this shape (CuTe's `LayoutLeft`).
    pub fn compact_col_major(&self) -> IntTuple {
        self.prefix_product(1)
    }

    /// Compact row-major strides for this shape (CuTe's `LayoutRight`): the last integer, in flattened
    /// order, is contiguous.
    pub fn compact_row_major(&self) -> IntTuple {
        let flat = self.flatten_ints();
        let mut strides = vec![0; flat.len()];
        let mut acc = 1i64;
        for i in (0..flat.len()).rev() {
            strides[i] = acc;
            acc = acc.saturating_mul(flat[i]);
        }
        let mut it = strides.into_iter();
        self.map_ints(&mut |_| it.next().unwrap_or(0))
    }

    /// Ok when every extent is at least 1 and the product fits in `i64`: a shape that `idx2crd`
    /// and `crd2idx` can split an index over (the shape of any [`Layout`](super::Layout) is one).
    fn check_splittable(&self) -> Result<(), LayoutError> {
        if let Some(extent) = self.flatten_ints().into_iter().find(|&e| e < 1) {
            return Err(LayoutError::BadExtent {
                shape: self.to_string(),
                extent,
            });
        }
        match self.checked_product() {
            Some(_) => Ok(()),
            None => Err(LayoutError::Overflow {
                op: "size",
                args: self.to_string(),
            }),
        }
    }

    /// CuTe's `idx2crd` for a shape with its compact column-major order: the natural coordinate of
    /// linear index `idx`, congruent to `self`. The outermost mode is not reduced modulo its extent,
    /// as in CuTe, so indices past the size extend the last mode.
    ///
    /// Fails with [`LayoutError::BadExtent`] for an extent below 1 (CuTe would divide by it) and
    /// [`LayoutError::Overflow`] when the shape's size leaves `i64`.
    pub fn idx2crd(&self, idx: i64) -> Result<IntTuple, LayoutError> {
        self.check_splittable()?;
        Ok(self.idx2crd_valid(idx))
    }

    /// [`IntTuple::idx2crd`] of a shape known to be splittable (every extent at least 1, the
    /// product within `i64`), as a layout's shape is.
    pub(crate) fn idx2crd_valid(&self, idx: i64) -> IntTuple {
        match self {
            IntTuple::Int(_) => IntTuple::Int(idx),
            IntTuple::Tuple(t) => {
                let mut rest = idx;
                let n = t.len();
                IntTuple::Tuple(
                    t.iter()
                        .enumerate()
                        .map(|(i, m)| {
                            if i + 1 == n {
                                m.idx2crd_valid(rest)
                            } else {
                                // At least 1: every extent is.
                                let sz = m.product().max(1);
                                let c = m.idx2crd_valid(rest % sz);
                                rest /= sz;
                                c
                            }
                        })
                        .collect(),
                )
            }
        }
    }

    /// CuTe's `crd2idx(crd, shape, stride)` with `self` as the shape. A coordinate may be an int at
    /// any level (it is then split colexicographically over that mode), or congruent to the shape.
    ///
    /// Every step is checked: a coordinate that does not match the shape is a
    /// [`LayoutError::CoordinateMismatch`], an extent below 1 a [`LayoutError::BadExtent`], and an
    /// offset past `i64` a [`LayoutError::Overflow`].
    pub fn crd2idx(&self, crd: &IntTuple, stride: &IntTuple) -> Result<i64, LayoutError> {
        self.check_splittable()?;
        self.crd2idx_valid(crd, stride)
    }

    /// [`IntTuple::crd2idx`] of a shape known to be splittable (see [`IntTuple::idx2crd_valid`]).
    pub(crate) fn crd2idx_valid(
        &self,
        crd: &IntTuple,
        stride: &IntTuple,
    ) -> Result<i64, LayoutError> {
        let overflow = || LayoutError::Overflow {
            op: "crd2idx",
            args: format!("{crd}, {self}, {stride}"),
        };
        match (crd, self, stride) {
            (IntTuple::Int(c), IntTuple::Int(_), IntTuple::Int(d)) => {
                c.checked_mul(*d).ok_or_else(overflow)
            }
            (IntTuple::Int(c), IntTuple::Tuple(s), IntTuple::Tuple(d)) if s.len() == d.len() => {
                let mut rest = *c;
                let mut acc = 0i64;
                for (i, (sm, dm)) in s.iter().zip(d).enumerate() {
                    let here = if i + 1 == s.len() {
                        sm.crd2idx_valid(&IntTuple::Int(rest), dm)?
                    } else {
                        // At least 1: every extent is.
                        let sz = sm.product().max(1);
                        let here = sm.crd2idx_valid(&IntTuple::Int(rest % sz), dm)?;
                        rest /= sz;
                        here
                    };
                    acc = acc.checked_add(here).ok_or_else(overflow)?;
                }
                Ok(acc)
            }
            (IntTuple::Tuple(c), IntTuple::Tuple(s), IntTuple::Tuple(d))
                if c.len() == s.len() && s.len() == d.len() =>
            {
                let mut acc = 0i64;
                for ((cm, sm), dm) in c.iter().zip(s).zip(d) {
                    acc = acc
                        .checked_add(sm.crd2idx_valid(cm, dm)?)
                        .ok_or_else(overflow)?;
                }
                Ok(acc)
            }
            _ => Err(LayoutError::CoordinateMismatch {
                coord: crd.to_string(),
                shape: self.to_string(),
            }),
        }
    }
}

impl From<i64> for IntTuple {
    fn from(v: i64) -> Self {
        IntTuple::Int(v)
    }
}

impl From<Vec<IntTuple>> for IntTuple {
    fn from(v: Vec<IntTuple>) -> Self {
        IntTuple::Tuple(v)
    }
}

impl fmt::Display for IntTuple {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IntTuple::Int(v) => write!(f, "{v}"),
            IntTuple::Tuple(t) => {
                f.write_str("(")?;
                for (i, m) in t.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{m}")?;
                }
                f.write_str(")")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_product_is_column_major() {
        let s: IntTuple = IntTuple::Tuple(vec![IntTuple::ints(&[2, 4]), IntTuple::Int(8)]);
        assert_eq!(s.compact_col_major().to_string(), "((1,2),8)");
        assert_eq!(s.compact_row_major().to_string(), "((32,8),1)");
    }

    #[test]
    fn idx2crd_and_crd2idx_round_trip() {
        let s = IntTuple::Tuple(vec![IntTuple::ints(&[2, 4]), IntTuple::Int(3)]);
        let d = s.compact_col_major();
        for i in 0..24 {
            let c = s.idx2crd(i).unwrap();
            assert_eq!(s.crd2idx(&c, &d).unwrap(), i);
            assert_eq!(s.crd2idx(&IntTuple::Int(i), &d).unwrap(), i);
        }
    }
}
