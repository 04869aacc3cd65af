//! `rute ptx`: print a registered kernel's PTX, or list the registered kernels.
//!
//! ```text
//! rute ptx NAME --target sm_80|sm_90a|sm_100a [--config SPEC]
//! rute ptx --list
//! ```

use std::io::{BufRead, Write};

use dsl_core::ir::Target;
use kernels::registry;

use super::args::{self, Flag};
use super::{report, USAGE_ERROR};

const HELP: &str = "usage: rute ptx NAME --target sm_80|sm_90a|sm_100a [--config SPEC]
       rute ptx --list

Prints the PTX of the registered kernel NAME for the target, or (--list) one line per
registered kernel: its name, then each target it supports. --config SPEC generates a kernel
that has configurations (hopper_ws_f16, hopper_ws_bf16) for the one spelled as
`rute gemm --kernel hopper_ws --config` takes it, e.g. 64x64x128s6_t; the entry is then named
after it.";

/// Runs `rute ptx` with `args`; returns the exit status.
pub fn run(args: &[String], _: &mut dyn BufRead, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    match parse(args) {
        Ok(Request::Help) => {
            let _ = writeln!(out, "{HELP}");
            0
        }
        Ok(Request::List) => {
            for k in registry::KERNELS {
                let targets: Vec<&str> = k.targets.iter().map(|t| t.name()).collect();
                let _ = writeln!(out, "{} {}", k.name, targets.join(" "));
            }
            0
        }
        Ok(Request::Ptx {
            name,
            target,
            config,
        }) => match registry::ptx_of(&name, target, config.as_deref()) {
            Ok(ptx) => {
                let _ = out.write_all(ptx.as_bytes());
                0
            }
            Err(e @ registry::RegistryError::UnknownKernel { .. })
            | Err(e @ registry::RegistryError::UnsupportedTarget { .. })
            | Err(e @ registry::RegistryError::NotConfigurable { .. })
            | Err(e @ registry::RegistryError::BadConfig { .. }) => {
                report(err, &e.to_string());
                USAGE_ERROR
            }
            Err(e) => {
                report(err, &e.to_string());
                1
            }
        },
        Err(message) => {
            report(err, &message);
            let _ = writeln!(err, "\n{HELP}");
            USAGE_ERROR
        }
    }
}

enum Request {
    Help,
    List,
    Ptx {
        name: String,
        target: Target,
        config: Option<String>,
    },
}

const FLAGS: &[Flag] = &[
    Flag::switch("--list"),
    Flag::value("--target", "a target, like sm_90a"),
    Flag::value("--config", "a configuration, like 128x256x64s3"),
];

fn parse(args: &[String]) -> Result<Request, String> {
    let a = args::read(args, FLAGS)?;
    if a.help {
        return Ok(Request::Help);
    }
    if let Some(option) = a.positional.iter().find(|p| p.starts_with('-')) {
        return Err(format!("unknown option `{option}`"));
    }
    let target = a.value("--target");
    let name = match &a.positional[..] {
        [] => None,
        [name] => Some(name.clone()),
        [first, second, ..] => {
            return Err(format!(
                "one kernel at a time: got `{first}` and `{second}`"
            ))
        }
    };
    let config = a.value("--config").map(str::to_string);
    if a.has("--list") {
        return match (&name, target, &config) {
            (None, None, None) => Ok(Request::List),
            _ => Err("--list takes no kernel name, target or configuration".into()),
        };
    }
    let Some(name) = name else {
        return Err(format!(
            "which kernel? registered kernels: {}",
            kernel_names()
        ));
    };
    // An unknown name is reported before a missing target: it is the bigger mistake.
    registry::find(&name).map_err(|e| e.to_string())?;
    let Some(target) = target else {
        return Err(format!("--target is required: {}", target_names()));
    };
    let target = target.parse::<Target>()?;
    Ok(Request::Ptx {
        name,
        target,
        config,
    })
}

fn kernel_names() -> String {
    let names: Vec<&str> = registry::KERNELS.iter().map(|k| k.name).collect();
    names.join(", ")
}

fn target_names() -> String {
    let names: Vec<&str> = Target::ALL.iter().map(|t| t.name()).collect();
    names.join(", ")
}
