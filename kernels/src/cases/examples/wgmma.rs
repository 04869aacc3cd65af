//! `wgmma_tile`: one warpgroup's `D = A B^T` of one 64x64x64 f16 tile, within 1e-5 of each
//! element's terms' magnitudes; between machines within the tolerance (the tensor cores'
//! internal rounding is the hardware's).

use dsl_core::ir::Kernel;
use half::f16;

use super::one;
use crate::cases::run::{Buffer, CaseArg, Data, Elem, Run, Shape, Step};
use crate::cases::{Agreement, Case, CaseError, Expect, Rng};
use crate::examples::wgmma_tile::{self as wt, TILE};

/// The one tile of `wgmma_tile`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct WgmmaTile;

/// `D = A B^T` of `n x n` row-major matrices, exact, and each element's sum of the magnitudes
/// of its terms.
pub fn tile_product(a: &[f16], b: &[f16], n: usize) -> (Vec<f64>, Vec<f64>) {
    (0..n * n)
        .map(|i| {
            let (r, c) = (i / n, i % n);
            (0..n)
                .map(|k| a[r * n + k].to_f64() * b[c * n + k].to_f64())
                .fold((0.0, 1e-30), |(s, g), t| (s + t, g + t.abs()))
        })
        .unzip()
}

impl Case for WgmmaTile {
    fn describe(&self) -> String {
        format!("wgmma_tile, {TILE}x{TILE}x{TILE} f16")
    }

    fn kernels(&self) -> Result<Vec<Kernel>, CaseError> {
        one(self, wt::default_kernel())
    }

    fn run(&self, seed: u64) -> Result<Run, CaseError> {
        let n = TILE as usize;
        let (a, b) = (
            Rng::new(seed, 1).halves(n * n),
            Rng::new(seed, 2).halves(n * n),
        );
        let (want, mags) = tile_product(&a, &b, n);
        Ok(Run {
            buffers: vec![
                Buffer::output("d", Elem::F32, n * n),
                Buffer::input("a", Data::F16(a)),
                Buffer::input("b", Data::F16(b)),
            ],
            steps: vec![Step {
                kernel: 0,
                shape: Shape::linear(1, wt::THREADS),
                args: vec![CaseArg::Buffer(0), CaseArg::Buffer(1), CaseArg::Buffer(2)],
            }],
            expect: vec![Expect::close(0, want, mags, 1e-5, Agreement::Tolerance)],
        })
    }
}
