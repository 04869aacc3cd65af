//! What a GEMM does with its f32 sum before it stores D: [`Epilogue`], a sum type whose
//! variants are the epilogues rute fuses, so that a combination no program computes (C beside
//! a gated pair, say) cannot be written.
//!
//! With `acc` the sum `A B^T` at `(i, j)`, the linear part is `x = alpha * acc + beta * C[i, j] +
//! bias` (C only with [`Source::C`], the bias only with one), then:
//! - [`Epilogue::Plain`]: `D = acc`, each program's own epilogue, unchanged (alpha 1, beta 0);
//! - [`Epilogue::Elementwise`]: `D[i, j] = f(x) + R[i, j]`, `f` an [`Activation`] or a device
//!   function of `(x, i, j)` ([`DeviceFn`]), `R` the residual (with [`Residual::Add`]);
//! - [`Epilogue::Gated`]: over interleaved gate and up columns (the fused projection of a
//!   gated MLP, Llama's SwiGLU), `D[i, j] = act(x[i, 2j]) * x[i, 2j + 1] + R[i, j]`: D is half as
//!   wide as the sum. `act` SiLU is SwiGLU, GELU is GEGLU, ReLU ReGLU.
//!
//! The activations, on the device (the same in every program):
//! - ReLU: `max(x, 0)`;
//! - GELU, tanh form: `x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))` with `tanh.approx.f32`
//!   (`Var::tanh_fast`, a relative error near 2^-11, as cuBLASLt's and PyTorch's fast paths);
//! - GELU, erf form: `x/2 (1 + erf(x / sqrt 2))` with the accurate `Var::erf` (the hardware has
//!   no erf instruction);
//! - SiLU: `x / (1 + e^-x)`, as `x * rcp.approx.ftz(1 + ex2.approx.ftz(-x log2 e))` (subnormals
//!   flushed: they cannot change the result, and the flushing forms are one instruction each).
//!
//! A user's own epilogue is a `#[device]` function of the linear part and the element's row
//! and column:
//!
//! ```
//! use dsl_core::kernel::*;
//! use dsl_macros::device;
//! use kernels::gemm::epilogue::{DeviceFn, Elementwise, Epilogue, Map};
//!
//! /// Zeroes the strictly upper triangle (a causal mask) and squares the rest.
//! #[device]
//! fn causal_square(x: Var<f32>, row: Var<u32>, col: Var<u32>) -> Var<f32> {
//!     let masked = col.gt(row);
//!     select(masked, Var::konst(0.0f32), x * x)
//! }
//!
//! let epilogue = Epilogue::Elementwise(Elementwise {
//!     map: Map::Device(DeviceFn::new("causal_square", causal_square)),
//!     ..Elementwise::IDENTITY
//! });
//! assert_eq!(epilogue.tag(), "fn_causal_square");
//! ```
//!
//! The function's name identifies it in the runtime's compile cache: two functions run through
//! one runtime need two names.

use std::fmt;
use std::hash::{Hash, Hasher};

use dsl_core::kernel::*;

/// An elementwise activation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Activation {
    /// `x`.
    Identity,
    /// `max(x, 0)`.
    Relu,
    /// GELU in its tanh form.
    GeluTanh,
    /// GELU in its erf form (exact).
    GeluErf,
    /// `x * sigmoid(x)` (also called swish).
    Silu,
}

/// `sqrt(2/pi)`, the tanh form of GELU's inner scale.
const SQRT_2_OVER_PI: f64 = 0.797_884_560_802_865_4;
/// GELU's tanh form's cubic coefficient.
const GELU_CUBIC: f64 = 0.044_715;

impl Activation {
    /// Every activation.
    pub const ALL: [Activation; 5] = [
        Activation::Identity,
        Activation::Relu,
        Activation::GeluTanh,
        Activation::GeluErf,
        Activation::Silu,
    ];

