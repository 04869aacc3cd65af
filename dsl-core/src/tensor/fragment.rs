//! Register fragments: an array of registers seen through a layout of values.

use super::Idx;
use crate::ir::Type;
use crate::kernel::{pack_pair_bits, DeviceType, Var};
use crate::layout::{Layout, LayoutError};
use crate::tiled::View;

/// A register tensor: `regs` hold the values `vals_per_reg` at a time (two 16-bit values per
/// 32-bit register, value `2j` in the low half), and value `i` of the fragment is
/// `offset + layout(i)`. CuTe's `make_tensor<T>(layout)` in registers.
#[derive(Clone, Debug)]
pub struct Fragment<R> {
    /// The registers.
    pub regs: Vec<Var<R>>,
    /// Values per register (1 or 2).
    pub vals_per_reg: i64,
    /// The value layout.
    pub layout: Layout,
    /// Static offset of this slice into the values.
    pub offset: i64,
}

impl<R: DeviceType> Fragment<R> {
    /// New registers for the values `0..cosize(layout)`.
    pub fn new(layout: Layout, vals_per_reg: i64) -> Result<Self, LayoutError> {
        let n = layout.cosize();
        if vals_per_reg < 1 || n % vals_per_reg != 0 {
            return Err(LayoutError::precondition(
                "Fragment::new",
                layout.to_string(),
                format!("{n} values do not fill registers of {vals_per_reg}"),
            ));
        }
        Ok(Fragment {
            regs: (0..n / vals_per_reg).map(|_| Var::uninit()).collect(),
            vals_per_reg,
            layout,
            offset: 0,
        })
    }

    /// The same registers through another layout (CuTe's `retile` result, for example).
    pub fn with_layout(&self, layout: Layout) -> Self {
        Fragment {
            layout,
            ..self.clone()
        }
    }

    /// Slicing with host coordinates ([`Idx::Dyn`] is refused: registers are not indexable).
    pub fn slice(&self, coord: &[Idx]) -> Result<Self, LayoutError> {
        let crd = coord
            .iter()
            .map(|c| match c {
                Idx::At(i) => Ok(Idx::At(*i)),
                Idx::All => Ok(Idx::All),
                Idx::Dyn(_) => Err(LayoutError::precondition(
                    "Fragment::slice",
                    self.layout.to_string(),
                    "registers take host coordinates only",
                )),
            })
            .collect::<Result<Vec<_>, _>>()?;
        let v = View::from(self.layout.clone()).slice(&crd)?;
        Ok(Fragment {
            layout: v.layout,
            offset: self.offset + v.base,
            ..self.clone()
        })
    }

    /// The value index of flat coordinate `i`.
    pub fn value(&self, i: i64) -> Result<i64, LayoutError> {
        Ok(self.offset + self.layout.eval(i)?)
    }

    /// The register holding values `(v0, v0 + 1, ...)` that flat coordinates `i..i+vals_per_reg`
    /// name; an error where they are not one whole register in order.
    pub fn reg_at(&self, i: i64) -> Result<Var<R>, LayoutError> {
        let v0 = self.value(i)?;
        for k in 1..self.vals_per_reg {
            if self.value(i + k)? != v0 + k {
                return Err(LayoutError::precondition(
                    "Fragment::reg_at",
                    self.layout.to_string(),
                    format!("values at {i}.. are not one register"),
                ));
            }
        }
        if v0 % self.vals_per_reg != 0 {
            return Err(LayoutError::precondition(
                "Fragment::reg_at",
                self.layout.to_string(),
                format!("value {v0} does not start a register"),
            ));
        }
        self.regs
            .get((v0 / self.vals_per_reg) as usize)
            .copied()
            .ok_or_else(|| {
                LayoutError::precondition(
                    "Fragment::reg_at",
                    self.layout.to_string(),
                    format!("value {v0} is past the fragment"),
                )
            })
    }
}

impl Fragment<f32> {
    /// The values converted to 16-bit `T` (f16 or bf16) and packed in pairs, value `2i` in the
    /// low half of register `i` (CuTe's `make_fragment_like<T>` + `copy`/convert of an
    /// accumulator, as an epilogue does before `stmatrix`). Same layout and offset.
    pub fn to_pairs<T: DeviceType>(&self) -> Result<Fragment<u32>, LayoutError> {
        if self.vals_per_reg != 1 || !self.regs.len().is_multiple_of(2) || T::TY.bits() != 16 {
            return Err(LayoutError::precondition(
                "Fragment::to_pairs",
                self.layout.to_string(),
                format!(
                    "{} f32 registers do not pack into 16-bit pairs",
                    self.regs.len()
                ),
            ));
        }
        let regs = self
            .regs
            .chunks(2)
            .map(|p| pack_pair_bits(T::TY == Type::BF16, p[0], p[1]))
            .collect();
        Ok(Fragment {
            regs,
            vals_per_reg: 2,
            layout: self.layout.clone(),
            offset: self.offset,
        })
    }
}
