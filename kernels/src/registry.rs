//! The kernels `rute ptx` knows: each with its name, the targets it supports, a function that
//! generates it with its default configuration and, for the kernels that have configurations,
//! one that generates it for a spelled configuration (`rute ptx NAME --config SPEC`), in a
//! form's parts too for the Hopper program (`--form FORM`: operand layouts, a fused epilogue,
//! D's type), and the configurations it names (the Blackwell program's steps), which `rute ptx
//! --list` shows; and its test case ([`crate::cases`]: launch, seeded inputs, CPU reference),
//! which `rute sim NAME` runs in the simulator.

use codegen_ptx::{emit, CodegenError};
use dsl_core::ir::{Kernel, Target};
use dsl_core::kernel::BuildError;
use thiserror::Error;

use crate::cases::examples::{
    AsyncCopy, ReduceSum, RowOp, RowWise, TmaPipeline, TmaRoundTrip, TmaStream, Transpose,
    VectorAdd, WgmmaTile, Width,
};
use crate::cases::{Case, CaseError, GemmCase, Values};
use crate::gemm::form_spelling::FormSpellingError;
use crate::gemm::layout::FormParts;
use crate::gemm::{Accum, GemmDtype};
use crate::{blackwell, examples, gemm, hopper, multistage};

/// Generates a kernel for a configuration's spelling; the error is a sentence.
pub type Configure = fn(&str) -> Result<Kernel, String>;

/// Generates a kernel for a configuration's spelling in a form's parts (operand layouts, a
/// fused epilogue, D's type: the kernels the runtime's forms launch); the error is a sentence.
pub type ConfigureForm = fn(&str, FormParts) -> Result<Kernel, String>;

/// Makes a kernel's default test case.
pub type MakeCase = fn() -> Result<Box<dyn Case>, CaseError>;

fn boxed(case: impl Case + 'static) -> Result<Box<dyn Case>, CaseError> {
    Ok(Box::new(case))
}

/// The test case of a registered GEMM kernel: `kernel` with `config` at the shape
/// [`crate::cases::gemm::shapes_for`] gives its tile, random inputs.
fn gemm_case(
    kernel: &str,
    config: Option<&str>,
    dtype: GemmDtype,
    acc: Accum,
) -> Result<Box<dyn Case>, CaseError> {
    boxed(GemmCase::sized(
        kernel,
        config,
        (dtype, acc),
        Values::Random,
    )?)
}

/// How a kernel that has configurations is generated for one.
#[derive(Debug, Clone, Copy)]
pub struct Configurable {
    /// Generates the kernel for a configuration spelled as `rute gemm --config` takes it; the
    /// error is a sentence naming what is wrong with the spelling.
    pub configure: Configure,
    /// Configurations with names of their own (`step8`), which `rute ptx --list` shows.
    pub named: &'static [&'static str],
    /// For the kernels generated in forms too, how (`rute ptx NAME --config SPEC --form FORM`).
    pub form: Option<ConfigureForm>,
}

/// A kernel published under a name.
#[derive(Debug, Clone, Copy)]
pub struct Registered {
    /// The name `rute ptx NAME` takes; also the PTX entry's name.
    pub name: &'static str,
    /// The targets it compiles for, lowest first.
    pub targets: &'static [Target],
    /// Generates the kernel with its default configuration for a target (the same kernel for
    /// every target, except where a target lacks an instruction the default uses: the tuned
    /// GEMM's `stmatrix` epilogue becomes `st.shared` on sm_80).
    pub build: fn(Target) -> Result<Kernel, BuildError>,
    /// For the kernels that have configurations, how to generate one.
    pub configure: Option<Configurable>,
    /// Its default test case: sizes with residues against its block and tile, the registry's
    /// configuration (`rute sim NAME` runs it).
    pub case: MakeCase,
}

impl Registered {
    /// Whether the kernel is published for `target`.
    pub fn supports(&self, target: Target) -> bool {
        self.targets.contains(&target)
    }

