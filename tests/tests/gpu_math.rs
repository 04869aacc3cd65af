//! The math functions on a real GPU (feature `gpu`): every function of `dsl_core::kernel::Float`,
//! accurate and fast, for f32, f16, bf16, f16x2 and bf16x2, run over its documented range and
//! compared with the f64 value; the worst error in ulps of the result type is printed in one
//! table, the fast variant beside the accurate one. These are the numbers the math module's
//! accuracy table quotes.
//!
//! Inputs: for f32, about 2^20 values spread evenly over the bit patterns of the range (each
//! binade its share) plus every value near the functions' splits; for the 16-bit types, every
//! value of the range (there are at most 65536). A pair type takes its inputs two per word.
//!
//! Asserted: the accurate f32 functions give on the GPU exactly the bits the builder folds on the
//! host (they are IEEE operations only), and stay within their documented bounds; the accurate
//! 16-bit functions within 1 ulp (sqrt and recip correctly rounded); the fast variants within a
//! loose sanity bound (an error below 2^-10 of max(|result|, 1) for f32, 2^-6 for 16 bits) on
//! the range where the hardware approximation is meant to be used, so that a wrong instruction
//! or a wrong scale fails, while the table reports what they really reach.
//!
//! Run: `cargo test -p rute-tests --features gpu --release --test gpu_math -- --nocapture`.

use codegen_ptx::emit;
use codegen_ptx::jit::{Jit, KernelArg, Launch};
use dsl_core::ir::{Kernel, Target};
use dsl_core::kernel::*;
use half::{bf16, f16};
use rute_tests::gpu::jit;
use std::f64::consts::PI;

type Fn1<T> = fn(Var<T>) -> Var<T>;

/// A tested function: its name, the accurate and fast variants, the exact f64 function, the
/// documented range, the range where the fast variant is sanity-checked, and the accurate
/// f32 bound in ulps (the math module's table).
struct Case {
    name: &'static str,
    exact: fn(f64) -> f64,
    range: (f64, f64),
    fast_range: (f64, f64),
    bound: f64,
}

const CASES: &[Case] = &[
    Case {
        name: "exp",
        exact: f64::exp,
        range: (-87.33, 88.72),
        fast_range: (-20.0, 20.0),
        bound: 1.0,
    },
    Case {
        name: "exp2",
        exact: f64::exp2,
        range: (-126.0, 127.99),
        fast_range: (-100.0, 100.0),
        bound: 1.0,
    },
    Case {
        name: "ln",
        exact: f64::ln,
        range: (1.4e-45, 3.4e38),
        fast_range: (1e-30, 1e30),
        bound: 1.0,
    },
    Case {
        name: "log2",
        exact: f64::log2,
        range: (1.4e-45, 3.4e38),
        fast_range: (1e-30, 1e30),
        bound: 1.1,
    },
    Case {
        name: "tanh",
        exact: f64::tanh,
        range: (-12.0, 12.0),
        fast_range: (-12.0, 12.0),
        bound: 1.0,
    },
    Case {
        name: "erf",
        exact: libm::erf,
        range: (-5.0, 5.0),
        fast_range: (-5.0, 5.0),
        bound: 1.1,
    },
    Case {
        name: "sin",
        exact: f64::sin,
        range: (-3.4e38, 3.4e38),
        fast_range: (-PI, PI),
        bound: 1.0,
    },
    Case {
        name: "cos",
        exact: f64::cos,
        range: (-3.4e38, 3.4e38),
        fast_range: (-PI, PI),
        bound: 1.0,
    },
    Case {
        name: "sqrt",
        exact: f64::sqrt,
        range: (1.4e-45, 3.4e38),
        fast_range: (1e-30, 1e30),
        bound: 0.5,
    },
    Case {
        name: "rsqrt",
        exact: rsqrt,
        range: (1.4e-45, 3.4e38),
        fast_range: (1e-30, 1e30),
        bound: 1.0,
    },
    Case {
        name: "recip",
        exact: recip,
        range: (1.4e-45, 3.4e38),
        fast_range: (1e-30, 1e30),
        bound: 0.5,
    },
];

fn rsqrt(x: f64) -> f64 {
    1.0 / x.sqrt()
}

fn recip(x: f64) -> f64 {
    1.0 / x
}

