//! The programs of this build ([`PROGRAMS`]), in the order `auto` tries them, and what needs the
//! list: a kernel by name ([`KernelChoice::named`]), and a `--config` parsed for the programs
//! it may go to ([`Config::parse`]).
//!
//! The seam ([`super::program`]) does not name its programs; this list does, above them.

use std::str::FromStr;

use thiserror::Error;

use super::program::{AnyProgram, Config, KernelChoice, UnknownKernel};

/// The programs of this build, in the order [`KernelChoice::Auto`] tries them (fastest first);
/// `rute gemm --help` lists them in this order.
pub static PROGRAMS: &[&dyn AnyProgram] = &[
    &crate::hopper::HopperWs,
    &crate::blackwell::BlackwellWs,
    &crate::multistage::Multistage,
    &super::naive::Naive,
    &super::strided::Strided,
];

/// The program of [`PROGRAMS`] called `name`.
pub fn program(name: &str) -> Option<&'static dyn AnyProgram> {
    PROGRAMS.iter().copied().find(|p| p.name() == name)
}

impl KernelChoice {
    /// `auto` or the program of [`PROGRAMS`] called `name`.
    ///
    /// Errors: [`UnknownKernel`], naming the choices.
    pub fn named(name: &str) -> Result<KernelChoice, UnknownKernel> {
        if name == "auto" {
            return Ok(KernelChoice::Auto);
        }
        program(name)
            .map(KernelChoice::Program)
            .ok_or_else(|| UnknownKernel {
                name: name.to_string(),
                known: KernelChoice::names().join(", "),
            })
    }

    /// Every name [`KernelChoice::named`] takes: `auto`, then the programs in [`PROGRAMS`]'s
    /// order.
    pub fn names() -> Vec<&'static str> {
        std::iter::once("auto")
            .chain(PROGRAMS.iter().map(|p| p.name()))
            .collect()
    }
}

impl FromStr for KernelChoice {
    type Err = UnknownKernel;

    /// [`KernelChoice::named`].
    fn from_str(name: &str) -> Result<KernelChoice, UnknownKernel> {
        KernelChoice::named(name)
    }
}

/// A `--config` spelling that the kernel asked for does not take (for `auto`, that no program
/// takes), with each program's reason.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ConfigError {
    /// The program asked for refused it.
    #[error("the {kernel} kernel: {reason}")]
    Refused {
        /// The program.
        kernel: &'static str,
        /// Why, as a clause.
        reason: String,
    },
    /// `auto`, and no program takes it.
    #[error("`{spelling}` is no kernel's configuration: {reasons}")]
    NoProgram {
        /// The spelling.
        spelling: String,
        /// Each program's reason ("the naive kernel: ..."), separated by "; ".
        reasons: String,
    },
}

impl Config {
    /// `spelling` parsed for `kernel`: that program's schedule, or for `auto` each program's
    /// of [`PROGRAMS`] (at least one of which takes it). The one parse of a `--config`.
    ///
    /// ```
    /// use kernels::gemm::{Config, KernelChoice};
    /// let c = Config::parse(KernelChoice::Auto, "128x256x64s3").unwrap();
    /// assert_eq!(c.schedule_for("hopper_ws").unwrap().to_string(), "128x256x64s3");
    /// let e = Config::parse(KernelChoice::named("naive").unwrap(), "tuned").unwrap_err();
    /// assert_eq!(e.to_string(), "the naive kernel: it takes no --config, and `tuned` was given");
    /// ```
    pub fn parse(kernel: KernelChoice, spelling: &str) -> Result<Config, ConfigError> {
        match kernel {
            KernelChoice::Program(p) => {
                Config::parse_with(&[p], spelling).map_err(|mut why| ConfigError::Refused {
                    kernel: p.name(),
                    reason: why.pop().map(|(_, r)| r).unwrap_or_default(),
                })
            }
            KernelChoice::Auto => {
                Config::parse_with(PROGRAMS, spelling).map_err(|why| ConfigError::NoProgram {
                    spelling: spelling.to_string(),
                    reasons: why
                        .iter()
                        .map(|(name, r)| format!("the {name} kernel: {r}"))
                        .collect::<Vec<_>>()
                        .join("; "),
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn programs_have_unique_names_and_are_found_by_them() {
        let names = KernelChoice::names();
        assert_eq!(
            names,
            [
                "auto",
                "hopper_ws",
                "blackwell_ws",
                "multistage",
                "naive",
                "strided"
            ]
        );
        for (i, p) in PROGRAMS.iter().enumerate() {
            assert!(!names[..=i].contains(&p.name()), "{} twice", p.name());
            assert_eq!(KernelChoice::named(p.name()), Ok(KernelChoice::Program(*p)));
            assert!(!p.summary().contains('\n') && !p.config_syntax().is_empty());
        }
        assert_eq!("auto".parse(), Ok(KernelChoice::Auto));
        let e = KernelChoice::named("fast").unwrap_err();
        assert_eq!(
            e.to_string(),
            "unknown kernel `fast`; this build has auto, hopper_ws, blackwell_ws, multistage, naive, strided"
        );
        assert_eq!(
            format!("{:?}", KernelChoice::named("naive").unwrap()),
            "Program(naive)"
        );
    }

    /// A spelling is parsed once per program it may go to; each program keeps its reason.
    #[test]
    fn a_config_is_parsed_once_for_each_program() {
        let c = Config::parse(KernelChoice::Auto, "tuned").unwrap();
        assert!(c.schedule_for("multistage").is_ok());
        let hopper = c.schedule_for("hopper_ws").unwrap_err();
        assert!(
            hopper.starts_with("`tuned` is not a hopper_ws configuration"),
            "{hopper}"
        );
        let e = Config::parse(KernelChoice::Auto, "fastest").unwrap_err();
        let e = e.to_string();
        assert!(
            e.starts_with("`fastest` is no kernel's configuration: the hopper_ws kernel: ")
                && e.ends_with(
                    "the naive kernel: it takes no --config, and `fastest` was given; the \
                     strided kernel: it takes no --config, and `fastest` was given"
                ),
            "{e}"
        );
        let only = Config::parse(KernelChoice::named("multistage").unwrap(), "tuned").unwrap();
        let e = only.schedule_for("hopper_ws").unwrap_err();
        assert!(e.contains("was given for the multistage kernel"), "{e}");
    }
}
