//! rute's kernels in the CPU simulator (`dsl_core::sim`): the examples and the multistage GEMM
//! against CPU references with no finding, under several schedules and seeds, and planted bugs
//! caught with their kind and Rust line.

mod examples;
mod multistage;

/// Xorshift values in [-1, 1), deterministic per seed.
pub(crate) fn floats(seed: u64, n: usize) -> Vec<f32> {
    let mut s = seed | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            ((s >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
        })
        .collect()
}