/// The accurate and the fast variant of `name` on `T`.
fn variants<T: Float>(name: &str) -> (Fn1<T>, Fn1<T>) {
    match name {
        "exp" => (|x| x.exp(), |x| x.exp_fast()),
        "exp2" => (|x| x.exp2(), |x| x.exp2_fast()),
        "ln" => (|x| x.ln(), |x| x.ln_fast()),
        "log2" => (|x| x.log2(), |x| x.log2_fast()),
        "tanh" => (|x| x.tanh(), |x| x.tanh_fast()),
        "erf" => (|x| x.erf(), |x| x.erf_fast()),
        "sin" => (|x| x.sin(), |x| x.sin_fast()),
        "cos" => (|x| x.cos(), |x| x.cos_fast()),
        "sqrt" => (|x| x.sqrt(), |x| x.sqrt_fast()),
        "rsqrt" => (|x| x.rsqrt(), |x| x.rsqrt_fast()),
        "recip" => (|x| x.recip(), |x| x.recip_fast()),
        _ => panic!("no function {name}"),
    }
}

/// A float format: significand bits after the point, the smallest normal exponent, the
/// largest finite value.
#[derive(Clone, Copy)]
struct Format {
    mant: i32,
    emin: i32,
    max: f64,
}

const F32: Format = Format {
    mant: 23,
    emin: -126,
    max: f32::MAX as f64,
};
const F16: Format = Format {
    mant: 10,
    emin: -14,
    max: 65504.0,
};
const BF16: Format = Format {
    mant: 7,
    emin: -126,
    max: 3.389_531_389_251_535e38,
};

/// The error of `got` against `exact` in ulps of `fmt` at `exact`: matching NaNs and matching
/// infinities count 0; past the largest finite value the exact value rounds to infinity.
fn ulps(fmt: Format, got: f64, exact: f64) -> f64 {
    if got.is_nan() || exact.is_nan() {
        return if got.is_nan() && exact.is_nan() {
            0.0
        } else {
            f64::INFINITY
        };
    }
    let half_ulp_at_max = 2f64.powi(fmt.max.log2().floor() as i32 - fmt.mant - 1);
    if exact.abs() > fmt.max || got.is_infinite() {
        let rounded = if exact.abs() >= fmt.max + half_ulp_at_max {
            exact.signum() * f64::INFINITY
        } else {
            exact.signum() * fmt.max
        };
        return if got == rounded { 0.0 } else { f64::INFINITY };
    }
    let e = exact.abs();
    let exp = if e < 2f64.powi(fmt.emin) {
        fmt.emin
    } else {
        e.log2().floor() as i32
    };
    (got - exact).abs() / 2f64.powi(exp - fmt.mant)
}

/// About `n` f32 values of [lo, hi] spread over the bit patterns (each side of zero
/// separately), plus the values within 64 patterns of `extra`.
fn f32_inputs(lo: f64, hi: f64, n: u32, extra: &[f32]) -> Vec<f32> {
    let side = |a: f32, b: f32| {
        let (x, y) = (a.to_bits().min(b.to_bits()), a.to_bits().max(b.to_bits()));
        let stride = ((y - x) / n).max(1) as usize;
        (x..=y)
            .step_by(stride)
            .map(f32::from_bits)
            .collect::<Vec<_>>()
    };
    let (lo, hi) = (lo as f32, hi as f32);
    let mut v = Vec::new();
    if lo < 0.0 {
        v.extend(side(-0.0, lo));
    }
    if hi >= 0.0 {
        v.extend(side(lo.max(0.0), hi));
    }
    for p in extra {
        let b = p.to_bits();
        v.extend((b.saturating_sub(64)..=b.saturating_add(64)).map(f32::from_bits));
    }
    v.retain(|x| x.is_finite() && f64::from(*x) >= f64::from(lo) && f64::from(*x) <= f64::from(hi));
    v
}

/// Every finite 16-bit value (by bits, `to_f64`) in [lo, hi].
fn half_inputs(lo: f64, hi: f64, value: fn(u16) -> f64) -> Vec<u16> {
    (0..=u16::MAX)
        .filter(|&b| {
            let v = value(b);
            v.is_finite() && v >= lo && v <= hi
        })
        .collect()
}

