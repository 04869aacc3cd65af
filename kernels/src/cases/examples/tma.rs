//! The TMA examples: `tma_round_trip`, `tma_pipeline` and `tma_stream`, their tensor maps
//! described by the same fields the JIT encodes (`TmaDescriptor`).

use dsl_core::atom::tma::{L2Promotion, TmaDescriptor, TmaSwizzleMode};
use dsl_core::atom::ValType;
use dsl_core::ir::Kernel;
use half::f16;

use super::{floats, one, refused};
use crate::cases::run::{Buffer, CaseArg, Data, Elem, Run, Shape, Step};
use crate::cases::{Agreement, Case, CaseError, Expect, SMS};
use crate::examples::tma_pipeline::{self as tp, RowSum};
use crate::examples::tma_round_trip::{self as trt, TmaBox};
use crate::examples::tma_stream::{self as ts, TmaStream as Ring};
use crate::examples::{self};

/// A `rows x cols` f32 tensor copied box by box through shared memory (negated there with
/// `negate`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TmaRoundTrip {
    /// Rows.
    pub rows: usize,
    /// Columns (a multiple of 4: a TMA row stride is a multiple of 16 bytes).
    pub cols: usize,
    /// The box a block moves.
    pub tile_box: TmaBox,
    /// Whether the block negates the tile in shared memory.
    pub negate: bool,
}

impl TmaRoundTrip {
    /// The tensor map of a row-major `rows x cols` f32 tensor with the case's box.
    fn map(&self) -> TmaDescriptor {
        TmaDescriptor {
            elem: ValType::F32,
            global_dims: vec![self.cols as u64, self.rows as u64],
            global_strides_bytes: vec![4 * self.cols as u64],
            box_dims: vec![self.tile_box.cols, self.tile_box.rows],
            element_strides: vec![1, 1],
            swizzle: TmaSwizzleMode::None,
            l2_promotion: L2Promotion::default(),
        }
    }
}

impl Case for TmaRoundTrip {
    fn describe(&self) -> String {
        format!(
            "tma_round_trip, box {}x{}{}, {}x{}",
            self.tile_box.rows,
            self.tile_box.cols,
            if self.negate { ", negated" } else { "" },
            self.rows,
            self.cols
        )
    }

    fn kernels(&self) -> Result<Vec<Kernel>, CaseError> {
        one(self, examples::tma_round_trip(self.tile_box, self.negate))
    }

    fn run(&self, seed: u64) -> Result<Run, CaseError> {
        let (rows, cols) = (self.rows, self.cols);
        let src = floats(seed, 1, rows * cols, 1.0);
        let want = if self.negate {
            src.iter().map(|v| -v).collect()
        } else {
            src.clone()
        };
        let map = |buffer| CaseArg::TensorMap {
            buffer,
            descriptor: self.map(),
        };
        Ok(Run {
            buffers: vec![
                Buffer::input("src", Data::F32(src)),
                Buffer::output("dst", Elem::F32, rows * cols),
            ],
            steps: vec![Step {
                kernel: 0,
                shape: Shape::new(
                    [
                        (cols as u32).div_ceil(self.tile_box.cols),
                        (rows as u32).div_ceil(self.tile_box.rows),
                        1,
                    ],
                    [trt::THREADS, 1, 1],
                ),
                args: vec![map(0), map(1)],
            }],
            expect: vec![Expect::bits(1, Data::F32(want))],
        })
    }
}

/// The row sums of a `rows x cols` f32 matrix through the warp-specialized TMA ring.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TmaPipeline {
    /// Rows.
    pub rows: usize,
    /// Columns (a multiple of 4).
    pub cols: usize,
}

/// Each row's exact sum and the sum of its magnitudes, of the row-major `x` of `cols` columns.
pub fn row_sums(x: &[f32], cols: usize) -> (Vec<f64>, Vec<f64>) {
    x.chunks(cols)
        .map(|row| {
            let f = row.iter().map(|&v| f64::from(v));
            (f.clone().sum::<f64>(), f.map(f64::abs).sum::<f64>() + 1e-30)
        })
        .unzip()
}

impl Case for TmaPipeline {
    fn describe(&self) -> String {
        format!("tma_pipeline, {}x{}", self.rows, self.cols)
    }

