//! The checks a GEMM's inputs pass before anything is launched, and the choice of configuration.
//!
//! Pure functions of shapes, buffer lengths and options, so that every refusal is unit-tested
//! without a GPU. The runtime (`Gemm`, feature `gpu`) adds what only a device can tell: which
//! context a buffer belongs to.

use dsl_core::ir::{Kernel, Target};
use dsl_core::kernel::BuildError;
use half::{bf16, f16};
use thiserror::Error;

use super::{naive, Accum, GemmDtype, KernelChoice};
use crate::multistage::{self, Epilogue, MultistageConfig, MultistageError, Tune};

/// The largest M, N or K: cuBLAS takes dimensions as C `int`, and the kernels as 32-bit
/// parameters, so `i32::MAX` bounds both.
pub const MAX_DIM: usize = i32::MAX as usize;

/// A GEMM problem: `D (m x n) = A (m x k) * B (n x k)^T` with its types and kernel choice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Problem {
    /// Rows of A and D.
    pub m: usize,
    /// Rows of B, columns of D.
    pub n: usize,
    /// Columns of A and B (the contiguous axis of both).
    pub k: usize,
    /// Element type of A, B and D.
    pub dtype: GemmDtype,
    /// The type products are summed in.
    pub acc: Accum,
    /// The kernel asked for.
    pub kernel: KernelChoice,
    /// The multistage configuration asked for (`None`: the reference for this K).
    pub tune: Option<Tune>,
}

/// Element counts of the three buffers, as the caller hands them over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BufferLens {
    /// Elements in A.
    pub a: usize,
    /// Elements in B.
    pub b: usize,
    /// Elements in D.
    pub d: usize,
}

impl BufferLens {
    /// The lengths a problem of `m x n x k` needs: `m*k`, `n*k` and `m*n` (`None` on overflow).
    pub fn for_shape(m: usize, n: usize, k: usize) -> Option<BufferLens> {
        Some(BufferLens {
            a: m.checked_mul(k)?,
            b: n.checked_mul(k)?,
            d: m.checked_mul(n)?,
        })
    }
}

/// Why a GEMM's inputs are refused before launch. Each message is a sentence naming the value.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum InputError {
    /// A dimension is zero.
    #[error("{dim} is 0; every dimension of a GEMM must be at least 1")]
    ZeroDim {
        /// "M", "N" or "K".
        dim: &'static str,
    },
    /// A dimension is past what cuBLAS and the kernels' 32-bit parameters take.
    #[error("{dim} = {value} is above {max}, the largest dimension cuBLAS and rute's kernels take (i32::MAX)")]
    DimTooLarge {
        /// "M", "N" or "K".
        dim: &'static str,
        /// The value given.
        value: usize,
        /// [`MAX_DIM`].
        max: usize,
    },
    /// An operand would have more elements than this machine can count.
    #[error("{buffer} would hold {rows} x {cols} elements, more than this machine can address")]
    SizeOverflow {
        /// "A", "B" or "D".
        buffer: &'static str,
        /// Its rows.
        rows: usize,
        /// Its columns.
        cols: usize,
    },
    /// A buffer's length differs from the one its shape needs.
    #[error("{buffer} has {given} elements but its shape {shape} needs exactly {expected}")]
    BufferLength {
        /// "A", "B" or "D".
        buffer: &'static str,
        /// The shape, e.g. "M x K = 128 x 64".
        shape: String,
        /// Elements the shape needs.
        expected: usize,
        /// Elements the buffer has.
        given: usize,
    },
    /// A type pair no kernel (and no `mma.sync` form) computes.
    #[error("{dtype} inputs with {acc} accumulation are not supported: mma.sync has no bf16 form with an f16 sum; use --acc f32")]
    UnsupportedAccum {
        /// Element type.
        dtype: GemmDtype,
        /// Accumulator type.
        acc: Accum,
    },
    /// The kernel asked for cannot compute this problem.
    #[error("the {kernel} kernel cannot run this problem: {reason}")]
    KernelCannot {
        /// The kernel asked for.
        kernel: KernelChoice,
        /// Why, as a clause.
        reason: String,
    },
    /// `auto` found no kernel that runs the problem.
    #[error("no kernel of this build runs this problem: {reasons}")]
    NoKernel {
        /// Each kernel's reason, separated by "; ".
        reasons: String,
    },
}

