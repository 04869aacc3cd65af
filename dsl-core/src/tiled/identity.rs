//! CuTe's identity tensor on the host (`make_identity_tensor(shape)`): a view of a domain whose
//! offsets encode the coordinates, so that a partition of it (by a tiled MMA or copy, for one
//! thread) says which coordinate each of the thread's values is, without arithmetic on
//! offsets in the caller.
//!
//! ```
//! use dsl_core::tiled::make_identity_tensor;
//! let id = make_identity_tensor(&[64, 256]).unwrap();
//! assert_eq!(id.coord(id.view().eval(&[], 70).unwrap()), vec![6, 1]);
//! ```

use super::view::View;
use crate::layout::{IntTuple, Layout, LayoutError};

/// The coordinates of a domain as a view ([`make_identity_tensor`]): element `c` of the domain
/// is at offset `c_0 + shape_0 * (c_1 + shape_1 * (...))` (column-major), which
/// [`IdentityTensor::coord`] turns back into `c`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdentityTensor {
    shape: Vec<i64>,
    view: View,
}

/// The identity tensor of `shape` (every extent at least 1).
///
/// Post-condition: for every coordinate `c` of `shape`, `coord(view().layout(c)) == c`.
pub fn make_identity_tensor(shape: &[i64]) -> Result<IdentityTensor, LayoutError> {
    let layout = Layout::col_major(IntTuple::ints(shape))?;
    Ok(IdentityTensor {
        shape: shape.to_vec(),
        view: View::from(layout),
    })
}

impl IdentityTensor {
    /// The view to tile and partition, as the data's.
    pub fn view(&self) -> &View {
        &self.view
    }

    /// The coordinate an offset of the view encodes.
    pub fn coord(&self, offset: i64) -> Vec<i64> {
        let mut rest = offset;
        self.shape
            .iter()
            .map(|&extent| {
                let c = rest % extent;
                rest /= extent;
                c
            })
            .collect()
    }

    /// The coordinates of a partition's values, in its order: `part` is this tensor's view
    /// partitioned for one thread (its dynamic indices bound), value `i` at `part`'s offset `i`.
    pub fn coords_of(&self, part: &View) -> Result<Vec<Vec<i64>>, LayoutError> {
        let at = part.at(&vec![0; part.indices.len()])?;
        Ok(at.values()?.into_iter().map(|o| self.coord(o)).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::atom::{MmaAtom, Sm80Mma};
    use crate::tiled::make_tiled_mma;

    /// Every coordinate of the domain comes back from its offset.
    #[test]
    fn offsets_decode_to_their_coordinates() {
        let id = make_identity_tensor(&[5, 3, 2]).unwrap();
        for c2 in 0..2 {
            for c1 in 0..3 {
                for c0 in 0..5 {
                    let off = id
                        .view()
                        .layout
                        .crd2idx(&IntTuple::ints(&[c0, c1, c2]))
                        .unwrap();
                    assert_eq!(id.coord(off), vec![c0, c1, c2]);
                }
            }
        }
    }

    /// A thread's partition of the identity names the coordinates its partition of a
    /// row-major tile of the same shape holds (the offsets of that tile, decoded by hand).
    #[test]
    fn a_partition_names_the_coordinates_of_the_data() {
        let perm = [32, 32, 16].map(|n| Some(Layout::vector(n, 1).unwrap()));
        let atoms = Layout::col_major(IntTuple::ints(&[2, 2, 1])).unwrap();
        let mma = make_tiled_mma(MmaAtom::new(Sm80Mma::F32F16F16F32), &atoms, &perm).unwrap();
        let (rows, cols) = (64, 32);
        let id = make_identity_tensor(&[rows, cols]).unwrap();
        let data = View::from(
            Layout::new(IntTuple::ints(&[rows, cols]), IntTuple::ints(&[cols, 1])).unwrap(),
        );
        for t in [0, 5, 63, 127] {
            let thr = mma.get_slice(t).unwrap();
            let coords = id.coords_of(&thr.partition_c(id.view()).unwrap()).unwrap();
            let part = thr.partition_c(&data).unwrap();
            for (i, c) in coords.iter().enumerate() {
                let off = part.eval(&[], i as i64).unwrap();
                assert_eq!(c, &vec![off / cols, off % cols], "thread {t} value {i}");
            }
        }
    }
}
