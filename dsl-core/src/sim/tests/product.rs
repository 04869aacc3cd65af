//! What the wgmma and tcgen05 tests share: operands in the K-major, unswizzled canonical layout
//! of 16-bit elements, small f16 values whose products sum exactly in f32, and one run of a
//! kernel that writes `D = A B^T` against the CPU's product.

use super::{opts, run_with, SCHEDULES};
use crate::kernel::Var;
use crate::sim::{Arg, Launch, Memory, Options, Report};

/// K of every product here: A is `m x K`, B `n x K`, both row-major in global memory.
pub(super) const K: usize = 16;

/// Byte offset of element `(row, k)` of a K-major, unswizzled canonical layout of 16-bit
/// elements: 8 x 16-byte core matrices, LBO 128 (the next 8 columns), SBO 256 (the next 8 rows).
pub(super) fn canonical(row: Var<u32>, k: Var<u32>) -> Var<u32> {
    (row % 8u32) * 16u32 + (row / 8u32) * 256u32 + (k % 8u32) * 2u32 + (k / 8u32) * 128u32
}

/// `n` whole numbers in `-radius..=radius` as f16, from a xorshift seeded by `seed`.
pub(super) fn small_halves(seed: u64, n: usize, radius: u64) -> Vec<half::f16> {
    let mut s = seed | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            half::f16::from_f32((s % (2 * radius + 1)) as f32 - radius as f32)
        })
        .collect()
}

/// Runs `k` on `launch` with its arguments D (`m x n` f32, uninitialized), A (`m x K`) and B
/// (`n x K`); returns the report, D as the kernel left it, and the CPU's `A B^T`.
pub(super) fn run_product(
    k: &crate::ir::Kernel,
    launch: Launch,
    (a, b): (&[half::f16], &[half::f16]),
    (m, n): (usize, usize),
    opts: Options,
) -> (Report, Vec<f32>, Vec<f32>) {
    assert_eq!((a.len(), b.len()), (m * K, n * K), "A is m x K and B n x K");
    let mut mem = Memory::new();
    let d = mem.alloc("d", 4 * m * n);
    let (da, db) = (mem.upload("a", a), mem.upload("b", b));
    let args = [Arg::Buffer(d), Arg::Buffer(da), Arg::Buffer(db)];
    let r = run_with(k, launch, &args, &mut mem, opts).unwrap_or_else(|e| panic!("{e}"));
    let want: Vec<f32> = (0..m * n)
        .map(|i| {
            let (row, col) = (i / n, i % n);
            (0..K)
                .map(|p| a[row * K + p].to_f32() * b[col * K + p].to_f32())
                .sum()
        })
        .collect();
    (r, mem.read::<f32>(d), want)
}

/// Asserts that `run` (a seed's options to [`run_product`]'s answer) is clean and equal to the
/// CPU under every schedule, four seeds each.
pub(super) fn assert_product_everywhere(run: impl Fn(Options) -> (Report, Vec<f32>, Vec<f32>)) {
    for schedule in SCHEDULES {
        for seed in 0..4 {
            let (r, got, want) = run(opts(seed, schedule));
            assert!(r.is_clean(), "{schedule:?} {seed}: {r}");
            assert_eq!(got, want, "{schedule:?} {seed}");
        }
    }
}