/// A configuration ready to compile and launch: the kernel, its compile-time options, and how a
/// problem's shape maps onto a grid. Equal plans compile to the same PTX (the runtime's cache
/// key, with the target).
///
/// A new kernel or configuration is a variant here with its arms in [`Plan::kernel`],
/// [`Plan::entry`], [`Plan::launch_shape`], [`Plan::describe`], and the arm in `select` that
/// picks it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Plan {
    /// [`naive::gemm_naive`] for the element type.
    Naive {
        /// Element type.
        dtype: GemmDtype,
    },
    /// [`multistage::multistage_kernel`] with `config`: the given [`Tune`]; without one,
    /// [`Tune::for_shape`] where K is a multiple of 8 (rows of A and B take 16-byte copies), else
    /// the reference with the widest copies K allows ([`MultistageConfig::reference_for_k`]).
    Multistage {
        /// Element type.
        dtype: GemmDtype,
        /// Accumulator type.
        acc: Accum,
        /// The program's configuration.
        config: MultistageConfig,
    },
}

/// Why a plan's kernel could not be generated (a bug in the kernel or its configuration: the
/// plan's checks passed).
#[derive(Debug, Error)]
pub enum KernelBuildError {
    /// The `#[kernel]` builder failed.
    #[error(transparent)]
    Build(#[from] BuildError),
    /// The multistage program refused its configuration or failed.
    #[error(transparent)]
    Multistage(#[from] MultistageError),
}

/// The grid, block and dynamic shared memory of one launch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LaunchShape {
    /// Blocks, (x, y, z).
    pub grid: (u32, u32, u32),
    /// Threads per block, (x, y, z).
    pub block: (u32, u32, u32),
    /// Dynamic shared memory per block, in bytes.
    pub dynamic_smem_bytes: u32,
}

impl Plan {
    /// The kernel this plan names, built with its configuration (PTX entry: [`Plan::entry`]).
    pub fn kernel(&self) -> Result<Kernel, KernelBuildError> {
        Ok(match *self {
            Plan::Naive {
                dtype: GemmDtype::F16,
            } => naive::gemm_naive::<f16>()?,
            Plan::Naive {
                dtype: GemmDtype::Bf16,
            } => naive::gemm_naive::<bf16>()?,
            Plan::Multistage { config, .. } => multistage::multistage_kernel(&config)?,
        })
    }

    /// The name of the PTX entry [`Plan::kernel`] defines.
    pub fn entry(&self) -> String {
        match *self {
            Plan::Naive { .. } => "gemm_naive".to_string(),
            Plan::Multistage { config, .. } => config.name(),
        }
    }

    /// The alignment in bytes the kernel needs of A's and B's start addresses.
    pub fn operand_alignment(&self) -> u64 {
        match self {
            Plan::Naive { .. } => 2,
            // cp.async copies of `copy_bits` read aligned pieces of A's and B's rows.
            Plan::Multistage { config, .. } => u64::from(config.copy_bits / 8),
        }
    }

    /// How to launch it for an `m x n` output (dimensions already checked by [`check`]).
    pub fn launch_shape(&self, m: u32, n: u32) -> LaunchShape {
        match *self {
            Plan::Naive { .. } => LaunchShape {
                grid: (n.div_ceil(naive::BLOCK.0), m.div_ceil(naive::BLOCK.1), 1),
                block: (naive::BLOCK.0, naive::BLOCK.1, 1),
                dynamic_smem_bytes: 0,
            },
            Plan::Multistage { config, .. } => LaunchShape {
                grid: config.grid(m, n),
                block: config.block(),
                dynamic_smem_bytes: config.smem_bytes(),
            },
        }
    }

