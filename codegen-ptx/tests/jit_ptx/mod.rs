//! The hand-written PTX modules of the JIT tests (each file's comment says what it computes):
//! `jit_gpu.rs` runs them, `jit_validation.rs` assembles them with ptxas.

/// `vadd`: `c[i] = a[i] + b[i]` for `i < n`.
pub const VADD: &str = include_str!("vadd.ptx");
/// A module with an instruction PTX does not have: the JIT must refuse it.
pub const BAD: &str = include_str!("bad.ptx");
/// `big_smem`: uses more dynamic shared memory than the default 48 KiB.
pub const BIG_SMEM: &str = include_str!("big_smem.ptx");
/// `cluster_fixed` and `cluster_any`: record each block's rank in its cluster.
pub const CLUSTER: &str = include_str!("cluster.ptx");
/// `tma_load_2d` and `tma_roundtrip_2d`: TMA tile copies through tensor-map parameters.
pub const TMA: &str = include_str!("tma.ptx");
/// `fixed_block`: a block shape fixed at compile time by `.reqntid`.
pub const REQNTID: &str = include_str!("reqntid.ptx");