    /// Its line in `rute ptx --list`: the name, each target, and the configurations it names,
    /// e.g. `blackwell_ws_f16 sm_100a (configurations: step7, step8, step9)`.
    pub fn list_line(&self) -> String {
        let mut line = self.name.to_string();
        for t in self.targets {
            line.push(' ');
            line.push_str(t.name());
        }
        if let Some(Configurable { named, .. }) = self.configure {
            if !named.is_empty() {
                line.push_str(&format!(" (configurations: {})", named.join(", ")));
            }
        }
        line
    }

    /// Its PTX for `target`.
    ///
    /// Errors: a target the kernel is not published for, a generation error, a codegen error.
    pub fn ptx(&self, target: Target) -> Result<String, RegistryError> {
        self.ptx_of(target, None)
    }

    /// Its PTX for `target` with the configuration spelled `config` (`None`: the default). The
    /// PTX entry is then the configured kernel's name (e.g. `hopper_ws_bf16_64x64x128s6_t`).
    ///
    /// Errors: as [`Registered::ptx`], and a kernel without configurations
    /// ([`RegistryError::NotConfigurable`]) or a spelling it refuses ([`RegistryError::BadConfig`]).
    pub fn ptx_of(&self, target: Target, config: Option<&str>) -> Result<String, RegistryError> {
        self.supported(target)?;
        let kernel = match (config, self.configure) {
            (None, _) => (self.build)(target).map_err(|source| RegistryError::Build {
                kernel: self.name,
                source,
            })?,
            (Some(spec), Some(Configurable { configure, .. })) => {
                configure(spec).map_err(|message| RegistryError::BadConfig {
                    kernel: self.name,
                    message,
                })?
            }
            (Some(_), None) => {
                return Err(RegistryError::NotConfigurable {
                    kernel: self.name,
                    configurable: names_where(|k| k.configure.is_some()),
                })
            }
        };
        self.emitted(&kernel, target)
    }

    /// Its PTX for `target` with the configuration spelled `config` in the form spelled `form`
    /// (as a form kernel's name spells it after the configuration: `fkk_bcol_gelu_tanh_bf16`,
    /// [`FormParts::tag`]). The PTX entry is then that kernel's name.
    ///
    /// Errors: as [`Registered::ptx_of`], and a kernel generated in no forms
    /// ([`RegistryError::NoForms`]) or a form's spelling it cannot read
    /// ([`RegistryError::BadForm`]).
    pub fn form_ptx_of(
        &self,
        target: Target,
        config: &str,
        form: &str,
    ) -> Result<String, RegistryError> {
        self.supported(target)?;
        let Some(configure_form) = self.configure.and_then(|c| c.form) else {
            return Err(RegistryError::NoForms {
                kernel: self.name,
                with_forms: names_where(|k| k.configure.is_some_and(|c| c.form.is_some())),
            });
        };
        let parts: FormParts = form.parse().map_err(|source| RegistryError::BadForm {
            kernel: self.name,
            source,
        })?;
        let kernel = configure_form(config, parts).map_err(|message| RegistryError::BadConfig {
            kernel: self.name,
            message,
        })?;
        self.emitted(&kernel, target)
    }

    /// `Ok` where the kernel is published for `target`.
    fn supported(&self, target: Target) -> Result<(), RegistryError> {
        if self.supports(target) {
            return Ok(());
        }
        Err(RegistryError::UnsupportedTarget {
            kernel: self.name,
            target,
            supported: names(self.targets),
        })
    }

    /// `kernel`'s PTX for `target`.
    fn emitted(&self, kernel: &Kernel, target: Target) -> Result<String, RegistryError> {
        emit(kernel, target).map_err(|source| RegistryError::Codegen {
            kernel: self.name,
            target,
            source,
        })
    }
}

