//! Shared-memory tensors, plain or swizzled.

use std::collections::BTreeMap;

use super::dyn_eval::{add, eval_dyn, scale, swizzle_dyn};
use super::Idx;
use crate::ir::{Address, Reg};
use crate::kernel::{DeviceType, SharedPtr, Var};
use crate::layout::{Layout, LayoutError, Swizzle};
use crate::tiled::View;

/// A tensor in shared memory: `ptr` plus the offsets (in elements)
/// `swizzle(inner + base + layout(i)) + outer`, where `inner` and `outer` are device offsets:
/// `inner` (the thread's part) goes through the swizzle, `outer` (indices whose strides are
/// multiples of the swizzle's period, such as a pipeline stage) is added after it.
#[derive(Clone, Debug)]
pub struct STensor<T> {
    ptr: SharedPtr<T>,
    swizzle: Swizzle,
    base: i64,
    layout: Layout,
    inner: Var<u32>,
    /// gcd of the strides that make up `inner` (0 when it is 0): its alignment.
    inner_align: i64,
    outer: Var<u32>,
}

fn gcd(a: i64, b: i64) -> i64 {
    if b == 0 {
        a.abs()
    } else {
        gcd(b, a % b)
    }
}

fn strides_gcd(l: &Layout) -> i64 {
    let sh = l.shape().flatten_ints();
    l.stride()
        .flatten_ints()
        .iter()
        .zip(&sh)
        .filter(|(_, &s)| s != 1)
        .fold(0, |g, (&d, _)| gcd(g, d))
}

impl<T: DeviceType> STensor<T> {
    /// A tensor over the allocation at `ptr` with a static view (no dynamic indices): CuTe's
    /// `make_tensor(make_smem_ptr(p), layout)`.
    pub fn new(ptr: SharedPtr<T>, view: impl Into<View>) -> Result<Self, LayoutError> {
        let view = view.into();
        if !view.indices.is_empty() {
            return Err(LayoutError::precondition(
                "STensor::new",
                view.to_string(),
                "a new tensor takes a view without dynamic indices",
            ));
        }
        Ok(STensor {
            ptr,
            swizzle: view.swizzle,
            base: view.base,
            layout: view.layout,
            inner: Var::konst(0),
            inner_align: 0,
            outer: Var::konst(0),
        })
    }

    /// The per-slice layout (coordinate -> static offset before the swizzle).
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// The static view (swizzle, base, layout), with the device offsets left out.
    pub fn view(&self) -> View {
        View {
            swizzle: self.swizzle,
            base: self.base,
            indices: Vec::new(),
            layout: self.layout.clone(),
        }
    }

    /// The swizzle.
    pub fn swizzle(&self) -> Swizzle {
        self.swizzle
    }

    /// The gcd of the strides that make up the thread-dependent offset inside the swizzle (0
    /// when there is none).
    pub(crate) fn inner_align(&self) -> i64 {
        self.inner_align
    }

    /// The byte address of the tensor's origin *before* the swizzle (`ptr + inner + base +
    /// outer`, in bytes): what a GMMA descriptor's start address holds, the hardware applying
    /// the swizzle to address bits itself.
    pub(crate) fn unswizzled_origin_bytes(&self) -> Var<u32> {
        let bytes = T::TY.bytes();
        let pre = add(self.inner, Var::konst(self.base as u32));
        add(self.ptr.addr(), scale(add(pre, self.outer), bytes))
    }

    /// The swizzle's period `2^(M+S+B)`: offsets that are multiples of it commute with it (1 for
    /// no swizzle).
    pub(crate) fn period(&self) -> i64 {
        if self.swizzle.is_identity() {
            1
        } else {
            let top = self.swizzle.base() as i64
                + self.swizzle.bits() as i64
                + i64::from(self.swizzle.shift().unsigned_abs());
            1i64 << top
        }
    }

    /// Adds the device offset `index(x)` (with `x < bound`), inside or after the swizzle.
    fn add_index(&mut self, index: &Layout, x: Var<u32>, bound: i64) -> Result<(), LayoutError> {
        let off = eval_dyn(index, x, bound)?;
        let g = strides_gcd(index);
        if g % self.period() == 0 {
            self.outer = add(self.outer, off);
        } else {
            self.inner = add(self.inner, off);
            self.inner_align = gcd(self.inner_align, g);
        }
        Ok(())
    }

    fn with_view(&self, v: View, xs: &[(Var<u32>, i64)]) -> Result<Self, LayoutError> {
        let mut t = STensor {
            base: v.base,
            layout: v.layout.clone(),
            ..self.clone()
        };
        for (l, &(x, bound)) in v.indices.iter().zip(xs) {
            t.add_index(l, x, bound)?;
        }
        Ok(t)
    }

    view_methods!();

    /// The shared-memory address of each static offset (before the swizzle: `base + layout(i)`
    /// values), computing the swizzle once per distinct remainder modulo the period.
    pub(crate) fn addresses(
        &self,
        offsets: &[i64],
        align: i64,
    ) -> Result<Vec<Address>, LayoutError> {
        let p = self.period();
        if self.inner_align % align != 0 && self.inner.as_const() != Some(0) {
            return Err(LayoutError::precondition(
                "copy",
                self.view().to_string(),
                format!("the thread offsets are not multiples of the {align}-element access"),
            ));
        }
        let bytes = i64::from(T::TY.bytes());
        let outer_addr = add(self.ptr.addr(), scale(self.outer, bytes as u32));
        let mut groups: BTreeMap<i64, Reg> = BTreeMap::new();
        let mut out = Vec::with_capacity(offsets.len());
        for &s in offsets {
            if s < 0 {
                return Err(LayoutError::precondition(
                    "copy",
                    self.view().to_string(),
                    format!("negative static offset {s}"),
                ));
            }
            if s % align != 0
                || (!self.swizzle.is_identity() && (1i64 << self.swizzle.base()) % align != 0)
            {
                return Err(LayoutError::precondition(
                    "copy",
                    self.view().to_string(),
                    format!("offset {s} or the swizzle breaks the {align}-element access"),
                ));
            }
            let (hi, lo) = (s - s % p, s % p);
            let reg = match groups.get(&lo) {
                Some(r) => *r,
                None => {
                    let t = add(self.inner, Var::konst(lo as u32));
                    let sw = swizzle_dyn(&self.swizzle, t);
                    let r = add(outer_addr, scale(sw, bytes as u32)).to_reg();
                    groups.insert(lo, r);
                    r
                }
            };
            out.push(Address::reg(reg, hi * bytes));
        }
        Ok(out)
    }
}

/// Device values of a coordinate's dynamic items, each with the extent of its mode.
pub(crate) type DynItems = Vec<(Var<u32>, i64)>;

/// The device values of a coordinate's dynamic items, each with the extent of its mode (what
/// the tensor adds to its device offsets once the view is sliced).
pub(crate) fn host_coord(
    layout: &Layout,
    coord: &[Idx],
) -> Result<(Vec<Idx>, DynItems), LayoutError> {
    let modes = layout.modes();
    let xs = coord
        .iter()
        .enumerate()
        .filter_map(|(i, c)| match *c {
            Idx::Dyn(x) => Some((x, modes.get(i).map(|m| m.size()).unwrap_or(1))),
            _ => None,
        })
        .collect();
    Ok((coord.to_vec(), xs))
}