/// `y[i] = f(x[i])` for `i < n` (the host holds 16-bit values and pairs as their bits, u16 and
/// u32).
fn kernel<T: Float>(name: &str, f: Fn1<T>) -> Kernel {
    build_kernel(name, |k| {
        let x = k.param_ptr::<T>("x");
        let y = k.param_ptr::<T>("y");
        let n = k.param::<u32>("n");
        let i = block_idx_x() * block_dim_x() + thread_idx_x();
        i.lt(n).if_(|_| y.store_at(i, f(x.load_at(i))));
    })
    .unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// Runs `kernel` over `xs` on the GPU and returns its outputs.
fn run<B: codegen_ptx::jit::AnyBitPattern + Copy + Default>(
    jit: &Jit,
    k: &Kernel,
    xs: &[B],
) -> Vec<B> {
    let ptx = emit(k, Target::Sm90a).unwrap_or_else(|e| panic!("{}: {e}", k.name));
    let f = jit
        .load(&ptx)
        .and_then(|m| m.function(&k.name))
        .unwrap_or_else(|e| panic!("{}: {e}", k.name));
    let dx = jit.upload(xs).unwrap();
    let mut dy = jit.upload(&vec![B::default(); xs.len()]).unwrap();
    // SAFETY: the math kernels read `x[i]` and write `y[i]` only for `i < n`, and both buffers
    // hold `n = xs.len()` elements.
    unsafe {
        f.launch(
            &Launch::linear(xs.len() as u32, 256),
            &[
                jit.buffer(&dx),
                jit.buffer_mut(&mut dy),
                KernelArg::U32(xs.len() as u32),
            ],
        )
    }
    .unwrap_or_else(|e| panic!("{}: {e}", k.name));
    jit.download(&dy).unwrap()
}

/// The worst error over `(x, got)` pairs: (ulps, x).
fn worst(
    fmt: Format,
    exact: fn(f64) -> f64,
    pairs: impl Iterator<Item = (f64, f64)>,
) -> (f64, f64) {
    pairs.fold((0.0, 0.0), |w, (x, got)| {
        let e = ulps(fmt, got, exact(x));
        if e > w.0 {
            (e, x)
        } else {
            w
        }
    })
}

/// One row of the table: the type, the function, the accurate and fast worst errors.
struct Row {
    ty: &'static str,
    name: &'static str,
    accurate: (f64, f64),
    fast: (f64, f64),
    fast_in_range: (f64, f64),
}

fn print(rows: &[Row]) {
    println!(
        "{:<7} {:<6} {:>26} {:>26} {:>26}",
        "type", "fn", "accurate: ulp (at x)", "fast: ulp (at x)", "fast on its range"
    );
    for r in rows {
        let cell = |(e, x): (f64, f64)| format!("{e:>9.3} ({x:>12.5e})");
        println!(
            "{:<7} {:<6} {:>26} {:>26} {:>26}",
            r.ty,
            r.name,
            cell(r.accurate),
            cell(r.fast),
            cell(r.fast_in_range)
        );
    }
}

fn in_range((lo, hi): (f64, f64)) -> impl Fn(&(f64, f64)) -> bool {
    move |(x, _)| *x >= lo && *x <= hi
}

/// The first `(x, got)` of `pairs` whose error exceeds `rel * max(|exact|, 1)` (relative for
/// large results, absolute near zero, where the hardware's sin and cos are absolute), not
/// counting a result that rounds exactly (an overflow to infinity, say).
fn insane(
    fmt: Format,
    exact: fn(f64) -> f64,
    rel: f64,
    mut pairs: impl Iterator<Item = (f64, f64)>,
) -> Option<(f64, f64)> {
    pairs.find(|&(x, got)| {
        let e = exact(x);
        // NaN compares false both ways: a NaN result is insane.
        let within = (got - e).abs() <= rel * e.abs().max(1.0);
        ulps(fmt, got, e) > 0.5 && !within
    })
}

#[test]
#[cfg_attr(not(feature = "gpu"), ignore)]
fn f32_functions_against_f64() {
    let jit = jit();
    let mut rows = Vec::new();
    let mut failures = Vec::new();
    for case in CASES {
        let splits = [
            0.9f32,
            -0.9,
            0.927_734_4,
            -0.927_734_4,
            std::f32::consts::FRAC_PI_4,
            1.0,
            0.5,
            2.0,
            2.356_194_5,
        ];
        let xs = f32_inputs(case.range.0, case.range.1, 1 << 20, &splits);
        let (acc, fast) = variants::<f32>(case.name);
        let got_acc = run(
            &jit,
            &kernel::<f32>(&format!("{}_f32", case.name), acc),
            &xs,
        );
        let got_fast = run(
            &jit,
            &kernel::<f32>(&format!("{}_fast_f32", case.name), fast),
            &xs,
        );
        // The GPU computes exactly what the builder folds on the host.
        let differ: Vec<f32> = xs
            .iter()
            .zip(&got_acc)
            .filter(|(x, g)| acc(Var::konst(**x)).as_const().map(f32::to_bits) != Some(g.to_bits()))
            .map(|(x, _)| *x)
            .collect();
        if !differ.is_empty() {
            failures.push(format!(
                "{}: {} of {} results differ from the host fold, first at {:e}",
                case.name,
                differ.len(),
                xs.len(),
                differ[0]
            ));
        }
        let pairs = |got: &[f32]| -> Vec<(f64, f64)> {
            xs.iter()
                .zip(got)
                .map(|(x, g)| (f64::from(*x), f64::from(*g)))
                .collect()
        };
        let (acc_pairs, fast_pairs) = (pairs(&got_acc), pairs(&got_fast));
        let row = Row {
            ty: "f32",
            name: case.name,
            accurate: worst(F32, case.exact, acc_pairs.iter().copied()),
            fast: worst(F32, case.exact, fast_pairs.iter().copied()),
            fast_in_range: worst(
                F32,
                case.exact,
                fast_pairs.iter().copied().filter(in_range(case.fast_range)),
            ),
        };
        if row.accurate.0 > case.bound {
            failures.push(format!(
                "{}: {} ulp at {:e}, documented {}",
                case.name, row.accurate.0, row.accurate.1, case.bound
            ));
        }
        let fast_in = fast_pairs.iter().copied().filter(in_range(case.fast_range));
        if let Some((x, got)) = insane(F32, case.exact, 2f64.powi(-10), fast_in) {
            failures.push(format!("{}_fast: {got:e} at {x:e}", case.name));
        }
        rows.push(row);
    }
    print(&rows);
    assert!(failures.is_empty(), "{failures:#?}");
}

/// The 16-bit rows: every value of each function's range through `T` (or its pair `P`).
fn half_rows<T: Float, P: Float>(
    jit: &Jit,
    ty: &'static str,
    pair_ty: &'static str,
    fmt: Format,
    value: fn(u16) -> f64,
    rows: &mut Vec<Row>,
    failures: &mut Vec<String>,
) {
    for case in CASES {
        let xs = half_inputs(case.range.0, case.range.1, value);
        let (acc, fast) = variants::<T>(case.name);
        let (pacc, pfast) = variants::<P>(case.name);
        let scalar = |f: Fn1<T>, tag: &str| {
            run(
                jit,
                &kernel::<T>(&format!("{}{tag}_{ty}", case.name), f),
                &xs,
            )
        };
        // Pairs: the same values two per word (an odd count repeats the last).
        let words: Vec<u32> = xs
            .chunks(2)
            .map(|c| u32::from(c[0]) | (u32::from(*c.last().unwrap_or(&c[0])) << 16))
            .collect();
        let paired = |f: Fn1<P>, tag: &str| -> Vec<u16> {
            run(
                jit,
                &kernel::<P>(&format!("{}{tag}_{pair_ty}", case.name), f),
                &words,
            )
            .iter()
            .flat_map(|w| [*w as u16, (*w >> 16) as u16])
            .take(xs.len())
            .collect()
        };
        for (t, got_acc, got_fast) in [
            (ty, scalar(acc, ""), scalar(fast, "_fast")),
            (pair_ty, paired(pacc, ""), paired(pfast, "_fast")),
        ] {
            let pairs = |got: &[u16]| -> Vec<(f64, f64)> {
                xs.iter()
                    .zip(got)
                    .map(|(x, g)| (value(*x), value(*g)))
                    .collect()
            };
            let (acc_pairs, fast_pairs) = (pairs(&got_acc), pairs(&got_fast));
            let row = Row {
                ty: t,
                name: case.name,
                accurate: worst(fmt, case.exact, acc_pairs.iter().copied()),
                fast: worst(fmt, case.exact, fast_pairs.iter().copied()),
                fast_in_range: worst(
                    fmt,
                    case.exact,
                    fast_pairs.iter().copied().filter(in_range(case.fast_range)),
                ),
            };
            let bound = if case.bound == 0.5 { 0.5 } else { 1.0 };
            if row.accurate.0 > bound {
                failures.push(format!(
                    "{} {t}: {} ulp at {:e}, bound {bound}",
                    case.name, row.accurate.0, row.accurate.1
                ));
            }
            let fast_in = fast_pairs.iter().copied().filter(in_range(case.fast_range));
            if let Some((x, got)) = insane(fmt, case.exact, 2f64.powi(-6), fast_in) {
                failures.push(format!("{}_fast {t}: {got:e} at {x:e}", case.name));
            }
            rows.push(row);
        }
    }
}

#[test]
#[cfg_attr(not(feature = "gpu"), ignore)]
fn half_functions_against_f64() {
    let jit = jit();
    let (mut rows, mut failures) = (Vec::new(), Vec::new());
    half_rows::<f16, F16x2>(
        &jit,
        "f16",
        "f16x2",
        F16,
        |b| f16::from_bits(b).to_f64(),
        &mut rows,
        &mut failures,
    );
    half_rows::<bf16, BF16x2>(
        &jit,
        "bf16",
        "bf16x2",
        BF16,
        |b| bf16::from_bits(b).to_f64(),
        &mut rows,
        &mut failures,
    );
    print(&rows);
    assert!(failures.is_empty(), "{failures:#?}");
}