    /// `id`, `relu`, `gelu_tanh`, `gelu_erf` or `silu`.
    pub fn name(self) -> &'static str {
        match self {
            Activation::Identity => "id",
            Activation::Relu => "relu",
            Activation::GeluTanh => "gelu_tanh",
            Activation::GeluErf => "gelu_erf",
            Activation::Silu => "silu",
        }
    }

    /// The exact value, in f64 (a reference's).
    pub fn host(self, x: f64) -> f64 {
        match self {
            Activation::Identity => x,
            Activation::Relu => x.max(0.0),
            Activation::GeluTanh => {
                0.5 * x * (1.0 + (SQRT_2_OVER_PI * (x + GELU_CUBIC * x * x * x)).tanh())
            }
            Activation::GeluErf => 0.5 * x * (1.0 + libm::erf(x / std::f64::consts::SQRT_2)),
            Activation::Silu => x / (1.0 + (-x).exp()),
        }
    }

    /// The device code of `x`'s activation (see the module's docs for each one's instructions).
    pub fn device(self, x: Var<f32>) -> Var<f32> {
        match self {
            Activation::Identity => x,
            Activation::Relu => x.max(0.0f32),
            Activation::GeluTanh => {
                // sqrt(2/pi) (x + c x^3) as x (k0 + k1 x^2), the constants folded on the host:
                // one multiply fewer per value (6 instructions with the tanh).
                let (k0, k1) = (SQRT_2_OVER_PI, SQRT_2_OVER_PI * GELU_CUBIC);
                let inner = x * (x * x).mul_add(k1 as f32, k0 as f32);
                let half = x * 0.5f32;
                half.mul_add(inner.tanh_fast(), half)
            }
            Activation::GeluErf => {
                let half = x * 0.5f32;
                let e = (x * std::f32::consts::FRAC_1_SQRT_2).erf();
                half.mul_add(e, half)
            }
            Activation::Silu => {
                // Flushing subnormals costs nothing here (e below 2^-126 adds nothing to 1, and
                // 1 + e is never subnormal) and saves the non-.ftz forms' scaling around each
                // function-unit instruction: about half of SiLU's instructions per value.
                let e = (x * -std::f32::consts::LOG2_E).exp2_fast_ftz();
                x * (e + 1.0f32).recip_fast_ftz()
            }
        }
    }
}

/// A bias vector added to the linear part: one value per row of D (`m` of them) or per column of
/// the sum (`n`; for a gated epilogue, one per gate and up column before the pair is combined).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Bias {
    /// `bias[i]` at row `i`.
    PerRow,
    /// `bias[j]` at the sum's column `j`.
    PerColumn,
}

impl Bias {
    /// Elements of the vector for an `m x n` sum.
    pub fn len(self, m: usize, n: usize) -> usize {
        match self {
            Bias::PerRow => m,
            Bias::PerColumn => n,
        }
    }

    fn tag(self) -> &'static str {
        match self {
            Bias::PerRow => "brow",
            Bias::PerColumn => "bcol",
        }
    }
}

/// Whether the linear part reads C (`beta * C`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Source {
    /// No C: `beta` is 0, and C is never read (a NaN there does not reach D), as in BLAS.
    None,
    /// `beta * C[i, j]`, C row-major with its own leading dimension and batch stride.
    C,
}

/// Whether a residual is added after the map.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Residual {
    /// None.
    None,
    /// `+ R[i, j]`, R of D's shape and type, with its own leading dimension and batch stride.
    Add,
}

/// A user's device function of the linear part `x` and the element's row and column (D's
/// coordinates within one GEMM of a batch), returning the value stored (before the residual).
/// Named: the name identifies it in compile caches and kernel names (letters, digits and `_`).
#[derive(Clone, Copy)]
pub struct DeviceFn {
    name: &'static str,
    f: fn(Var<f32>, Var<u32>, Var<u32>) -> Var<f32>,
}

