//! The checks a GEMM's inputs pass before anything is launched, and the choice of program.
//!
//! Pure functions of shapes, buffer lengths, options and the target, so that every refusal is
//! unit-tested without a GPU. The runtime (`Gemm`, feature `gpu`) adds what only a device can
//! tell: which context a buffer belongs to, and where it starts.

use thiserror::Error;

use super::device::Device;
use super::layout::{Form, FormError, Spans};
use super::program::{AnyProgram, KernelChoice, Plan, Problem};
use super::programs::PROGRAMS;
use super::{Accum, GemmDtype};

/// The largest M, N or K: cuBLAS takes dimensions as C `int`, and the kernels as 32-bit
/// parameters, so `i32::MAX` bounds both.
pub const MAX_DIM: usize = i32::MAX as usize;

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
    /// The program asked for cannot compute this problem (or take its configuration).
    #[error("the {kernel} kernel cannot run this problem: {reason}")]
    KernelCannot {
        /// The program's name.
        kernel: &'static str,
        /// Why, as a clause.
        reason: String,
    },
    /// A buffer shorter than the form reads or writes.
    #[error("{buffer} has {given} elements, and the GEMM's form reaches {need}")]
    ShortBuffer {
        /// "A", "B", "C", "D", "the bias" or "the residual".
        buffer: &'static str,
        /// Elements the form spans.
        need: usize,
        /// Elements given.
        given: usize,
    },
    /// The form does not describe a GEMM.
    #[error("{0}")]
    Form(#[from] FormError),
    /// `auto` found no program that runs the problem.
    #[error("no kernel of this build runs this problem: {reasons}")]
    NoKernel {
        /// Each program's reason ("the naive kernel: ..."), separated by "; ".
        reasons: String,
    },
}

/// Checks `problem` against the buffers' lengths and picks its [`Plan`] for `device`.
///
/// On success: M, N, K are in `1..=MAX_DIM`; `lens` are exactly `m*k`, `n*k`, `m*n`; the type
/// pair is supported; and the plan's program takes the schedule and computes this problem
/// with this accumulator on the device's target, its grid within the device limits every CUDA
/// GPU has. `Auto` takes the first such program of [`PROGRAMS`] (the fastest first). Checks run
/// in that order, so the first error is the most basic one.
pub fn check(problem: &Problem, lens: BufferLens, device: &Device) -> Result<Plan, InputError> {
    check_shapes(problem.m, problem.n, problem.k, lens)?;
    if problem.dtype == GemmDtype::Bf16 && problem.acc == Accum::F16 {
        return Err(InputError::UnsupportedAccum {
            dtype: problem.dtype,
            acc: problem.acc,
        });
    }
    select(problem, device)
}

/// The shape part of [`check`]: dimensions in range, buffers exactly as long as the shape needs.
pub fn check_shapes(m: usize, n: usize, k: usize, lens: BufferLens) -> Result<(), InputError> {
    check_dims(m, n, k, false)?;
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

/// Why a program that reaches A, B and D through TMA tensor maps cannot run `p`, as a clause: a
/// dimension of 0, K or N not a multiple of 8 (TMA addresses rows of 16 bytes), or one above `max_dim`
/// (the program's tile arithmetic). `Ok` when its rows can be mapped.
///
/// ```
/// use kernels::gemm::{tma_rows, Accum, GemmDtype, KernelChoice, Problem};
/// let p = Problem {
///     m: 100, n: 70, k: 64, dtype: GemmDtype::F16, acc: Accum::F32,
///     kernel: KernelChoice::Auto, config: None,
/// };
/// let e = tma_rows(&p, 1 << 30).unwrap_err();
/// assert_eq!(e, "N = 70 is not a multiple of 8, and TMA needs rows of 16 bytes");
/// assert_eq!(tma_rows(&Problem { n: 72, ..p.clone() }, 1 << 30), Ok(()));
/// let e = tma_rows(&Problem { n: 72, k: 0, ..p }, 1 << 30).unwrap_err();
/// assert_eq!(e, "K = 0 leaves TMA nothing to load");
/// ```
pub fn tma_rows(p: &Problem, max_dim: usize) -> Result<(), String> {
    // A BLAS call may have K = 0 (D = beta C): a tensor map of it would have an extent of 0.
    for (what, v) in [("M", p.m), ("N", p.n), ("K", p.k)] {
        if v == 0 {
            return Err(format!("{what} = 0 leaves TMA nothing to load"));
        }
    }
    for (what, v) in [("K", p.k), ("N", p.n)] {
        if !v.is_multiple_of(8) {
            return Err(format!(
                "{what} = {v} is not a multiple of 8, and TMA needs rows of 16 bytes"
            ));
        }
    }
    for (what, v) in [("M", p.m), ("N", p.n), ("K", p.k)] {
        if v > max_dim {
            return Err(format!("{what} = {v} is above {max_dim}"));
        }
    }
    Ok(())
}

/// Element counts of a form's buffers, as the caller hands them over ([`check_form`]); 0 for a
/// buffer the epilogue does not read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FormLens {
    /// A.
    pub a: usize,
    /// B.
    pub b: usize,
    /// C.
    pub c: usize,
    /// D.
    pub d: usize,
    /// The bias.
    pub bias: usize,
    /// The residual.
    pub residual: usize,
}

