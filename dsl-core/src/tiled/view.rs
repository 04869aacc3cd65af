//! `View`: a layout seen through dynamic indices (thread index, block coordinate), the form a kernel
//! generator needs: `offset(idx) = swizzle(base + sum_j index_j(idx_j) + layout(i))`.

use std::fmt;

use crate::kernel::Var;
use crate::layout::{ComposedLayout, Layout, LayoutError, Swizzle};

/// One item of a slicing coordinate (CuTe's `tensor(c0, _, c2)` and `local_tile`'s `coord`): the
/// one vocabulary of views, device tensors and fragments.
#[derive(Clone, Copy, Debug)]
pub enum Idx {
    /// A host coordinate: folded into the static offset.
    At(i64),
    /// A coordinate in a register (a block index, a k-tile, a pipeline stage), below the mode's
    /// extent: it becomes a dynamic index (a device tensor adds its offset in registers).
    Dyn(Var<u32>),
    /// CuTe's `_`: the mode is kept.
    All,
}

impl Idx {
    /// A device coordinate whose value does not matter here: for host-side views, which only
    /// record that the index is dynamic.
    pub fn dynamic() -> Idx {
        Idx::Dyn(Var::konst(0))
    }

    /// Whether this is [`Idx::Dyn`].
    pub fn is_dyn(&self) -> bool {
        matches!(self, Idx::Dyn(_))
    }
}

/// A layout slice whose offset depends on some indices known only on the device.
///
/// CuTe slices a tensor with a thread index or a tile coordinate and folds the result into the
/// tensor's pointer (or, for a swizzled layout, into the composed layout's offset). rute keeps that
/// offset *as layouts of the indices*: `indices[j]` maps index `j` to an offset. So a kernel can
/// compute `base + sum_j indices[j](idx_j)` in registers, and evaluate `layout` on the host for every
/// element it unrolls. The element at per-slice coordinate `i` is
/// `swizzle(base + sum_j indices[j](idx_j) + layout(i))`; the swizzle applies last, as in CuTe's
/// `ComposedLayout<Swizzle, Offset, Layout>`.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct View {
    /// The outer swizzle (identity for a plain layout).
    pub swizzle: Swizzle,
    /// The static offset inside the swizzle.
    pub base: i64,
    /// For each dynamic index, in the order they were added: index -> offset.
    pub indices: Vec<Layout>,
    /// The per-slice layout: coordinate -> offset.
    pub layout: Layout,
}

impl From<Layout> for View {
    fn from(layout: Layout) -> View {
        View {
            swizzle: Swizzle::identity(),
            base: 0,
            indices: Vec::new(),
            layout,
        }
    }
}

impl From<ComposedLayout> for View {
    fn from(c: ComposedLayout) -> View {
        View {
            swizzle: c.swizzle,
            base: c.offset,
            indices: Vec::new(),
            layout: c.layout,
        }
    }
}

impl View {
    /// The same swizzle, base and indices around a reshaped layout (how every CuTe operation that
    /// only changes the domain carries over to composed layouts and sliced tensors).
    pub fn with_layout(&self, layout: Layout) -> View {
        View {
            layout,
            ..self.clone()
        }
    }

    /// A view with one more dynamic index, `index: idx -> offset`.
    pub fn push_index(&self, index: Layout, layout: Layout) -> View {
        let mut v = self.with_layout(layout);
        v.indices.push(index);
        v
    }