impl DeviceFn {
    /// `f`, called `name`.
    ///
    /// # Panics
    ///
    /// If `name` is empty or has characters other than ASCII letters, digits and `_` (it goes
    /// into PTX entry names): a name is written in the source, so a bad one is a bug.
    pub fn new(name: &'static str, f: fn(Var<f32>, Var<u32>, Var<u32>) -> Var<f32>) -> DeviceFn {
        assert!(
            !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'),
            "a device epilogue's name is letters, digits and `_`, not `{name}`"
        );
        DeviceFn { name, f }
    }

    /// Its name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// Generates its code for `(x, row, col)`.
    pub fn call(&self, x: Var<f32>, row: Var<u32>, col: Var<u32>) -> Var<f32> {
        (self.f)(x, row, col)
    }
}

impl fmt::Debug for DeviceFn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DeviceFn({})", self.name)
    }
}

impl PartialEq for DeviceFn {
    /// Equal by name: the name identifies the function (see [`DeviceFn`]).
    fn eq(&self, other: &DeviceFn) -> bool {
        self.name == other.name
    }
}

impl Eq for DeviceFn {}

impl Hash for DeviceFn {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.name.hash(state);
    }
}

/// What an elementwise epilogue maps the linear part through.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Map {
    /// An activation.
    Activation(Activation),
    /// A user's device function of `(x, row, col)`.
    Device(DeviceFn),
}

/// `D[i, j] = map(alpha * acc + beta * C + bias) + R`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Elementwise {
    /// Whether C is read.
    pub source: Source,
    /// The bias, if any.
    pub bias: Option<Bias>,
    /// The map.
    pub map: Map,
    /// Whether a residual is added.
    pub residual: Residual,
}

impl Elementwise {
    /// `D = alpha * acc`: no C, no bias, the identity, no residual.
    pub const IDENTITY: Elementwise = Elementwise {
        source: Source::None,
        bias: None,
        map: Map::Activation(Activation::Identity),
        residual: Residual::None,
    };
}

/// `D[i, j] = act(x[i, 2j]) * x[i, 2j + 1] + R[i, j]`, `x = alpha * acc + bias`: gate and up
/// columns interleaved in the sum, D half as wide. No C: it would be of the sum's shape, which
/// is not D's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Gated {
    /// The bias, if any (per column: one per gate and up column).
    pub bias: Option<Bias>,
    /// The gate's activation (SiLU: SwiGLU; GELU: GEGLU).
    pub act: Activation,
    /// Whether a residual is added.
    pub residual: Residual,
}

/// What a GEMM does with its sum before it stores D (see the module's docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Epilogue {
    /// `D = acc`: each program's own epilogue.
    #[default]
    Plain,
    /// `D = map(alpha * acc + beta * C + bias) + R`.
    Elementwise(Elementwise),
    /// `D[i, j] = act(x[i, 2j]) * x[i, 2j + 1] + R`.
    Gated(Gated),
}

impl Epilogue {
    /// SwiGLU: a gated epilogue with SiLU, no bias, no residual.
    pub const SWIGLU: Epilogue = Epilogue::Gated(Gated {
        bias: None,
        act: Activation::Silu,
        residual: Residual::None,
    });

    /// `D = act(alpha * acc + bias)`, the bias per column (a linear layer's).
    pub fn bias_act(act: Activation) -> Epilogue {
        Epilogue::Elementwise(Elementwise {
            bias: Some(Bias::PerColumn),
            map: Map::Activation(act),
            ..Elementwise::IDENTITY
        })
    }

    /// `D = alpha * acc + R` (a residual connection).
    pub const RESIDUAL: Epilogue = Epilogue::Elementwise(Elementwise {
        residual: Residual::Add,
        ..Elementwise::IDENTITY
    });