    /// The kernel's name and configuration in a few words, e.g. `naive f16 (f32 acc)`.
    pub fn describe(&self) -> String {
        match *self {
            Plan::Naive { dtype } => format!("naive {dtype} (f32 acc)"),
            Plan::Multistage {
                dtype,
                acc,
                config: c,
            } => format!(
                "multistage {dtype} ({acc} acc, {}x{}x{} tile, {} stages, {}x{} warps{}{}{})",
                c.tile_m,
                c.tile_n,
                c.tile_k,
                c.stages,
                c.warps.0,
                c.warps.1,
                if c.copy_bits == 128 {
                    String::new()
                } else {
                    format!(", {}-bit copies", c.copy_bits)
                },
                if c.raster_log2 > 0 {
                    ", rasterized"
                } else {
                    ""
                },
                match c.epilogue {
                    Epilogue::Registers => "",
                    Epilogue::Smem => ", smem epilogue",
                    Epilogue::Stmatrix => ", stmatrix epilogue",
                },
            ),
        }
    }

    /// The plan as `target` runs it ([`MultistageConfig::for_target`]: the `stmatrix` epilogue
    /// becomes the `st.shared` one below sm_90).
    pub fn for_target(self, target: Target) -> Plan {
        match self {
            Plan::Multistage { dtype, acc, config } => Plan::Multistage {
                dtype,
                acc,
                config: config.for_target(target),
            },
            naive => naive,
        }
    }
}

/// Checks `problem` against the buffers' lengths and picks its [`Plan`].
///
/// On success: M, N, K are in `1..=MAX_DIM`; `lens` are exactly `m*k`, `n*k`, `m*n`; the type
/// pair is supported; and the plan's kernel computes this problem with this accumulator, its
/// grid within the device limits every CUDA GPU has. `Auto` takes the fastest such kernel in
/// the build. Checks run in that order, so the first error is the most basic one.
pub fn check(problem: &Problem, lens: BufferLens) -> Result<Plan, InputError> {
    check_shapes(problem.m, problem.n, problem.k, lens)?;
    if problem.dtype == GemmDtype::Bf16 && problem.acc == Accum::F16 {
        return Err(InputError::UnsupportedAccum {
            dtype: problem.dtype,
            acc: problem.acc,
        });
    }
    select(problem)
}

/// The shape part of [`check`]: dimensions in range, buffers exactly as long as the shape needs.
pub fn check_shapes(m: usize, n: usize, k: usize, lens: BufferLens) -> Result<(), InputError> {
    for (dim, value) in [("M", m), ("N", n), ("K", k)] {
        if value == 0 {
            return Err(InputError::ZeroDim { dim });
        }
        if value > MAX_DIM {
            return Err(InputError::DimTooLarge {
                dim,
                value,
                max: MAX_DIM,
            });
        }
    }
    let operands = [
        ("A", "M x K", m, k, lens.a),
        ("B", "N x K", n, k, lens.b),
        ("D", "M x N", m, n, lens.d),
    ];
    for (buffer, names, rows, cols, given) in operands {
        let expected =
            rows.checked_mul(cols)
                .ok_or(InputError::SizeOverflow { buffer, rows, cols })?;
        if given != expected {
            return Err(InputError::BufferLength {
                buffer,
                shape: format!("{names} = {rows} x {cols}"),
                expected,
                given,
            });
        }
    }
    Ok(())
}

/// Picks the plan for a problem whose shapes and types passed. `Auto` takes the multistage
/// kernel where it can run the problem and falls back to the naive one (any K, f32 sum) where
/// it cannot.
fn select(p: &Problem) -> Result<Plan, InputError> {
    match p.kernel {
        KernelChoice::Naive => naive_plan(p),
        KernelChoice::Multistage => multistage_plan(p),
        KernelChoice::Auto => multistage_plan(p).or_else(|ms| {
            naive_plan(p).map_err(|naive| InputError::NoKernel {
                reasons: format!("{}; {}", reason(&ms), reason(&naive)),
            })
        }),
    }
}

/// "the K kernel: why" for a kernel's refusal.
fn reason(e: &InputError) -> String {
    match e {
        InputError::KernelCannot { kernel, reason } => format!("the {kernel} kernel: {reason}"),
        other => other.to_string(),
    }
}

/// Largest K the multistage program's global tiles index (`dsl_core::tensor::ROW` columns).
pub const MULTISTAGE_MAX_K: usize = 1 << 24;

fn multistage_plan(p: &Problem) -> Result<Plan, InputError> {
    let cannot = |reason: String| InputError::KernelCannot {
        kernel: KernelChoice::Multistage,
        reason,
    };
    let (dtype, acc) = (p.dtype, p.acc);
    let cfg = match p.tune {
        None if p.k.is_multiple_of(8) => Tune::for_shape(p.m, p.n, p.k).config(p.dtype, p.acc),
        None => MultistageConfig::reference_for_k(dtype, acc, p.k as u32),
        Some(t) => t.config(p.dtype, p.acc),
    };
    if !p.k.is_multiple_of(cfg.k_multiple() as usize) {
        return Err(cannot(format!(
            "K = {} is not a multiple of {}, and its {}-bit cp.async copies need rows of A and B aligned to them; the reference configuration (no --config) takes any K",
            p.k,
            cfg.k_multiple(),
            cfg.copy_bits
        )));
    }
    if p.k > MULTISTAGE_MAX_K {
        return Err(cannot(format!(
            "K = {} is above {MULTISTAGE_MAX_K}, the widest row its global tiles index",
            p.k
        )));
    }
    let limit = 1u64 << 32;
    for (what, rows, cols) in [
        ("M x K", p.m, p.k),
        ("N x K", p.n, p.k),
        ("M x N", p.m, p.n),
    ] {
        if (rows as u64).saturating_mul(cols as u64) >= limit {
            return Err(cannot(format!(
                "{what} = {rows} x {cols} elements reach 2^32, and it forms element offsets in 32 bits"
            )));
        }
    }
    let max_m = u64::from(naive::MAX_GRID_Y) * u64::from(cfg.tile_m);
    if p.m as u64 > max_m {
        return Err(cannot(format!(
            "M = {} needs more than {} blocks along grid y; it handles M up to {max_m}",
            p.m,
            naive::MAX_GRID_Y
        )));
    }
    Ok(Plan::Multistage {
        dtype: p.dtype,
        acc: p.acc,
        config: cfg,
    })
}

fn naive_plan(p: &Problem) -> Result<Plan, InputError> {
    let cannot = |reason: String| InputError::KernelCannot {
        kernel: KernelChoice::Naive,
        reason,
    };
    if p.acc != Accum::F32 {
        return Err(cannot(format!(
            "it accumulates in f32 only, and {} accumulation was asked for",
            p.acc
        )));
    }
    let max_m = u64::from(naive::MAX_GRID_Y) * u64::from(naive::BLOCK.1);
    if p.m as u64 > max_m {
        return Err(cannot(format!(
            "M = {} needs more than {} blocks along grid y; it handles M up to {max_m}",
            p.m,
            naive::MAX_GRID_Y
        )));
    }
    Ok(Plan::Naive { dtype: p.dtype })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn problem(m: usize, n: usize, k: usize) -> Problem {
        Problem {
            m,
            n,
            k,
            dtype: GemmDtype::F16,
            acc: Accum::F32,
            kernel: KernelChoice::Auto,
            tune: None,
        }
    }

    /// The plan `check` picks for the multistage kernel without `--config`.
    fn ms(dtype: GemmDtype, acc: Accum, k: usize) -> Plan {
        let config = if k.is_multiple_of(8) {
            Tune::for_shape(1, 1, k).config(dtype, acc)
        } else {
            MultistageConfig::reference_for_k(dtype, acc, k as u32)
        };
        Plan::Multistage { dtype, acc, config }
    }

    fn lens(m: usize, n: usize, k: usize) -> BufferLens {
        BufferLens::for_shape(m, n, k).unwrap()
    }

    #[test]
    fn auto_picks_multistage_where_it_runs_and_naive_elsewhere() {
        let cases = [
            ((1, 1, 8), true),
            ((129, 255, 16), true),
            ((81920, 256, 256), true),
            ((8192, 8192, 8192), true),
            // Odd K: the reference with narrower copies.
            ((1, 1, 1), true),
            ((129, 255, 7), true),
            ((129, 255, 6), true),
            ((3, 5, 100_001), true),
            // M * K reaches 2^32: the multistage kernel's 32-bit offsets would wrap.
            ((1 << 19, 8, 1 << 13), false),
        ];
        for ((m, n, k), multistage) in cases {
            for dtype in [GemmDtype::F16, GemmDtype::Bf16] {
                let p = Problem {
                    dtype,
                    ..problem(m, n, k)
                };
                let want = if multistage {
                    ms(dtype, Accum::F32, k)
                } else {
                    Plan::Naive { dtype }
                };
                assert_eq!(check(&p, lens(m, n, k)), Ok(want), "{m} x {n} x {k}");
            }
        }
        // The copy width follows K.
        let width = |k| match check(&problem(64, 64, k), lens(64, 64, k)) {
            Ok(Plan::Multistage { config, .. }) => config.copy_bits,
            other => panic!("{other:?}"),
        };
        assert_eq!(
            [width(64), width(68), width(66), width(65)],
            [128, 64, 32, 16]
        );
    }

    #[test]
    fn multistage_refuses_what_it_cannot_run() {
        // A named configuration keeps its 16-byte copies: K = 13 is refused, not narrowed.
        let p = Problem {
            kernel: KernelChoice::Multistage,
            tune: Some(Tune::TUNED),
            ..problem(100, 37, 13)
        };
        assert_eq!(
            check(&p, lens(100, 37, 13)).unwrap_err().to_string(),
            "the multistage kernel cannot run this problem: K = 13 is not a multiple of 8, and its \
             128-bit cp.async copies need rows of A and B aligned to them; the reference \
             configuration (no --config) takes any K"
        );
        let p = Problem {
            kernel: KernelChoice::Multistage,
            ..problem(8, 1 << 20, 1 << 12)
        };
        let e = check(&p, lens(8, 1 << 20, 1 << 12))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("N x K = 1048576 x 4096 elements reach 2^32"),
            "{e}"
        );
        // f16 accumulation with an odd K: the multistage kernel with narrower copies.
        let p = Problem {
            acc: Accum::F16,
            ..problem(64, 64, 12)
        };
        assert_eq!(
            check(&p, lens(64, 64, 12)),
            Ok(ms(GemmDtype::F16, Accum::F16, 12))
        );
        // A named configuration is what runs.
        let p = Problem {
            tune: Some("256x128x32s4_r2_se".parse::<Tune>().unwrap()),
            ..problem(64, 64, 16)
        };
        assert_eq!(
            check(&p, lens(64, 64, 16)),
            Ok(Plan::Multistage {
                dtype: GemmDtype::F16,
                acc: Accum::F32,
                config: "256x128x32s4_r2_se"
                    .parse::<Tune>()
                    .unwrap()
                    .config(GemmDtype::F16, Accum::F32),
            })
        );
    }

