//! The kernels `rute ptx` knows: each with its name, the targets it supports and a function that
//! generates it with its default configuration.

use codegen_ptx::{emit, CodegenError};
use dsl_core::ir::{Kernel, Target};
use dsl_core::kernel::BuildError;
use thiserror::Error;

use crate::gemm::GemmDtype;
use crate::{examples, gemm, hopper, multistage};

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
}

impl Registered {
    /// Whether the kernel is published for `target`.
    pub fn supports(&self, target: Target) -> bool {
        self.targets.contains(&target)
    }

    /// Its PTX for `target`.
    ///
    /// Errors: a target the kernel is not published for, a generation error, a codegen error.
    pub fn ptx(&self, target: Target) -> Result<String, RegistryError> {
        if !self.supports(target) {
            return Err(RegistryError::UnsupportedTarget {
                kernel: self.name,
                target,
                supported: names(self.targets),
            });
        }
        let kernel = (self.build)(target).map_err(|source| RegistryError::Build {
            kernel: self.name,
            source,
        })?;
        emit(&kernel, target).map_err(|source| RegistryError::Codegen {
            kernel: self.name,
            target,
            source,
        })
    }
}

/// Every registered kernel, in the order `rute ptx --list` prints them.
pub const KERNELS: &[Registered] = &[
    Registered {
        name: "vector_add",
        targets: examples::vector_add::TARGETS,
        build: |_| examples::vector_add::default_kernel(),
    },
    Registered {
        name: "transpose",
        targets: examples::transpose::TARGETS,
        build: |_| examples::transpose::default_kernel(),
    },
    Registered {
        name: "reduce_sum",
        targets: examples::reduce_sum::TARGETS,
        build: |_| examples::reduce_sum::default_kernel(),
    },
    Registered {
        name: "async_copy",
        targets: examples::async_copy::TARGETS,
        build: |_| examples::async_copy::default_kernel(),
    },
    Registered {
        name: "tma_round_trip",
        targets: examples::tma_round_trip::TARGETS,
        build: |_| examples::tma_round_trip::default_kernel(),
    },
    Registered {
        name: "tma_pipeline",
        targets: examples::tma_pipeline::TARGETS,
        build: |_| examples::tma_pipeline::default_kernel(),
    },
    Registered {
        name: "wgmma_tile",
        targets: examples::wgmma_tile::TARGETS,
        build: |_| examples::wgmma_tile::default_kernel(),
    },
    Registered {
        name: "gemm_naive",
        targets: gemm::naive::TARGETS,
        build: |_| gemm::naive::default_kernel(),
    },
    Registered {
        name: "hopper_ws_f16",
        targets: hopper::TARGETS,
        build: |_| hopper::default_kernel(GemmDtype::F16),
    },
    Registered {
        name: "hopper_ws_bf16",
        targets: hopper::TARGETS,
        build: |_| hopper::default_kernel(GemmDtype::Bf16),
    },
    Registered {
        name: "multistage_f16",
        targets: multistage::TARGETS,
        build: |_| multistage::default_f16(),
    },
    Registered {
        name: "multistage_f16_f32acc",
        targets: multistage::TARGETS,
        build: |_| multistage::default_f16_f32acc(),
    },
    Registered {
        name: "multistage_bf16",
        targets: multistage::TARGETS,
        build: |_| multistage::default_bf16(),
    },
    Registered {
        name: "multistage_f16_tuned",
        targets: multistage::TARGETS,
        build: multistage::default_f16_tuned,
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