    /// One epilogue of each kind, for a test that should meet them all: plain; `alpha acc +
    /// beta C`; C with a bias per row, SiLU and a residual; the residual alone; SwiGLU; a gated
    /// GELU (tanh) with a bias per column and a residual; and a bias per column with each
    /// activation of [`Activation::ALL`].
    ///
    /// ```
    /// use kernels::gemm::epilogue::Epilogue;
    /// let all = Epilogue::one_of_each();
    /// assert!(all.contains(&Epilogue::SWIGLU) && all.iter().any(|e| e.reads_c()));
    /// ```
    pub fn one_of_each() -> Vec<Epilogue> {
        let mut v = vec![
            Epilogue::Plain,
            Epilogue::Elementwise(Elementwise {
                source: Source::C,
                ..Elementwise::IDENTITY
            }),
            Epilogue::Elementwise(Elementwise {
                source: Source::C,
                bias: Some(Bias::PerRow),
                map: Map::Activation(Activation::Silu),
                residual: Residual::Add,
            }),
            Epilogue::RESIDUAL,
            Epilogue::SWIGLU,
            Epilogue::Gated(Gated {
                bias: Some(Bias::PerColumn),
                act: Activation::GeluTanh,
                residual: Residual::Add,
            }),
        ];
        v.extend(Activation::ALL.into_iter().map(Epilogue::bias_act));
        v
    }

    /// Whether C is read.
    pub fn reads_c(&self) -> bool {
        matches!(
            self,
            Epilogue::Elementwise(Elementwise {
                source: Source::C,
                ..
            })
        )
    }

    /// The bias, if any.
    pub fn bias(&self) -> Option<Bias> {
        match self {
            Epilogue::Plain => None,
            Epilogue::Elementwise(e) => e.bias,
            Epilogue::Gated(g) => g.bias,
        }
    }

    /// Whether a residual is added.
    pub fn adds_residual(&self) -> bool {
        let r = match self {
            Epilogue::Plain => Residual::None,
            Epilogue::Elementwise(e) => e.residual,
            Epilogue::Gated(g) => g.residual,
        };
        r == Residual::Add
    }

    /// Whether the sum's columns pair up into D's.
    pub fn is_gated(&self) -> bool {
        matches!(self, Epilogue::Gated(_))
    }

    /// Columns of D for a sum of `n` columns.
    pub fn out_cols(&self, n: usize) -> usize {
        if self.is_gated() {
            n / 2
        } else {
            n
        }
    }

    /// A short identifier of the epilogue's structure, for kernel names and cache keys:
    /// `plain`, or its parts joined by `_` (`src` for C, `brow`/`bcol`, the activation's name
    /// or `fn_NAME`, `glu_ACT` for a gated pair, `res`).
    pub fn tag(&self) -> String {
        let (source, bias, middle, residual) = match self {
            Epilogue::Plain => return "plain".into(),
            Epilogue::Elementwise(e) => {
                let map = match e.map {
                    Map::Activation(a) => a.name().to_string(),
                    Map::Device(f) => format!("fn_{}", f.name()),
                };
                (e.source, e.bias, map, e.residual)
            }
            Epilogue::Gated(g) => (
                Source::None,
                g.bias,
                format!("glu_{}", g.act.name()),
                g.residual,
            ),
        };
        let mut parts = Vec::new();
        if source == Source::C {
            parts.push("src".to_string());
        }
        if let Some(b) = bias {
            parts.push(b.tag().to_string());
        }
        parts.push(middle);
        if residual == Residual::Add {
            parts.push("res".to_string());
        }
        parts.join("_")
    }

    /// In words, for a plan's description: `D = gelu_tanh(alpha acc + bias[col])`, ...
    pub fn describe(&self) -> String {
        let linear = |source: Source, bias: Option<Bias>| {
            let mut s = "alpha acc".to_string();
            if source == Source::C {
                s += " + beta C";
            }
            match bias {
                Some(Bias::PerRow) => s += " + bias[row]",
                Some(Bias::PerColumn) => s += " + bias[col]",
                None => {}
            }
            s
        };
        let residual = |r: Residual| if r == Residual::Add { " + R" } else { "" };
        match self {
            Epilogue::Plain => "D = acc".into(),
            Epilogue::Elementwise(e) => {
                let x = linear(e.source, e.bias);
                let mapped = match e.map {
                    Map::Activation(Activation::Identity) => x,
                    Map::Activation(a) => format!("{}({x})", a.name()),
                    Map::Device(f) => format!("{}({x}, row, col)", f.name()),
                };
                format!("D = {mapped}{}", residual(e.residual))
            }
            Epilogue::Gated(g) => format!(
                "D = {}(x[2j]) * x[2j+1]{}, x = {}",
                g.act.name(),
                residual(g.residual),
                linear(Source::None, g.bias)
            ),
        }
    }
}