    /// CuTe's slicing `tensor(c0, c1, ...)` by top-level mode, where [`Idx::All`] is `_`: an
    /// [`Idx::At`] folds `mode_i(c)` into `base`, an [`Idx::Dyn`] adds `mode_i` as a dynamic index (in
    /// order), and the kept modes form the new layout. Missing trailing items are `_`.
    ///
    /// ```
    /// use dsl_core::tiled::{Idx, View};
    /// // tAsA(_, _, ik, ismem_read) with ik = 1 on the host and the stage in a register.
    /// let v = View::from("(8,4,2,3):(1,8,32,64)".parse::<dsl_core::layout::Layout>().unwrap());
    /// let s = v.slice(&[Idx::All, Idx::All, Idx::At(1), Idx::dynamic()]).unwrap();
    /// assert_eq!(s.layout.to_string(), "(8,4):(1,8)");
    /// assert_eq!(s.base, 32);
    /// assert_eq!(s.offset_of(&[2]).unwrap(), 32 + 128);
    /// ```
    pub fn slice(&self, coord: &[Idx]) -> Result<View, LayoutError> {
        let modes = self.layout.modes();
        if coord.len() > modes.len() {
            return Err(LayoutError::precondition(
                "slice",
                format!("{self}, {coord:?}"),
                format!(
                    "the coordinate has {} items but the layout only {} modes",
                    coord.len(),
                    modes.len()
                ),
            ));
        }
        let mut view = self.clone();
        let mut kept = Vec::new();
        for (i, m) in modes.into_iter().enumerate() {
            match coord.get(i).copied().unwrap_or(Idx::All) {
                Idx::All => kept.push(m),
                Idx::Dyn(_) => view.indices.push(m),
                Idx::At(c) => {
                    if c < 0 || c >= m.size() {
                        return Err(LayoutError::precondition(
                            "slice",
                            format!("{self}, {coord:?}"),
                            format!("coordinate {c} is outside mode {i} of extent {}", m.size()),
                        ));
                    }
                    view.base =
                        view.base
                            .checked_add(m.eval(c)?)
                            .ok_or_else(|| LayoutError::Overflow {
                                op: "slice",
                                args: format!("{self}, {coord:?}"),
                            })?;
                }
            }
        }
        view.layout = Layout::from_modes(kept);
        Ok(view)
    }

    /// The static offset for host index values (one per index): `base + sum_j indices[j](idx_j)`.
    pub fn offset_of(&self, idx: &[i64]) -> Result<i64, LayoutError> {
        if idx.len() != self.indices.len() {
            return Err(LayoutError::precondition(
                "View::offset_of",
                format!("{self}, {idx:?}"),
                format!(
                    "the view has {} dynamic indices but {} values were given",
                    self.indices.len(),
                    idx.len()
                ),
            ));
        }
        let mut off = self.base;
        for (l, &i) in self.indices.iter().zip(idx) {
            off = off
                .checked_add(l.eval(i)?)
                .ok_or_else(|| LayoutError::Overflow {
                    op: "View::offset_of",
                    args: format!("{self}, {idx:?}"),
                })?;
        }
        Ok(off)
    }

    /// Fix every dynamic index to a host value: the composed layout CuTe's slicing would give.
    /// Post-condition: `R(i) == swizzle(offset_of(idx) + layout(i))`.
    pub fn at(&self, idx: &[i64]) -> Result<ComposedLayout, LayoutError> {
        Ok(ComposedLayout::new(
            self.swizzle,
            self.offset_of(idx)?,
            self.layout.clone(),
        ))
    }

    /// Fix the last-added index to a host value, folding it into `base`.
    pub fn bind_last(&self, value: i64) -> Result<View, LayoutError> {
        let mut v = self.clone();
        let l = v.indices.pop().ok_or_else(|| {
            LayoutError::precondition(
                "View::bind_last",
                self.to_string(),
                "the view has no dynamic index",
            )
        })?;
        v.base = v
            .base
            .checked_add(l.eval(value)?)
            .ok_or_else(|| LayoutError::Overflow {
                op: "View::bind_last",
                args: format!("{self}, {value}"),
            })?;
        Ok(v)
    }

    /// The offset of per-slice coordinate `i` for host index values.
    pub fn eval(&self, idx: &[i64], i: i64) -> Result<i64, LayoutError> {
        self.at(idx)?.eval(i)
    }
}

impl fmt::Display for View {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.swizzle.is_identity() {
            write!(f, "{} o ", self.swizzle)?;
        }
        write!(f, "({}", self.base)?;
        for (j, l) in self.indices.iter().enumerate() {
            write!(f, " + [{l}](i{j})")?;
        }
        write!(f, ") o {}", self.layout)
    }
}