    fn kernels(&self) -> Result<Vec<Kernel>, CaseError> {
        one(self, tp::default_kernel())
    }

    fn run(&self, seed: u64) -> Result<Run, CaseError> {
        let (rows, cols) = (self.rows, self.cols);
        let cfg = RowSum::new().map_err(|e| refused(self, e))?;
        let descriptor = cfg
            .tma
            .descriptor(&[rows as u64, cols as u64], &[cols as u64, 1])
            .map_err(|e| refused(self, e))?;
        let x = floats(seed, 1, rows * cols, 1.0);
        let (sums, mags) = row_sums(&x, cols);
        Ok(Run {
            buffers: vec![
                Buffer::input("x", Data::F32(x)),
                Buffer::output("out", Elem::F32, rows),
            ],
            steps: vec![Step {
                kernel: 0,
                shape: {
                    let (gx, gy, gz) = tp::launch_grid(rows as u32);
                    Shape::new([gx, gy, gz], [tp::THREADS, 1, 1]).with_dynamic_smem(tp::SMEM_BYTES)
                },
                args: vec![
                    CaseArg::Buffer(1),
                    CaseArg::TensorMap {
                        buffer: 0,
                        descriptor,
                    },
                    CaseArg::U32(rows as u32),
                    CaseArg::U32(cols as u32),
                ],
            }],
            expect: vec![Expect::close(1, sums, mags, 1e-5, Agreement::Bits)],
        })
    }
}

/// `D = A` for a `rows x cols` f16 matrix through a persistent ring of TMA loads and stores:
/// tiles of `tile_rows` rows, `stages` k-tiles in the ring, stores `lag` behind; at most
/// [`SMS`] blocks, so that a block walks several tiles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TmaStream {
    /// Rows.
    pub rows: usize,
    /// Columns (a multiple of 8).
    pub cols: usize,
    /// Rows of a tile: 64, 128 or 256.
    pub tile_rows: u32,
    /// k-tiles in the ring.
    pub stages: u32,
    /// Stores left pending before the oldest one's stage is freed.
    pub lag: u32,
}

impl TmaStream {
    fn ring(&self) -> Result<Ring, CaseError> {
        Ring::new(self.tile_rows, self.stages, self.lag).map_err(|e| refused(self, e))
    }
}

impl Case for TmaStream {
    fn describe(&self) -> String {
        format!(
            "tma_stream, {} stages of {} rows, stores {} behind, {}x{}",
            self.stages, self.tile_rows, self.lag, self.rows, self.cols
        )
    }

    fn kernels(&self) -> Result<Vec<Kernel>, CaseError> {
        one(self, ts::tma_stream(&self.ring()?))
    }

    fn run(&self, seed: u64) -> Result<Run, CaseError> {
        let ring = self.ring()?;
        let (rows, cols) = (self.rows, self.cols);
        let [a_map, d_map] = ring
            .descriptors(rows as u64, cols as u64, L2Promotion::default())
            .map_err(|e| refused(self, e))?;
        let a: Vec<f16> = floats(seed, 1, rows * cols, 1.0)
            .into_iter()
            .map(f16::from_f32)
            .collect();
        let (tiles, k_tiles) = ring.tiles(rows as u32, cols as u32);
        Ok(Run {
            expect: vec![Expect::bits(1, Data::F16(a.clone()))],
            buffers: vec![
                Buffer::input("a", Data::F16(a)),
                Buffer::output("d", Elem::F16, rows * cols),
            ],
            steps: vec![Step {
                kernel: 0,
                shape: Shape::linear(tiles.min(SMS), ts::THREADS)
                    .with_dynamic_smem(ring.smem_bytes()),
                args: vec![
                    CaseArg::TensorMap {
                        buffer: 0,
                        descriptor: a_map,
                    },
                    CaseArg::TensorMap {
                        buffer: 1,
                        descriptor: d_map,
                    },
                    CaseArg::U32(tiles),
                    CaseArg::U32(k_tiles),
                ],
            }],
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn row_sums_add_each_row() {
        let (s, m) = row_sums(&[1.0, -2.0, 3.0, 4.0], 2);
        assert_eq!(s, [-1.0, 7.0]);
        assert!((m[0] - 3.0).abs() < 1e-12 && (m[1] - 7.0).abs() < 1e-12);
    }
}