/// An epilogue's device side for one thread: its scalars and, given how the program reads C,
/// the bias and the residual at an element, the value D gets.
#[derive(Clone, Copy)]
pub struct DeviceEpilogue<'a> {
    /// The structure.
    pub epilogue: &'a Epilogue,
    /// `alpha`.
    pub alpha: Var<f32>,
    /// `beta`.
    pub beta: Var<f32>,
}

impl DeviceEpilogue<'_> {
    /// The linear part `alpha * acc + beta * c() + bias()`, each read only where the epilogue
    /// has it (C for [`Source::C`], the bias for a bias).
    pub fn linear(
        &self,
        acc: Var<f32>,
        c: impl FnOnce() -> Var<f32>,
        bias: impl FnOnce() -> Var<f32>,
    ) -> Var<f32> {
        let mut x = acc * self.alpha;
        if self.epilogue.reads_c() {
            x = c().mul_add(self.beta, x);
        }
        if self.epilogue.bias().is_some() {
            x += bias();
        }
        x
    }

    /// An elementwise epilogue's map of `x` at `(row, col)` (the identity for the others).
    pub fn map(&self, x: Var<f32>, row: Var<u32>, col: Var<u32>) -> Var<f32> {
        match self.epilogue {
            Epilogue::Elementwise(Elementwise {
                map: Map::Activation(a),
                ..
            }) => a.device(x),
            Epilogue::Elementwise(Elementwise {
                map: Map::Device(f),
                ..
            }) => f.call(x, row, col),
            _ => x,
        }
    }

    /// A gated epilogue's `act(gate) * up` (`gate * up` for the others, which never call it).
    pub fn gate(&self, gate: Var<f32>, up: Var<f32>) -> Var<f32> {
        let act = match self.epilogue {
            Epilogue::Gated(g) => g.act,
            _ => Activation::Identity,
        };
        act.device(gate) * up
    }

    /// `v + residual()` where the epilogue adds one.
    pub fn residual(&self, v: Var<f32>, residual: impl FnOnce() -> Var<f32>) -> Var<f32> {
        if self.epilogue.adds_residual() {
            v + residual()
        } else {
            v
        }
    }
}

