//! The reducing examples: `reduce_sum` (two launches), `softmax` and `layernorm` ([`RowWise`],
//! a block per row), each within a tolerance of the f64 reference, and bit for bit between machines (their
//! reductions' order is the kernel's).

use dsl_core::ir::Kernel;

use super::{floats, one};
use crate::cases::run::{Buffer, CaseArg, Data, Elem, Run, Shape, Step};
use crate::cases::{Agreement, Case, CaseError, Expect};
use crate::examples::{self, layernorm, softmax};

/// The sum of `n` floats: `blocks` blocks of `threads` threads into one partial sum per block,
/// then one block over the partial sums.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReduceSum {
    /// Elements.
    pub n: usize,
    /// Threads per block (a multiple of 32).
    pub threads: u32,
    /// Blocks of the first launch.
    pub blocks: u32,
}

/// Each block's sum of the elements of `x` its threads visit in `reduce_sum`'s grid stride
/// (`blocks` blocks of `threads`), exact, and the sum of their magnitudes.
pub fn block_sums(x: &[f32], threads: u32, blocks: u32) -> (Vec<f64>, Vec<f64>) {
    let (threads, blocks) = (threads as usize, blocks as usize);
    let mut sums = vec![0.0f64; blocks];
    let mut mags = vec![0.0f64; blocks];
    for (i, &v) in x.iter().enumerate() {
        let b = (i % (threads * blocks)) / threads;
        sums[b] += f64::from(v);
        mags[b] += f64::from(v).abs();
    }
    (sums, mags)
}

/// The tolerance of a float sum relative to the magnitudes of its terms: f32 partial sums over
/// a tree of depth about log2(n).
const SUM_TOL: f64 = 1e-5;

impl Case for ReduceSum {
    fn describe(&self) -> String {
        format!(
            "reduce_sum, {} blocks of {}, n = {}",
            self.blocks, self.threads, self.n
        )
    }

    fn kernels(&self) -> Result<Vec<Kernel>, CaseError> {
        one(self, examples::reduce_sum(self.threads))
    }

    fn run(&self, seed: u64) -> Result<Run, CaseError> {
        let x = floats(seed, 1, self.n, 1.0);
        let (sums, mags) = block_sums(&x, self.threads, self.blocks);
        // An all-zero block (more threads than elements) has nothing to be relative to.
        let mags: Vec<f64> = mags.iter().map(|m| m + 1e-30).collect();
        let (total, total_mag) = (sums.iter().sum(), mags.iter().sum());
        Ok(Run {
            buffers: vec![
                Buffer::input("x", Data::F32(x)),
                Buffer::output("partial", Elem::F32, self.blocks as usize),
                Buffer::output("out", Elem::F32, 1),
            ],
            steps: vec![
                Step {
                    kernel: 0,
                    shape: Shape::linear(self.blocks, self.threads),
                    args: vec![
                        CaseArg::Buffer(0),
                        CaseArg::Buffer(1),
                        CaseArg::U32(self.n as u32),
                    ],
                },
                Step {
                    kernel: 0,
                    shape: Shape::linear(1, self.threads),
                    args: vec![
                        CaseArg::Buffer(1),
                        CaseArg::Buffer(2),
                        CaseArg::U32(self.blocks),
                    ],
                },
            ],
            expect: vec![
                Expect::close(1, sums, mags, SUM_TOL, Agreement::Bits),
                Expect::close(2, vec![total], vec![total_mag], SUM_TOL, Agreement::Bits),
            ],
        })
    }
}

/// What a row-wise example computes of each row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowOp {
    /// `softmax`: each within 4e-6 of the f64 reference, relative.
    Softmax,
    /// `layernorm` with random `gamma` and `beta`, `eps` 1e-5: each within 1e-4.
    Layernorm,
}

/// A row-wise example over a `rows x cols` matrix, one block of `threads` per row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RowWise {
    /// The example.
    pub op: RowOp,
    /// Rows (blocks).
    pub rows: usize,
    /// Columns.
    pub cols: usize,
    /// Threads per block (a multiple of 32).
    pub threads: u32,
}

/// The `eps` the layernorm case passes.
const EPS: f32 = 1e-5;

impl Case for RowWise {
    fn describe(&self) -> String {
        let name = match self.op {
            RowOp::Softmax => "softmax",
            RowOp::Layernorm => "layernorm",
        };
        format!(
            "{name}, {} threads, {}x{}",
            self.threads, self.rows, self.cols
        )
    }

    fn kernels(&self) -> Result<Vec<Kernel>, CaseError> {
        match self.op {
            RowOp::Softmax => one(self, examples::softmax(self.threads)),
            RowOp::Layernorm => one(self, examples::layernorm(self.threads)),
        }
    }

    fn run(&self, seed: u64) -> Result<Run, CaseError> {
        let (rows, cols) = (self.rows, self.cols);
        // Wide enough that a softmax's row maximum matters (exp(6) against exp(-6)).
        let x = floats(seed, 1, rows * cols, 6.0);
        let dims = [CaseArg::U32(rows as u32), CaseArg::U32(cols as u32)];
        let f64s = |v: Vec<f32>| -> Vec<f64> { v.into_iter().map(f64::from).collect() };
        let (inputs, args, expect) = match self.op {
            RowOp::Softmax => {
                let want = f64s(softmax::reference(&x, cols));
                // Relative to each output: the accurate exp and recip are within an ulp or two.
                let expect = Expect::close(1, want.clone(), want, 4e-6, Agreement::Bits);
                let args = [CaseArg::Buffer(0), CaseArg::Buffer(1)];
                (
                    vec![Buffer::input("x", Data::F32(x))],
                    args.to_vec(),
                    expect,
                )
            }
            RowOp::Layernorm => {
                let (gamma, beta) = (floats(seed, 2, cols, 1.0), floats(seed, 3, cols, 1.0));
                let want = f64s(layernorm::reference(&x, &gamma, &beta, cols, EPS));
                let expect = Expect::close(3, want, vec![1.0; rows * cols], 1e-4, Agreement::Bits);
                let args = (0..4).map(CaseArg::Buffer).collect();
                let inputs = vec![
                    Buffer::input("x", Data::F32(x)),
                    Buffer::input("gamma", Data::F32(gamma)),
                    Buffer::input("beta", Data::F32(beta)),
                ];
                (inputs, args, expect)
            }
        };
        let mut buffers = inputs;
        buffers.push(Buffer::output("y", Elem::F32, rows * cols));
        let mut args = args;
        args.extend(dims);
        if self.op == RowOp::Layernorm {
            args.push(CaseArg::F32(EPS));
        }
        Ok(Run {
            buffers,
            steps: vec![Step {
                kernel: 0,
                shape: Shape::linear(rows as u32, self.threads),
                args,
            }],
            expect: vec![expect],
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_sums_follow_the_grid_stride() {
        // 2 blocks of 2 threads: elements 0, 1, 4, 5 to block 0; 2, 3, 6 to block 1.
        let (s, m) = block_sums(&[1.0, 2.0, 3.0, -4.0, 5.0, 6.0, 7.0], 2, 2);
        assert_eq!(s, [14.0, 6.0]);
        assert_eq!(m, [14.0, 14.0]);
    }
}