    #[test]
    fn zero_dims_are_refused_by_name() {
        for (m, n, k, dim) in [(0, 4, 4, "M"), (4, 0, 4, "N"), (4, 4, 0, "K")] {
            let e = check(&problem(m, n, k), lens(m, n, k)).unwrap_err();
            assert_eq!(e, InputError::ZeroDim { dim });
            assert_eq!(
                e.to_string(),
                format!("{dim} is 0; every dimension of a GEMM must be at least 1")
            );
        }
    }

    #[test]
    fn dims_past_i32_are_refused() {
        let big = i32::MAX as usize + 1;
        let e = check(
            &problem(1, big, 1),
            BufferLens {
                a: 1,
                b: big,
                d: big,
            },
        )
        .unwrap_err();
        assert_eq!(
            e,
            InputError::DimTooLarge {
                dim: "N",
                value: big,
                max: 2147483647
            }
        );
        // i32::MAX itself passes the shape check (whether memory allows it is the driver's say).
        let ok = i32::MAX as usize;
        assert_eq!(check_shapes(1, 1, ok, lens(1, 1, ok)), Ok(()));
    }

    #[test]
    fn each_wrong_length_names_its_buffer_and_shape() {
        let (m, n, k) = (100, 70, 13);
        let good = lens(m, n, k);
        let cases = [
            (
                BufferLens {
                    a: good.a + 1,
                    ..good
                },
                "A",
                "M x K = 100 x 13",
                1300,
                1301,
            ),
            (
                BufferLens {
                    b: good.b - 1,
                    ..good
                },
                "B",
                "N x K = 70 x 13",
                910,
                909,
            ),
            (
                BufferLens { d: 0, ..good },
                "D",
                "M x N = 100 x 70",
                7000,
                0,
            ),
        ];
        for (l, buffer, shape, expected, given) in cases {
            let e = check(&problem(m, n, k), l).unwrap_err();
            assert_eq!(
                e,
                InputError::BufferLength {
                    buffer,
                    shape: shape.into(),
                    expected,
                    given
                }
            );
        }
        // Swapped M and N: A and B have the other's length.
        let e = check(&problem(n, m, k), good).unwrap_err();
        assert_eq!(
            e.to_string(),
            "A has 1300 elements but its shape M x K = 70 x 13 needs exactly 910"
        );
    }

