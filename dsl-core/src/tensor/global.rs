//! Global-memory tiles with a device row stride and device bounds.

use std::collections::BTreeMap;

use super::dyn_eval::{add, eval_dyn, split_rows};
use crate::ir::Address;
use crate::kernel::{select, DeviceType, GlobalPtr, Var};
use crate::layout::{Layout, LayoutError};
use crate::tiled::View;

/// The unit of rows in a global tile's layout: an element `(row, col)` of the tile has the
/// static offset `row * ROW + col`, so that layouts stay host integers while the row stride is a
/// kernel parameter. Columns of one tile must stay below `ROW`.
pub const ROW: i64 = 1 << 24;

/// A row-major tile of a global matrix: element `(r, c)` of the tile is at
/// `ptr + r * ld + c`. The view's layout maps coordinates to `r * ROW + c`; `row`/`col` hold the
/// device part of the coordinate (the thread's, after a partition). `rows`/`cols`, when given,
/// are how many rows and columns from the tile's origin exist (signed: may be 0 or less), and
/// accesses outside are predicated off.
#[derive(Clone, Debug)]
pub struct GTensor<T> {
    ptr: GlobalPtr<T>,
    ld: Var<u32>,
    base: i64,
    layout: Layout,
    row: Var<u32>,
    col: Var<u32>,
    bounds: Option<(Var<i32>, Var<i32>)>,
}

/// Whether a static position is in bounds, and its address.
pub(crate) struct Access {
    pub(crate) addr: Address,
    pub(crate) pred: Option<Var<bool>>,
}

impl<T: DeviceType> GTensor<T> {
    /// The tile at `ptr` with row stride `ld` (elements), its layout in [`ROW`] units (for a
    /// `(BM, BK)` tile: `(BM,BK):(ROW,1)`), and optional bounds `(rows, cols)` from the origin.
    pub fn tile(
        ptr: GlobalPtr<T>,
        ld: Var<u32>,
        layout: Layout,
        bounds: Option<(Var<i32>, Var<i32>)>,
    ) -> Self {
        GTensor {
            ptr,
            ld,
            base: 0,
            layout,
            row: Var::konst(0),
            col: Var::konst(0),
            bounds,
        }
    }

    /// The per-slice layout (coordinate -> `row * ROW + col`).
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// Whether the first element's address and the row stride in bytes are multiples of
    /// `bytes` (then so is every element at an offset that is a multiple of `bytes` in each row).
    pub(crate) fn aligned_to(&self, bytes: u32) -> Var<bool> {
        let first = (self.ptr + add(self.row * self.ld, self.col))
            .addr()
            .cast::<u32>();
        let stride = self.ld * T::TY.bytes();
        ((first | stride) & (bytes - 1)).eq_(0u32)
    }

    /// The static offset of this slice (`row * ROW + col` units).
    pub(crate) fn base(&self) -> i64 {
        self.base
    }

    fn view(&self) -> View {
        View {
            base: self.base,
            ..View::from(self.layout.clone())
        }
    }

    fn with_view(&self, v: View, xs: &[(Var<u32>, i64)]) -> Result<Self, LayoutError> {
        let mut t = GTensor {
            base: v.base,
            layout: v.layout.clone(),
            ..self.clone()
        };
        for (l, &(x, bound)) in v.indices.iter().zip(xs) {
            let (rl, cl) = split_rows(l, ROW)?;
            t.row = add(t.row, eval_dyn(&rl, x, bound)?);
            t.col = add(t.col, eval_dyn(&cl, x, bound)?);
        }
        Ok(t)
    }

    view_methods!();

    /// Address and predicate of each static offset (`base + layout(i)` values) for an access of
    /// `width` consecutive elements along a row: in bounds when the row exists and the last
    /// column does. Rows share one multiply each. With `clamp`, an access out of bounds is
    /// pointed at the tile's origin instead (for copies whose zero source size reads nothing,
    /// so that no instruction ever carries an address outside the matrix).
    pub(crate) fn accesses(
        &self,
        offsets: &[i64],
        width: i64,
        clamp: bool,
    ) -> Result<Vec<Access>, LayoutError> {
        let bytes = i64::from(T::TY.bytes());
        let thread_ptr = self.ptr + add(self.row * self.ld, self.col);
        let mut rows: BTreeMap<i64, (Var<u64>, Option<Var<bool>>)> = BTreeMap::new();
        let mut out = Vec::with_capacity(offsets.len());
        for &s in offsets {
            if s < 0 || s % ROW + width > ROW {
                return Err(LayoutError::precondition(
                    "copy",
                    self.layout.to_string(),
                    format!("static offset {s} is not a (row, column) of the tile"),
                ));
            }
            let (r, c) = (s / ROW, s % ROW);
            let (ptr, row_ok) = match rows.get(&r) {
                Some(x) => *x,
                None => {
                    // Step from the nearest row below (rows come in a few arithmetic
                    // progressions), so that one stride register serves all of them.
                    let below = rows.range(..r).next_back().map(|(&q, &(p, _))| (q, p));
                    let p = match below {
                        Some((q, p)) => GlobalPtr::<T>::from_addr(p) + self.ld * ((r - q) as u32),
                        None if r == 0 => thread_ptr,
                        None => thread_ptr + self.ld * (r as u32),
                    };
                    let p = p.addr();
                    let ok = self
                        .bounds
                        .map(|(nr, _)| (add(self.row, Var::konst(r as u32))).cast::<i32>().lt(nr));
                    rows.insert(r, (p, ok));
                    (p, ok)
                }
            };
            let pred = match self.bounds {
                None => None,
                Some((_, nc)) => {
                    let last = add(self.col, Var::konst((c + width - 1) as u32));
                    let col_ok = last.cast::<i32>().lt(nc);
                    Some(match row_ok {
                        Some(ro) => ro & col_ok,
                        None => col_ok,
                    })
                }
            };
            let addr = match pred {
                Some(p) if clamp => {
                    let at = ptr + ((c * bytes) as u64);
                    Address::reg(select(p, at, self.ptr.addr()).to_reg(), 0)
                }
                _ => Address::reg(ptr.to_reg(), c * bytes),
            };
            out.push(Access { addr, pred });
        }
        Ok(out)
    }
}