impl From<Spans> for FormLens {
    /// Buffers exactly as long as a form reads and writes ([`Form::spans`]).
    fn from(s: Spans) -> FormLens {
        FormLens {
            a: s.a,
            b: s.b,
            c: s.c,
            d: s.d,
            bias: s.bias,
            residual: s.residual,
        }
    }
}

/// [`check`] for a problem in `form`: M, N and K in range (K may be 0 in a form: `D = epilogue(0)`,
/// as BLAS computes `beta C`), the form itself ([`Form::check`]), every buffer at least as long
/// as the form reads or writes ([`Form::spans`]; longer is fine, a buffer may be a view into a
/// larger one), the type pair; then the plan: the named program's, or for `Auto` the first of
/// [`PROGRAMS`] whose [`GemmProgram::plan_form`](super::GemmProgram::plan_form) takes the form.
pub fn check_form(
    problem: &Problem,
    form: &Form,
    lens: FormLens,
    device: &Device,
) -> Result<Plan, InputError> {
    check_dims(problem.m, problem.n, problem.k, true)?;
    form.check(problem.m, problem.n, problem.k)?;
    check_spans(&form.spans(problem.m, problem.n, problem.k)?, &lens)?;
    if problem.dtype == GemmDtype::Bf16 && problem.acc == Accum::F16 {
        return Err(InputError::UnsupportedAccum {
            dtype: problem.dtype,
            acc: problem.acc,
        });
    }
    select_form(problem, form, device)
}