/// The epilogue at one element on the host, in f64, from the sums of its row: what a
/// reference computes. `acc(j)` is the sum at the sum's column `j`, `c`, `bias` and `residual`
/// read at D's (or, for the bias, the sum's) coordinates; `custom` computes a
/// [`DeviceFn`]'s value (ignored for the other maps).
#[allow(clippy::too_many_arguments)]
pub fn host_value(
    epilogue: &Epilogue,
    (alpha, beta): (f64, f64),
    (i, j): (usize, usize),
    acc: impl Fn(usize) -> f64,
    c: impl Fn() -> f64,
    bias: impl Fn(usize, usize) -> f64,
    residual: impl Fn() -> f64,
    custom: &dyn Fn(f64, usize, usize) -> f64,
) -> f64 {
    let linear = |col: usize, source: Source, b: Option<Bias>| {
        let mut x = alpha * acc(col);
        if source == Source::C {
            x += beta * c();
        }
        if b.is_some() {
            x += bias(i, col);
        }
        x
    };
    let r = |v: f64, res: Residual| {
        if res == Residual::Add {
            v + residual()
        } else {
            v
        }
    };
    match epilogue {
        Epilogue::Plain => acc(j),
        Epilogue::Elementwise(e) => {
            let x = linear(j, e.source, e.bias);
            let v = match e.map {
                Map::Activation(a) => a.host(x),
                Map::Device(_) => custom(x, i, j),
            };
            r(v, e.residual)
        }
        Epilogue::Gated(g) => {
            let gate = linear(2 * j, Source::None, g.bias);
            let up = linear(2 * j + 1, Source::None, g.bias);
            r(g.act.host(gate) * up, g.residual)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_name_each_part() {
        assert_eq!(Epilogue::Plain.tag(), "plain");
        assert_eq!(
            Epilogue::bias_act(Activation::GeluTanh).tag(),
            "bcol_gelu_tanh"
        );
        assert_eq!(Epilogue::SWIGLU.tag(), "glu_silu");
        assert_eq!(Epilogue::RESIDUAL.tag(), "id_res");
        let all = Epilogue::Elementwise(Elementwise {
            source: Source::C,
            bias: Some(Bias::PerRow),
            map: Map::Activation(Activation::Relu),
            residual: Residual::Add,
        });
        assert_eq!(all.tag(), "src_brow_relu_res");
        assert_eq!(
            all.describe(),
            "D = relu(alpha acc + beta C + bias[row]) + R"
        );
        assert_eq!(
            Epilogue::SWIGLU.describe(),
            "D = silu(x[2j]) * x[2j+1], x = alpha acc"
        );
    }

    #[test]
    fn activations_on_the_host() {
        let close = |a: f64, b: f64| (a - b).abs() < 1e-12;
        assert!(close(Activation::Relu.host(-2.0), 0.0));
        assert!(close(Activation::Silu.host(0.0), 0.0));
        assert!(close(
            Activation::Silu.host(1.0),
            1.0 / (1.0 + (-1.0f64).exp())
        ));
        // GELU(1) = 0.8413447460685429 (erf form); the tanh form is within 1e-3 of it.
        assert!(close(
            Activation::GeluErf.host(1.0),
            0.841_344_746_068_542_9
        ));
        assert!((Activation::GeluTanh.host(1.0) - 0.841_344_746).abs() < 1e-3);
    }

    /// The device code of each activation, folded on the host for constants where dsl-core
    /// folds (the accurate functions), matches the f64 value closely.
    #[test]
    fn device_activations_build() {
        for a in Activation::ALL {
            let k = build_kernel("act", |k| {
                let x = k.param_ptr::<f32>("x");
                let v = x.load_at(thread_idx_x());
                x.store_at(thread_idx_x(), a.device(v));
            })
            .unwrap();
            let ptx = codegen_ptx::emit(&k, dsl_core::ir::Target::Sm80).unwrap();
            let want = match a {
                Activation::GeluTanh => "tanh.approx.f32",
                Activation::Silu => "ex2.approx.ftz.f32",
                Activation::Relu => "max.f32",
                _ => "ld.global",
            };
            assert!(ptx.contains(want), "{a:?}: {ptx}");
        }
    }

    #[test]
    fn host_values_follow_the_variants() {
        let acc = |j: usize| j as f64 + 1.0;
        let none = |_: f64, _: usize, _: usize| 0.0;
        let v = host_value(
            &Epilogue::SWIGLU,
            (2.0, 0.0),
            (0, 1),
            acc,
            || 0.0,
            |_, _| 0.0,
            || 0.0,
            &none,
        );
        // Columns 2 and 3: gate 2 * 3 = 6, up 2 * 4 = 8.
        assert!((v - Activation::Silu.host(6.0) * 8.0).abs() < 1e-12);
        let e = Epilogue::Elementwise(Elementwise {
            source: Source::C,
            bias: Some(Bias::PerRow),
            map: Map::Activation(Activation::Identity),
            residual: Residual::Add,
        });
        let v = host_value(
            &e,
            (2.0, 3.0),
            (5, 1),
            acc,
            || 10.0,
            |i, _| i as f64,
            || 100.0,
            &none,
        );
        assert_eq!(v, 2.0 * 2.0 + 3.0 * 10.0 + 5.0 + 100.0);
    }
}