/// The registered kernels `which` picks, comma-separated.
fn names_where(which: impl Fn(&Registered) -> bool) -> String {
    KERNELS
        .iter()
        .filter(|k| which(k))
        .map(|k| k.name)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The Blackwell program's named configurations: the tutorial's steps ([`blackwell::Step`]).
const STEPS: &[&str] = &["step7", "step8", "step9"];

/// Every registered kernel, in the order `rute ptx --list` prints them.
pub const KERNELS: &[Registered] = &[
    Registered {
        name: "vector_add",
        targets: examples::vector_add::TARGETS,
        build: |_| examples::vector_add::default_kernel(),
        configure: None,
        case: || {
            boxed(VectorAdd {
                width: Width::Four,
                n: 2503,
            })
        },
    },
    Registered {
        name: "transpose",
        targets: examples::transpose::TARGETS,
        build: |_| examples::transpose::default_kernel(),
        configure: None,
        case: || {
            boxed(Transpose {
                rows: 70,
                cols: 45,
                block_rows: examples::transpose::BLOCK_ROWS,
            })
        },
    },
    Registered {
        name: "reduce_sum",
        targets: examples::reduce_sum::TARGETS,
        build: |_| examples::reduce_sum::default_kernel(),
        configure: None,
        case: || {
            boxed(ReduceSum {
                n: 1000,
                threads: examples::reduce_sum::THREADS,
                blocks: 3,
            })
        },
    },
    Registered {
        name: "softmax",
        targets: examples::softmax::TARGETS,
        build: |_| examples::softmax::default_kernel(),
        configure: None,
        case: || {
            boxed(RowWise {
                op: RowOp::Softmax,
                rows: 3,
                cols: 700,
                threads: examples::softmax::THREADS,
            })
        },
    },
    Registered {
        name: "layernorm",
        targets: examples::layernorm::TARGETS,
        build: |_| examples::layernorm::default_kernel(),
        configure: None,
        case: || {
            boxed(RowWise {
                op: RowOp::Layernorm,
                rows: 3,
                cols: 700,
                threads: examples::layernorm::THREADS,
            })
        },
    },
    Registered {
        name: "async_copy",
        targets: examples::async_copy::TARGETS,
        build: |_| examples::async_copy::default_kernel(),
        configure: None,
        case: || {
            boxed(AsyncCopy {
                n: 1300,
                threads: examples::async_copy::THREADS,
                blocks: 2,
            })
        },
    },
    Registered {
        name: "tma_round_trip",
        targets: examples::tma_round_trip::TARGETS,
        build: |_| examples::tma_round_trip::default_kernel(),
        configure: None,
        case: || {
            boxed(TmaRoundTrip {
                rows: 100,
                cols: 72,
                tile_box: examples::tma_round_trip::BOX,
                negate: false,
            })
        },
    },
    Registered {
        name: "tma_pipeline",
        targets: examples::tma_pipeline::TARGETS,
        build: |_| examples::tma_pipeline::default_kernel(),
        configure: None,
        case: || {
            boxed(TmaPipeline {
                rows: 70,
                cols: 772,
            })
        },
    },
    Registered {
        name: "tma_stream",
        targets: examples::tma_stream::TARGETS,
        build: |_| examples::tma_stream::default_kernel(),
        configure: None,
        case: || {
            boxed(TmaStream {
                rows: 330,
                cols: 200,
                tile_rows: 64,
                stages: 6,
                lag: 2,
            })
        },
    },
    Registered {
        name: "wgmma_tile",
        targets: examples::wgmma_tile::TARGETS,
        build: |_| examples::wgmma_tile::default_kernel(),
        configure: None,
        case: || boxed(WgmmaTile),
    },
    Registered {
        name: "gemm_naive",
        targets: gemm::naive::TARGETS,
        build: |_| gemm::naive::default_kernel(),
        configure: None,
        case: || gemm_case("naive", None, GemmDtype::F16, Accum::F32),
    },
    Registered {
        name: "hopper_ws_f16",
        targets: hopper::TARGETS,
        build: |_| hopper::default_kernel(GemmDtype::F16),
        configure: Some(Configurable {
            configure: |spec| hopper::configured_kernel(spec, GemmDtype::F16),
            named: &[],
            form: Some(|spec, form| hopper::configured_form_kernel(spec, GemmDtype::F16, form)),
        }),
        case: || gemm_case("hopper_ws", None, GemmDtype::F16, Accum::F32),
    },
    Registered {
        name: "hopper_ws_bf16",
        targets: hopper::TARGETS,
        build: |_| hopper::default_kernel(GemmDtype::Bf16),
        configure: Some(Configurable {
            configure: |spec| hopper::configured_kernel(spec, GemmDtype::Bf16),
            named: &[],
            form: Some(|spec, form| hopper::configured_form_kernel(spec, GemmDtype::Bf16, form)),
        }),
        case: || gemm_case("hopper_ws", None, GemmDtype::Bf16, Accum::F32),
    },
    Registered {
        name: "blackwell_ws_f16",
        targets: blackwell::TARGETS,
        build: |_| blackwell::default_kernel(GemmDtype::F16),
        configure: Some(Configurable {
            configure: |spec| blackwell::configured_kernel(spec, GemmDtype::F16),
            named: STEPS,
            form: None,
        }),
        case: || gemm_case("blackwell_ws", None, GemmDtype::F16, Accum::F32),
    },
    Registered {
        name: "blackwell_ws_bf16",
        targets: blackwell::TARGETS,
        build: |_| blackwell::default_kernel(GemmDtype::Bf16),
        configure: Some(Configurable {
            configure: |spec| blackwell::configured_kernel(spec, GemmDtype::Bf16),
            named: STEPS,
            form: None,
        }),
        case: || gemm_case("blackwell_ws", None, GemmDtype::Bf16, Accum::F32),
    },
    Registered {
        name: "multistage_f16",
        targets: multistage::TARGETS,
        build: |_| multistage::default_f16(),
        configure: None,
        case: || gemm_case("multistage", Some("ref"), GemmDtype::F16, Accum::F16),
    },
    Registered {
        name: "multistage_f16_f32acc",
        targets: multistage::TARGETS,
        build: |_| multistage::default_f16_f32acc(),
        configure: None,
        case: || gemm_case("multistage", Some("ref"), GemmDtype::F16, Accum::F32),
    },
    Registered {
        name: "multistage_bf16",
        targets: multistage::TARGETS,
        build: |_| multistage::default_bf16(),
        configure: None,
        case: || gemm_case("multistage", Some("ref"), GemmDtype::Bf16, Accum::F32),
    },
    Registered {
        name: "multistage_f16_tuned",
        targets: multistage::TARGETS,
        build: multistage::default_f16_tuned,
        configure: None,
        case: || gemm_case("multistage", Some("tuned"), GemmDtype::F16, Accum::F32),
    },
];

/// The kernel registered as `name`.
///
/// Errors: [`RegistryError::UnknownKernel`], naming the registered kernels.
pub fn find(name: &str) -> Result<&'static Registered, RegistryError> {
    KERNELS
        .iter()
        .find(|k| k.name == name)
        .ok_or_else(|| RegistryError::UnknownKernel {
            name: name.to_string(),
            known: KERNELS
                .iter()
                .map(|k| k.name)
                .collect::<Vec<_>>()
                .join(", "),
        })
}