    #[test]
    fn bf16_with_f16_accumulation_is_refused() {
        let p = Problem {
            dtype: GemmDtype::Bf16,
            acc: Accum::F16,
            ..problem(64, 64, 64)
        };
        let e = check(&p, lens(64, 64, 64)).unwrap_err();
        assert!(matches!(e, InputError::UnsupportedAccum { .. }), "{e}");
        assert!(e
            .to_string()
            .starts_with("bf16 inputs with f16 accumulation are not supported"));
    }

    #[test]
    fn naive_refuses_f16_accumulation_and_too_many_rows() {
        let p = Problem {
            acc: Accum::F16,
            kernel: KernelChoice::Naive,
            ..problem(64, 64, 64)
        };
        let e = check(&p, lens(64, 64, 64)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "the naive kernel cannot run this problem: it accumulates in f32 only, and f16 accumulation was asked for"
        );
        // 65535 * 16 rows is the last M the naive grid covers.
        let max_m = 65535 * 16;
        let naive = |m| Problem {
            kernel: KernelChoice::Naive,
            ..problem(m, 1, 1)
        };
        assert!(check(&naive(max_m), lens(max_m, 1, 1)).is_ok());
        let e = check(&naive(max_m + 1), lens(max_m + 1, 1, 1)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "the naive kernel cannot run this problem: M = 1048561 needs more than 65535 blocks along grid y; it handles M up to 1048560"
        );
    }

    /// The grid covers D exactly once: every element falls in one block, no block is empty.
    #[test]
    fn naive_grid_covers_the_output() {
        for (m, n) in [(1u32, 1u32), (16, 16), (17, 33), (81920, 256), (1000, 1)] {
            let s = Plan::Naive {
                dtype: GemmDtype::F16,
            }
            .launch_shape(m, n);
            let (bx, by) = (s.block.0, s.block.1);
            assert!(u64::from(s.grid.0 * bx) >= u64::from(n) && (s.grid.0 - 1) * bx < n);
            assert!(u64::from(s.grid.1 * by) >= u64::from(m) && (s.grid.1 - 1) * by < m);
            assert_eq!((s.grid.2, s.block.2, s.dynamic_smem_bytes), (1, 1, 0));
        }
    }
}
