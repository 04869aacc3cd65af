//! `rute ptx`: print a registered kernel's PTX, or list the registered kernels.
//!
//! ```text
//! rute ptx NAME --target sm_80|sm_90a|sm_100a [--config SPEC [--form FORM]]
//! rute ptx --list
//! ```

use dsl_core::ir::Target;
use kernels::registry::{self, RegistryError};

use super::args::{named, Usage};
use super::streams::{report, Streams, FAILURE, SUCCESS};

/// print a registered kernel's PTX for a target, or --list the kernels
///
/// Prints the PTX of the registered kernel NAME for the target, or (--list) one line per
/// registered kernel: its name, then each target it supports (and the configurations it
/// names). With --config and --form, the kernel of that configuration in that form (operand
/// layouts, fused epilogue, D's type), as a profiler names it: `hopper_ws_bf16_128x192x64s4_n
/// _fkk_bcol_gelu_tanh_bf16` is `rute ptx hopper_ws_bf16 --target sm_90a --config
/// 128x192x64s4_n --form fkk_bcol_gelu_tanh_bf16`.
#[derive(clap::Args, Debug)]
#[command(
    verbatim_doc_comment,
    override_usage = "rute ptx NAME --target sm_80|sm_90a|sm_100a [--config SPEC [--form FORM]]\n       rute ptx --list"
)]
pub struct Args {
    /// list the registered kernels, each with the targets it supports
    #[arg(long)]
    list: bool,
    /// the target to generate PTX for
    #[arg(long, value_parser = named(&Target::ALL, Target::name))]
    target: Option<Target>,
    /// generate a kernel that has configurations (hopper_ws_*, blackwell_ws_*) for the one
    /// spelled as `rute gemm --kernel hopper_ws|blackwell_ws --config` takes it, e.g.
    /// 64x64x128s6_t or step8; the entry is then named after it
    #[arg(long, value_name = "SPEC", verbatim_doc_comment)]
    config: Option<String>,
    /// with --config, the kernel in a form (hopper_ws_*): A's and B's majors, the fused
    /// epilogue and D's type as a form kernel's name spells them, e.g. fkk_plain_f32,
    /// fkk_bcol_gelu_tanh_bf16, fkmn_glu_silu_f16, fkk_src_brow_silu_res_bf16 (the epilogue:
    /// plain, or src, brow or bcol, an activation (id, relu, gelu_tanh, gelu_erf, silu) or
    /// glu_ and one, then res)
    #[arg(long, value_name = "FORM", verbatim_doc_comment)]
    form: Option<String>,
    /// the registered kernel (`rute ptx --list` names them)
    #[arg(value_name = "NAME")]
    names: Vec<String>,
}

/// What the arguments ask for.
enum Request {
    List,
    Ptx {
        name: String,
        target: Target,
        config: Option<String>,
    },
    Form {
        name: String,
        target: Target,
        config: String,
        form: String,
    },
}

impl Args {
    /// The request, or the sentence saying what is missing or extra.
    fn request(self) -> Result<Request, Usage> {
        let name = match &self.names[..] {
            [] => None,
            [name] => Some(name.clone()),
            [first, second, ..] => {
                return Err(Usage(format!(
                    "one kernel at a time: got `{first}` and `{second}`"
                )))
            }
        };
        if self.list {
            return match (&name, self.target, &self.config, &self.form) {
                (None, None, None, None) => Ok(Request::List),
                _ => Err(Usage(
                    "--list takes no kernel name, target, configuration or form".into(),
                )),
            };
        }
        let Some(name) = name else {
            return Err(Usage(format!(
                "which kernel? registered kernels: {}",
                kernel_names()
            )));
        };
        // An unknown name is reported before a missing target: it is the bigger mistake.
        registry::find(&name).map_err(|e| Usage(e.to_string()))?;
        let Some(target) = self.target else {
            return Err(Usage(format!("--target is required: {}", target_names())));
        };
        match (self.config, self.form) {
            (config, None) => Ok(Request::Ptx {
                name,
                target,
                config,
            }),
            (Some(config), Some(form)) => Ok(Request::Form {
                name,
                target,
                config,
                form,
            }),
            (None, Some(_)) => Err(Usage(
                "--form takes a configuration too: --config SPEC --form FORM".into(),
            )),
        }
    }
}

/// Runs `rute ptx`; returns the exit status.
pub fn run(args: Args, io: &mut Streams) -> Result<i32, Usage> {
    let ptx = match args.request()? {
        Request::List => {
            for k in registry::KERNELS {
                let _ = writeln!(io.out, "{}", k.list_line());
            }
            return Ok(SUCCESS);
        }
        Request::Ptx {
            name,
            target,
            config,
        } => registry::ptx_of(&name, target, config.as_deref()),
        Request::Form {
            name,
            target,
            config,
            form,
        } => registry::form_ptx_of(&name, target, &config, &form),
    };
    match ptx {
        Ok(ptx) => {
            let _ = io.out.write_all(ptx.as_bytes());
            Ok(SUCCESS)
        }
        // What the arguments named does not exist: a usage error.
        Err(
            e @ (RegistryError::UnknownKernel { .. }
            | RegistryError::UnsupportedTarget { .. }
            | RegistryError::NotConfigurable { .. }
            | RegistryError::BadConfig { .. }
            | RegistryError::NoForms { .. }
            | RegistryError::BadForm { .. }),
        ) => Err(Usage(e.to_string())),
        Err(e) => {
            report(io.err, &e.to_string());
            Ok(FAILURE)
        }
    }
}

fn kernel_names() -> String {
    let names: Vec<&str> = registry::KERNELS.iter().map(|k| k.name).collect();
    names.join(", ")
}

fn target_names() -> String {
    let names: Vec<&str> = Target::ALL.iter().map(|t| t.name()).collect();
    names.join(", ")
}