/// The PTX of kernel `name` for `target`: [`find`] then [`Registered::ptx`].
pub fn ptx(name: &str, target: Target) -> Result<String, RegistryError> {
    find(name)?.ptx(target)
}

/// The PTX of kernel `name` for `target` with the configuration `config`: [`find`] then
/// [`Registered::ptx_of`].
pub fn ptx_of(name: &str, target: Target, config: Option<&str>) -> Result<String, RegistryError> {
    find(name)?.ptx_of(target, config)
}

/// The PTX of the kernel registered as `name` for `target`, configured as `config`, in the form
/// spelled `form` ([`Registered::form_ptx_of`]).
///
/// ```
/// use dsl_core::ir::Target;
/// let ptx = kernels::registry::form_ptx_of(
///     "hopper_ws_bf16",
///     Target::Sm90a,
///     "128x192x64s4_n",
///     "fkk_bcol_gelu_tanh_bf16",
/// )
/// .unwrap();
/// assert!(ptx.contains(".entry hopper_ws_bf16_128x192x64s4_n_fkk_bcol_gelu_tanh_bf16("));
/// assert!(ptx.contains("tanh.approx.f32"));
/// ```
pub fn form_ptx_of(
    name: &str,
    target: Target,
    config: &str,
    form: &str,
) -> Result<String, RegistryError> {
    find(name)?.form_ptx_of(target, config, form)
}

