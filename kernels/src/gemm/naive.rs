//! The baseline GEMM: one thread per element of D, f32 accumulation, any M, N and K.

use dsl_core::ir::Target;
use dsl_core::kernel::*;
use dsl_macros::kernel;
use half::f16;

use super::GemmElem;

/// Threads per block along N (x) and along M (y).
pub const BLOCK: (u32, u32) = (16, 16);

/// The targets [`gemm_naive`] runs on: plain loads and stores, `cvt` between f32 and f16/bf16
/// (bf16 conversions need sm_80) and `fma.rn.f32`.
pub const TARGETS: &[Target] = &[Target::Sm80, Target::Sm90a, Target::Sm100a];

/// Most blocks a grid may have along y (the device limit on every CUDA GPU): rows of D are
/// spread over `grid.y`, so M may be at most `MAX_GRID_Y * BLOCK.1`.
pub const MAX_GRID_Y: u32 = 65535;

/// `D = A * B^T`: A is `m x k`, B is `n x k` (both row-major, K the contiguous axis), D is
/// `m x n` row-major, all of element type `T`.
///
/// Thread `(x, y)` of block `(bx, by)` computes `D[row][col]` for `row = by*16 + y`,
/// `col = bx*16 + x`: it walks K once, converting each `A[row][kk]` and `B[col][kk]` to f32 and
/// accumulating with `fma.rn.f32`, and stores the sum rounded to `T` (round to nearest even).
/// Threads outside D do nothing, so any `m`, `n`, `k` work (`k == 0` writes zeros). Offsets are
/// formed in 64 bits, so `m * k`, `n * k` and `m * n` may exceed `2^32`.
///
/// Launch with grid `(ceil(n/16), ceil(m/16), 1)` and block `(16, 16, 1)`, exactly (`.reqntid`).
#[kernel]
pub fn gemm_naive<T: GemmElem>(
    k_: &KernelBuilder,
    d: GlobalPtr<T>,
    a: GlobalPtr<T>,
    b: GlobalPtr<T>,
    m: Var<u32>,
    n: Var<u32>,
    k: Var<u32>,
) {
    k_.require_threads(BLOCK.0, BLOCK.1, 1);
    let col = block_idx_x() * BLOCK.0 + thread_idx_x();
    let row = block_idx_y() * BLOCK.1 + thread_idx_y();
    if row.lt(m) & col.lt(n) {
        let k64 = k.cast::<u64>();
        let a_row = a + row.cast::<u64>() * k64;
        let b_row = b + col.cast::<u64>() * k64;
        let mut acc = Var::konst(0.0f32).fresh();
        for kk in 0u32..k {
            let x = a_row.load_at(kk).cast::<f32>();
            let y = b_row.load_at(kk).cast::<f32>();
            acc = x.mul_add(y, acc);
        }
        d.store_at(
            row.cast::<u64>() * n.cast::<u64>() + col.cast::<u64>(),
            acc.cast::<T>(),
        );
    }
}

/// The registry's configuration: f16 in and out.
pub fn default_kernel() -> Result<dsl_core::ir::Kernel, BuildError> {
    gemm_naive::<f16>()
}

#[cfg(test)]
mod tests {
    use super::*;
    use half::bf16;

    /// Loads of the element type widened to f32, one fma per k step, one rounded store, and the
    /// exact block the launch uses.
    #[test]
    fn ptx_converts_and_accumulates_in_f32() {
        let cases = [
            (gemm_naive::<f16>(), "cvt.f32.f16", "cvt.rn.f16.f32"),
            (gemm_naive::<bf16>(), "cvt.f32.bf16", "cvt.rn.bf16.f32"),
        ];
        for (kernel, widen, narrow) in cases {
            let kernel = kernel.unwrap();
            assert_eq!(kernel.name, "gemm_naive");
            assert_eq!(kernel.params.len(), 6);
            let ptx = codegen_ptx::emit(&kernel, Target::Sm80).unwrap();
            assert_eq!(ptx.matches(widen).count(), 2, "{ptx}");
            assert_eq!(ptx.matches(narrow).count(), 1, "{ptx}");
            assert_eq!(ptx.matches("fma.rn.f32").count(), 1, "{ptx}");
            assert_eq!(ptx.matches("ld.global.b16").count(), 2, "{ptx}");
            assert_eq!(ptx.matches("st.global.b16").count(), 1, "{ptx}");
            assert!(ptx.contains(".reqntid 16, 16, 1"), "{ptx}");
        }
    }
}