/// Each of M, N and K in `1..=MAX_DIM`, K in `0..=MAX_DIM` where `k_may_be_zero`: the first
/// out of range, in that order, refused.
fn check_dims(m: usize, n: usize, k: usize, k_may_be_zero: bool) -> Result<(), InputError> {
    for (dim, value) in [("M", m), ("N", n), ("K", k)] {
        if value == 0 && !(dim == "K" && k_may_be_zero) {
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
    Ok(())
}

/// Refuses the first buffer shorter than the form's span of it.
pub(crate) fn check_spans(spans: &Spans, lens: &FormLens) -> Result<(), InputError> {
    for (buffer, need, given) in [
        ("A", spans.a, lens.a),
        ("B", spans.b, lens.b),
        ("C", spans.c, lens.c),
        ("D", spans.d, lens.d),
        ("the bias", spans.bias, lens.bias),
        ("the residual", spans.residual, lens.residual),
    ] {
        if given < need {
            return Err(InputError::ShortBuffer {
                buffer,
                need,
                given,
            });
        }
    }
    Ok(())
}

/// Picks the plan for a problem whose shapes and types passed: the named program's, or for
/// `Auto` the first program's of [`PROGRAMS`] that takes the schedule (if one is given) and
/// runs the problem, saying why it passed over those before it that take the schedule.
fn select(p: &Problem, device: &Device) -> Result<Plan, InputError> {
    select_form(p, &Form::packed(p.m, p.n, p.k), device)
}

/// [`select`] for a problem in `form`.
fn select_form(p: &Problem, form: &Form, device: &Device) -> Result<Plan, InputError> {
    // The schedule's refusal apart (`Err(Err(..))`): a program that does not take it was never
    // a candidate, so a fallback's description leaves it out.
    let plan = |program: &dyn AnyProgram| -> Result<Plan, Result<String, String>> {
        let schedule = match &p.config {
            None => None,
            Some(c) => Some(c.schedule_for(program.name()).map_err(Err)?),
        };
        program.plan_form_any(p, form, device, schedule).map_err(Ok)
    };
    match p.kernel {
        KernelChoice::Program(program) => {
            plan(program).map_err(|reason| InputError::KernelCannot {
                kernel: program.name(),
                reason: reason.unwrap_or_else(|spelling| spelling),
            })
        }
        KernelChoice::Auto => {
            let mut refused: Vec<(&str, Result<String, String>)> = Vec::new();
            // A program that does not run on the target at all (or that auto may not choose
            // there) is not tried, nor named.
            for program in PROGRAMS.iter().filter(|p| p.auto_picks(device.target)) {
                match plan(*program) {
                    Ok(chosen) => {
                        let passed_over: Vec<String> = refused
                            .iter()
                            .filter_map(|(name, r)| {
                                let reason = r.as_ref().ok()?;
                                Some(format!("the {name} kernel cannot run it: {reason}"))
                            })
                            .collect();
                        return Ok(if passed_over.is_empty() {
                            chosen
                        } else {
                            chosen.chosen_because(passed_over.join("; "))
                        });
                    }
                    Err(reason) => refused.push((program.name(), reason)),
                }
            }
            let each: Vec<String> = refused
                .into_iter()
                .map(|(name, r)| format!("the {name} kernel: {}", r.unwrap_or_else(|s| s)))
                .collect();
            Err(InputError::NoKernel {
                reasons: each.join("; "),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gemm::naive::{Naive, NaivePlan};
    use crate::gemm::Config;
    use crate::multistage::{Multistage, MultistageConfig, Tune};
    use dsl_core::ir::Target;

    fn h200() -> Device {
        Device::h200()
    }

    fn sm80() -> Device {
        Device::unknown(Target::Sm80)
    }

    /// `spelling` parsed for `auto`, as the command line parses `--config`.
    fn config(spelling: &str) -> Option<Config> {
        Some(Config::parse(KernelChoice::Auto, spelling).unwrap())
    }

    fn problem(m: usize, n: usize, k: usize) -> Problem {
        Problem {
            m,
            n,
            k,
            dtype: GemmDtype::F16,
            acc: Accum::F32,
            kernel: KernelChoice::Auto,
            config: None,
        }
    }

    /// The plan the multistage program makes without `--config` on sm_90a.
    fn ms(dtype: GemmDtype, acc: Accum, k: usize) -> Plan {
        let config = if k.is_multiple_of(8) {
            Tune::for_shape(1, 1, k).config(dtype, acc).unwrap()
        } else {
            MultistageConfig::reference_for_k(dtype, acc, k as u32)
        };
        Plan::new(config)
    }

    fn lens(m: usize, n: usize, k: usize) -> BufferLens {
        BufferLens::for_shape(m, n, k).unwrap()
    }

    #[test]
    fn auto_picks_hopper_then_multistage_then_naive() {
        use crate::hopper::{HopperGemm, HopperWs};
        #[derive(PartialEq)]
        enum Runs {
            Hopper,
            Multistage,
            Naive,
        }
        use Runs::*;
        let cases = [
            // N and K multiples of 8: TMA's rows.
            ((81920, 256, 256), Hopper),
            ((8192, 8192, 8192), Hopper),
            ((1, 8, 8), Hopper),
            ((1 << 19, 8, 1 << 13), Hopper),
            ((1, 1, 8), Multistage),
            ((129, 255, 16), Multistage),
            // Odd K: the reference with narrower copies.
            ((1, 1, 1), Multistage),
            ((129, 255, 7), Multistage),
            ((129, 255, 6), Multistage),
            ((3, 5, 100_001), Multistage),
            // M * K reaches 2^32: the multistage kernel's 32-bit offsets would wrap.
            ((1 << 19, 7, 1 << 13), Naive),
        ];
        for ((m, n, k), runs) in cases {
            for dtype in [GemmDtype::F16, GemmDtype::Bf16] {
                let p = Problem {
                    dtype,
                    ..problem(m, n, k)
                };
                let want = match runs {
                    Hopper => {
                        let h = check(
                            &Problem {
                                kernel: KernelChoice::Program(&HopperWs),
                                ..p.clone()
                            },
                            lens(m, n, k),
                            &h200(),
                        )
                        .unwrap();
                        let schedule = HopperWs::default_schedule(m, n, k, &h200());
                        assert_eq!(
                            h.downcast_ref::<HopperGemm>().unwrap().schedule(),
                            &schedule
                        );
                        h
                    }
                    Multistage => ms(dtype, Accum::F32, k),
                    Naive => Plan::new(NaivePlan { dtype }),
                };
                let got = check(&p, lens(m, n, k), &h200());
                assert_eq!(got, Ok(want), "{m} x {n} x {k}");
                // A fallback says why.
                let got = got.unwrap();
                assert_eq!(got.fallback().is_some(), runs != Hopper);
                if runs == Naive {
                    assert_eq!(
                        got.describe(),
                        format!(
                            "naive {dtype} (f32 acc); the hopper_ws kernel cannot run it: N = 7 \
                             is not a multiple of 8, and TMA needs rows of 16 bytes; the \
                             multistage kernel cannot run it: A spans 4294967296 elements, 2^32 \
                             or more, and it forms element offsets in 32 bits"
                        )
                    );
                }
                // Below sm_90a the hopper program is not tried, so not named.
                if runs == Multistage {
                    let on_80 = check(&p, lens(m, n, k), &sm80()).unwrap();
                    assert_eq!(on_80.program(), "multistage");
                    assert_eq!(on_80.fallback(), None);
                }
            }
        }
    }

    #[test]
    fn a_configuration_goes_to_the_first_program_that_takes_it() {
        // `auto` with a multistage spelling: the multistage plan in that configuration.
        let p = Problem {
            config: config("256x128x32s4_r2_se"),
            ..problem(64, 64, 16)
        };
        let want = "256x128x32s4_r2_se"
            .parse::<Tune>()
            .unwrap()
            .config(GemmDtype::F16, Accum::F32)
            .unwrap();
        assert_eq!(check(&p, lens(64, 64, 16), &h200()), Ok(Plan::new(want)));
        // Where it cannot run the problem, no program takes it: naive has no configurations.
        let p = Problem {
            config: config("tuned"),
            ..problem(100, 37, 13)
        };
        assert_eq!(
            check(&p, lens(100, 37, 13), &h200())
                .unwrap_err()
                .to_string(),
            "no kernel of this build runs this problem: the hopper_ws kernel: `tuned` is not a \
             hopper_ws configuration: it starts with MxNxKsS, e.g. 128x256x64s3; the multistage \
             kernel: K = 13 is not a multiple of 8, and its 128-bit cp.async copies need rows of \
             A and B aligned to them; the reference configuration (no --config) takes any K; the \
             naive kernel: it takes no --config, and `tuned` was given; the strided kernel: it \
             takes no --config, and `tuned` was given"
        );
        // A named program gets its own parse of the spelling, and its reason for refusing it.
        let p = Problem {
            kernel: KernelChoice::Program(&Naive),
            config: config("tuned"),
            ..problem(64, 64, 16)
        };
        assert_eq!(
            check(&p, lens(64, 64, 16), &h200()),
            Err(InputError::KernelCannot {
                kernel: "naive",
                reason: "it takes no --config, and `tuned` was given".into()
            })
        );
        let p = Problem {
            kernel: KernelChoice::Program(&Multistage),
            config: config("128x256x64s3_h"),
            ..problem(64, 64, 16)
        };
        let e = check(&p, lens(64, 64, 16), &h200())
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with(
                "the multistage kernel cannot run this problem: `128x256x64s3_h` is not a \
                 configuration"
            ),
            "{e}"
        );
    }

    #[test]
    fn zero_dims_are_refused_by_name() {
        for (m, n, k, dim) in [(0, 4, 4, "M"), (4, 0, 4, "N"), (4, 4, 0, "K")] {
            let e = check(&problem(m, n, k), lens(m, n, k), &h200()).unwrap_err();
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
            &h200(),
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
            let e = check(&problem(m, n, k), l, &h200()).unwrap_err();
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
        let e = check(&problem(n, m, k), good, &h200()).unwrap_err();
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
        let e = check(&p, lens(64, 64, 64), &h200()).unwrap_err();
        assert!(matches!(e, InputError::UnsupportedAccum { .. }), "{e}");
        assert!(e
            .to_string()
            .starts_with("bf16 inputs with f16 accumulation are not supported"));
    }
}