fn names(targets: &[Target]) -> String {
    targets
        .iter()
        .map(|t| t.name())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Why a registered kernel's PTX could not be produced.
#[derive(Debug, Error)]
pub enum RegistryError {
    /// No kernel has this name.
    #[error("unknown kernel `{name}`; registered kernels: {known}")]
    UnknownKernel {
        /// The name asked for.
        name: String,
        /// The registered names, comma-separated.
        known: String,
    },
    /// The kernel is not published for this target.
    #[error("kernel `{kernel}` does not support {target}; it supports: {supported}")]
    UnsupportedTarget {
        /// The kernel.
        kernel: &'static str,
        /// The target asked for.
        target: Target,
        /// Its targets, comma-separated.
        supported: String,
    },
    /// `--config` for a kernel that has no configurations.
    #[error("kernel `{kernel}` takes no configuration; these do: {configurable}")]
    NotConfigurable {
        /// The kernel.
        kernel: &'static str,
        /// The kernels that take one, comma-separated.
        configurable: String,
    },
    /// The configuration's spelling was refused.
    #[error("kernel `{kernel}`: {message}")]
    BadConfig {
        /// The kernel.
        kernel: &'static str,
        /// Why, as the configuration's parser says it.
        message: String,
    },
    /// `--form` for a kernel generated in no forms.
    #[error("kernel `{kernel}` is generated in no forms; these are: {with_forms}")]
    NoForms {
        /// The kernel.
        kernel: &'static str,
        /// The kernels generated in forms, comma-separated.
        with_forms: String,
    },
    /// The form's spelling could not be read.
    #[error("kernel `{kernel}`: {source}")]
    BadForm {
        /// The kernel.
        kernel: &'static str,
        /// What is wrong with the spelling.
        source: FormSpellingError,
    },
    /// Generating the kernel failed (a bug in the kernel or its default configuration).
    #[error("generating kernel `{kernel}` failed: {source}")]
    Build {
        /// The kernel.
        kernel: &'static str,
        /// The builder's error.
        source: BuildError,
    },
    /// Emitting PTX failed (a bug in the kernel's target list or in codegen).
    #[error("emitting kernel `{kernel}` for {target} failed: {source}")]
    Codegen {
        /// The kernel.
        kernel: &'static str,
        /// The target.
        target: Target,
        /// The codegen error.
        source: CodegenError,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_name_the_entry() {
        for (i, k) in KERNELS.iter().enumerate() {
            assert!(
                KERNELS[..i].iter().all(|o| o.name != k.name),
                "{} twice",
                k.name
            );
            for &t in k.targets {
                let kernel = (k.build)(t).unwrap_or_else(|e| panic!("{}: {e}", k.name));
                assert_eq!(kernel.name, k.name);
            }
        }
    }

    /// The declared targets are exactly those the kernel's ops allow, and each emits.
    #[test]
    fn declared_targets_match_the_ops() {
        for k in KERNELS {
            for t in Target::ALL {
                let kernel = (k.build)(t).unwrap_or_else(|e| panic!("{}: {e}", k.name));
                assert_eq!(
                    k.supports(t),
                    kernel.requires().allows(t),
                    "{} on {t}",
                    k.name
                );
                let emitted = k.ptx(t);
                assert_eq!(
                    emitted.is_ok(),
                    k.supports(t),
                    "{} on {t}: {emitted:?}",
                    k.name
                );
            }
        }
    }

    /// A configurable kernel prints the configured kernel's PTX under its own entry name; a
    /// bad spelling and a kernel without configurations are refused with a sentence.
    #[test]
    fn configurations_reach_the_ptx() {
        let ptx = ptx_of("hopper_ws_bf16", Target::Sm90a, Some("64x64x128s6_t")).unwrap();
        assert!(
            ptx.contains(".entry hopper_ws_bf16_64x64x128s6_t("),
            "no entry"
        );
        assert!(ptx.contains("m64n64k16.f32.bf16.bf16"));
        let e = ptx_of("hopper_ws_f16", Target::Sm90a, Some("96x64x64s4"))
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("kernel `hopper_ws_f16`: `96x64x64s4` is not a hopper_ws"),
            "{e}"
        );
        let e = ptx_of("vector_add", Target::Sm80, Some("x"))
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "kernel `vector_add` takes no configuration; these do: hopper_ws_f16, hopper_ws_bf16, \
             blackwell_ws_f16, blackwell_ws_bf16"
        );
    }

    /// The Blackwell program's steps are listed for sm_100a, and each is a configuration its
    /// entries print under the step's name; other targets are refused.
    #[test]
    fn the_blackwell_steps_are_listed_and_print() {
        for name in ["blackwell_ws_f16", "blackwell_ws_bf16"] {
            let k = find(name).unwrap();
            assert_eq!(
                k.list_line(),
                format!("{name} sm_100a (configurations: step7, step8, step9)")
            );
            for step in blackwell::Step::ALL {
                assert!(STEPS.contains(&step.name()));
                let ptx = k.ptx_of(Target::Sm100a, Some(step.name())).unwrap();
                assert!(
                    ptx.contains(&format!(".entry {name}_{}(", step.name())),
                    "{name} {step:?}"
                );
            }
            let e = k
                .ptx_of(Target::Sm90a, Some("step8"))
                .unwrap_err()
                .to_string();
            assert_eq!(
                e,
                format!("kernel `{name}` does not support sm_90a; it supports: sm_100a")
            );
        }
        // The default is step 8, under the registry's name.
        let ptx = ptx("blackwell_ws_bf16", Target::Sm100a).unwrap();
        assert!(ptx.contains(".entry blackwell_ws_bf16("));
        assert!(ptx.contains("tcgen05.mma.cta_group::2.kind::f16"));
        // Parts spell the same kernel as the step they make.
        let by_parts = ptx_of("blackwell_ws_f16", Target::Sm100a, Some("d4_b2_c2_e64")).unwrap();
        let by_step = ptx_of("blackwell_ws_f16", Target::Sm100a, Some("step9")).unwrap();
        assert_eq!(by_parts, by_step);
        let e = ptx_of("blackwell_ws_f16", Target::Sm100a, Some("step10"))
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "kernel `blackwell_ws_f16`: `step10` is not a blackwell_ws configuration: unknown \
             part `step10` (it takes step7, step8, step9, dD, nN, bB, cC, eE)"
        );
        // Kernels without named configurations list their targets only.
        assert_eq!(
            find("hopper_ws_f16").unwrap().list_line(),
            "hopper_ws_f16 sm_90a"
        );
    }

    #[test]
    fn errors_name_the_choices() {
        let e = find("nope").unwrap_err().to_string();
        assert!(e.contains("unknown kernel `nope`"), "{e}");
        assert!(
            e.contains("vector_add") && e.contains("tma_round_trip"),
            "{e}"
        );
        let e = ptx("tma_round_trip", Target::Sm80).unwrap_err().to_string();
        assert_eq!(
            e,
            "kernel `tma_round_trip` does not support sm_80; it supports: sm_90a, sm_100a"
        );
    }
}
