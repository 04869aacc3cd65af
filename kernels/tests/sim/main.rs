//! rute's kernels in the CPU simulator (`dsl_core::sim`): the examples and the multistage GEMM
//! against CPU references with no finding, under several schedules and seeds, and planted bugs
//! caught with their kind and Rust line.

mod examples;
mod forms;
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

/// The arguments of the GEMM kernels: D, A, B, then M, N and K.
pub(crate) fn gemm_args(
    d: dsl_core::sim::BufferId,
    a: dsl_core::sim::BufferId,
    b: dsl_core::sim::BufferId,
    (m, n, k): (usize, usize, usize),
) -> Vec<dsl_core::sim::Arg> {
    use dsl_core::sim::Arg;
    vec![
        Arg::Buffer(d),
        Arg::Buffer(a),
        Arg::Buffer(b),
        Arg::u32(m as u32),
        Arg::u32(n as u32),
        Arg::u32(k as u32),
    ]
}
