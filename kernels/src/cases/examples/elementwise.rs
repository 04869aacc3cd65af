//! The copying examples: `vector_add`, `transpose` and `async_copy`, each compared bit for bit.

use dsl_core::ir::Kernel;

use super::{floats, one};
use crate::cases::run::{Buffer, CaseArg, Data, Elem, Run, Shape, Step};
use crate::cases::{Case, CaseError, Expect};
use crate::examples::{self, transpose, vector_add};

/// Elements per thread of `vector_add` (its `VEC`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Width {
    /// One.
    One,
    /// Two (8-byte vectors).
    Two,
    /// Four (16-byte vectors).
    Four,
}

impl Width {
    /// Elements.
    pub fn elems(self) -> u32 {
        match self {
            Width::One => 1,
            Width::Two => 2,
            Width::Four => 4,
        }
    }
}

/// `c = a + b` over `n` floats, [`Width`] per thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VectorAdd {
    /// Elements per thread.
    pub width: Width,
    /// Elements.
    pub n: usize,
}

impl Case for VectorAdd {
    fn describe(&self) -> String {
        format!(
            "vector_add, {} per thread, n = {}",
            self.width.elems(),
            self.n
        )
    }

    fn kernels(&self) -> Result<Vec<Kernel>, CaseError> {
        one(
            self,
            match self.width {
                Width::One => examples::vector_add::<1>(),
                Width::Two => examples::vector_add::<2>(),
                Width::Four => examples::vector_add::<4>(),
            },
        )
    }

    fn run(&self, seed: u64) -> Result<Run, CaseError> {
        let n = self.n;
        let (a, b) = (floats(seed, 1, n, 1.0), floats(seed, 2, n, 1.0));
        let sum = a.iter().zip(&b).map(|(x, y)| x + y).collect();
        let threads = (n as u32).div_ceil(self.width.elems());
        Ok(Run {
            buffers: vec![
                Buffer::input("a", Data::F32(a)),
                Buffer::input("b", Data::F32(b)),
                Buffer::output("c", Elem::F32, n),
            ],
            steps: vec![Step {
                kernel: 0,
                shape: Shape::linear(threads.div_ceil(vector_add::THREADS), vector_add::THREADS),
                args: vec![
                    CaseArg::Buffer(0),
                    CaseArg::Buffer(1),
                    CaseArg::Buffer(2),
                    CaseArg::U32(n as u32),
                ],
            }],
            expect: vec![Expect::bits(2, Data::F32(sum))],
        })
    }
}

/// `dst = src^T` for a `rows x cols` matrix, with blocks of `32 x block_rows` threads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Transpose {
    /// Rows of `src`.
    pub rows: usize,
    /// Columns of `src`.
    pub cols: usize,
    /// Threads along y of a block (divides 32).
    pub block_rows: u32,
}

/// The `cols x rows` transpose of the row-major `rows x cols` matrix `src`.
pub fn transpose_reference<T: Copy>(src: &[T], rows: usize, cols: usize) -> Vec<T> {
    (0..rows * cols)
        .map(|i| {
            let (c, r) = (i / rows, i % rows);
            src[r * cols + c]
        })
        .collect()
}

impl Case for Transpose {
    fn describe(&self) -> String {
        format!(
            "transpose, blocks of 32x{}, {}x{}",
            self.block_rows, self.rows, self.cols
        )
    }

    fn kernels(&self) -> Result<Vec<Kernel>, CaseError> {
        one(self, examples::transpose(self.block_rows))
    }

    fn run(&self, seed: u64) -> Result<Run, CaseError> {
        let (rows, cols) = (self.rows, self.cols);
        let src = floats(seed, 1, rows * cols, 1.0);
        let want = transpose_reference(&src, rows, cols);
        let tile = transpose::TILE;
        Ok(Run {
            buffers: vec![
                Buffer::input("src", Data::F32(src)),
                Buffer::output("dst", Elem::F32, rows * cols),
            ],
            steps: vec![Step {
                kernel: 0,
                shape: Shape::new(
                    [
                        (cols as u32).div_ceil(tile),
                        (rows as u32).div_ceil(tile),
                        1,
                    ],
                    [tile, self.block_rows, 1],
                ),
                args: vec![
                    CaseArg::Buffer(0),
                    CaseArg::Buffer(1),
                    CaseArg::U32(rows as u32),
                    CaseArg::U32(cols as u32),
                ],
            }],
            expect: vec![Expect::bits(1, Data::F32(want))],
        })
    }
}

/// `dst = src` over `n` floats through `cp.async` double buffering, `blocks` blocks of
/// `threads` threads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AsyncCopy {
    /// Elements.
    pub n: usize,
    /// Threads per block.
    pub threads: u32,
    /// Blocks (fewer than the chunks: each block's buffers cycle).
    pub blocks: u32,
}

impl Case for AsyncCopy {
    fn describe(&self) -> String {
        format!(
            "async_copy, {} blocks of {}, n = {}",
            self.blocks, self.threads, self.n
        )
    }

    fn kernels(&self) -> Result<Vec<Kernel>, CaseError> {
        one(self, examples::async_copy(self.threads))
    }

    fn run(&self, seed: u64) -> Result<Run, CaseError> {
        let src = floats(seed, 1, self.n, 1.0);
        Ok(Run {
            expect: vec![Expect::bits(1, Data::F32(src.clone()))],
            buffers: vec![
                Buffer::input("src", Data::F32(src)),
                Buffer::output("dst", Elem::F32, self.n),
            ],
            steps: vec![Step {
                kernel: 0,
                shape: Shape::linear(self.blocks, self.threads),
                args: vec![
                    CaseArg::Buffer(0),
                    CaseArg::Buffer(1),
                    CaseArg::U32(self.n as u32),
                ],
            }],
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_transpose_reference_transposes() {
        let src = [1, 2, 3, 4, 5, 6]; // 2 x 3
        assert_eq!(transpose_reference(&src, 2, 3), [1, 4, 2, 5, 3, 6]);
    }
}
