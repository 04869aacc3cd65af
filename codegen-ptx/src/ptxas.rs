//! Assembling PTX with NVIDIA's `ptxas`, for tests: did it assemble, and what did it cost?
//!
//! The binary comes from the environment variable `RUTE_PTXAS` (its name is [`PTXAS_ENV`]; CI
//! points it at the `ptxas` of the `nvidia-cuda-nvcc` wheel). An unset or unusable variable is an error, never a silent
//! skip: a test that needs ptxas fails without it.

use dsl_core::ir::Target;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use thiserror::Error;

/// The environment variable holding the path of the `ptxas` binary.
pub const PTXAS_ENV: &str = "RUTE_PTXAS";

/// What `ptxas -v` reported for the (single) entry of a module.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PtxasReport {
    /// Registers per thread.
    pub registers: u32,
    /// Named barriers used.
    pub barriers: u32,
    /// Static shared memory in bytes.
    pub shared_bytes: u64,
    /// Bytes stored to local memory because registers ran out.
    pub spill_store_bytes: u64,
    /// Bytes loaded back from spills.
    pub spill_load_bytes: u64,
    /// Per-thread stack frame in bytes.
    pub stack_frame_bytes: u64,
    /// Constant bank 0 bytes (kernel parameters live there).
    pub cmem_bytes: u64,
    /// Warnings `ptxas` printed (each line without its `ptxas warning :` prefix).
    pub warnings: Vec<String>,
    /// The assembled cubin.
    pub cubin: Vec<u8>,
    /// Everything `ptxas` printed, for people.
    pub log: String,
}

/// Why assembling failed.
#[derive(Debug, Error)]
pub enum PtxasError {
    /// The environment variable is not set.
    #[error("the environment variable {PTXAS_ENV} is not set; point it at a ptxas binary (pip install nvidia-cuda-nvcc ships one)")]
    NotConfigured,
    /// The variable names something that cannot be run.
    #[error("{PTXAS_ENV} = `{}` is not an executable ptxas: {reason}", path.display())]
    NotExecutable {
        /// The path from the variable.
        path: PathBuf,
        /// What went wrong.
        reason: String,
    },
    /// Temporary files could not be written or read.
    #[error("ptxas temporary file {}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// `ptxas` rejected the PTX.
    #[error("ptxas rejected the PTX for {target}:\n{log}")]
    Rejected {
        /// The target assembled for.
        target: Target,
        /// ptxas's messages.
        log: String,
    },
    /// `ptxas` succeeded but its `-v` output lacked a line this module relies on.
    #[error("could not read `{what}` from ptxas -v output:\n{log}")]
    Unparsed {
        /// The missing item.
        what: &'static str,
        /// ptxas's output.
        log: String,
    },
}

/// The ptxas binary from [`PTXAS_ENV`], checked to be an executable file.
pub fn ptxas_path() -> Result<PathBuf, PtxasError> {
    let raw = std::env::var_os(PTXAS_ENV).ok_or(PtxasError::NotConfigured)?;
    let path = PathBuf::from(raw);
    let meta = std::fs::metadata(&path).map_err(|e| PtxasError::NotExecutable {
        path: path.clone(),
        reason: e.to_string(),
    })?;
    if !meta.is_file() {
        return Err(PtxasError::NotExecutable {
            path,
            reason: "not a file".into(),
        });
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if meta.permissions().mode() & 0o111 == 0 {
            return Err(PtxasError::NotExecutable {
                path,
                reason: "no execute permission".into(),
            });
        }
    }
    Ok(path)
}

/// Assembles `ptx` with `ptxas -arch=<target> -v` and parses the report.
///
/// On success the report's register, shared-memory and spill counts are those of the module's
/// entry (the first, for a module with several). On failure the error carries ptxas's messages.
pub fn assemble(ptx: &str, target: Target) -> Result<PtxasReport, PtxasError> {
    let exe = ptxas_path()?;
    let tmp = TempPair::new();
    std::fs::write(&tmp.ptx, ptx).map_err(|e| PtxasError::Io {
        path: tmp.ptx.clone(),
        source: e,
    })?;
    let out = Command::new(&exe)
        .arg(format!("-arch={}", target.name()))
        .arg("-v")
        .arg(&tmp.ptx)
        .arg("-o")
        .arg(&tmp.cubin)
        .output()
        .map_err(|e| PtxasError::NotExecutable {
            path: exe.clone(),
            reason: e.to_string(),
        })?;
    let mut log = String::from_utf8_lossy(&out.stdout).into_owned();
    log.push_str(&String::from_utf8_lossy(&out.stderr));
    if !out.status.success() {
        return Err(PtxasError::Rejected { target, log });
    }
    let cubin = std::fs::read(&tmp.cubin).map_err(|e| PtxasError::Io {
        path: tmp.cubin.clone(),
        source: e,
    })?;
    let mut report = parse_report(&log)?;
    report.cubin = cubin;
    Ok(report)
}

/// Parses the `-v` lines of one entry:
/// `N bytes stack frame, N bytes spill stores, N bytes spill loads` and
/// `Used N registers, used N barriers, N bytes smem, N bytes cmem[0]`.
pub fn parse_report(log: &str) -> Result<PtxasReport, PtxasError> {
    let mut r = PtxasReport {
        log: log.to_string(),
        ..PtxasReport::default()
    };
    let (mut saw_frame, mut saw_used) = (false, false);
    for line in log.lines() {
        let line = line.trim();
        if let Some(w) = line.strip_prefix("ptxas warning") {
            r.warnings
                .push(w.trim_start_matches([' ', ':']).trim().to_string());
        }
        if line.contains("bytes stack frame") && !saw_frame {
            saw_frame = true;
            for part in line.split(',') {
                let n = leading_number(part);
                if part.contains("stack frame") {
                    r.stack_frame_bytes = n;
                } else if part.contains("spill stores") {
                    r.spill_store_bytes = n;
                } else if part.contains("spill loads") {
                    r.spill_load_bytes = n;
                }
            }
        }
        if let Some(rest) = line.split("Used ").nth(1).filter(|_| !saw_used) {
            saw_used = true;
            for part in rest.split(',') {
                let part = part.trim();
                let n = leading_number(part.trim_start_matches("used "));
                if part.contains("registers") {
                    r.registers = n as u32;
                } else if part.contains("barriers") {
                    r.barriers = n as u32;
                } else if part.contains("smem") {
                    r.shared_bytes = n;
                } else if part.contains("cmem[0]") {
                    r.cmem_bytes = n;
                }
            }
        }
    }
    if !saw_frame {
        return Err(PtxasError::Unparsed {
            what: "stack frame / spill",
            log: log.to_string(),
        });
    }
    if !saw_used {
        return Err(PtxasError::Unparsed {
            what: "Used N registers",
            log: log.to_string(),
        });
    }
    Ok(r)
}

fn leading_number(s: &str) -> u64 {
    let s = s.trim();
    let end = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    s[..end].parse().unwrap_or(0)
}

/// A PTX input and cubin output path in the temp directory, unique per process and call,
/// removed on drop.
struct TempPair {
    ptx: PathBuf,
    cubin: PathBuf,
}

impl TempPair {
    fn new() -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let stem = format!("rute-ptxas-{}-{n}", std::process::id());
        let dir: &Path = &std::env::temp_dir();
        TempPair {
            ptx: dir.join(format!("{stem}.ptx")),
            cubin: dir.join(format!("{stem}.cubin")),
        }
    }
}

impl Drop for TempPair {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.ptx);
        let _ = std::fs::remove_file(&self.cubin);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_ptxas_v_output() {
        // Verbatim output of ptxas 13.5 -v for a small sm_100a kernel.
        let log = "ptxas info    : 0 bytes gmem\n\
ptxas info    : Compiling entry function 'k' for 'sm_100a'\n\
ptxas info    : Function properties for k\n    \
24 bytes stack frame, 8 bytes spill stores, 12 bytes spill loads\n\
ptxas info    : Used 6 registers, used 1 barriers, 16 bytes smem, 904 bytes cmem[0]\n\
ptxas warning : Unused variable\n";
        let r = parse_report(log).unwrap();
        assert_eq!(r.registers, 6);
        assert_eq!(r.barriers, 1);
        assert_eq!(r.shared_bytes, 16);
        assert_eq!(r.cmem_bytes, 904);
        assert_eq!(r.stack_frame_bytes, 24);
        assert_eq!(r.spill_store_bytes, 8);
        assert_eq!(r.spill_load_bytes, 12);
        assert_eq!(r.warnings, vec!["Unused variable".to_string()]);
        assert!(parse_report("nothing here").is_err());
    }
}
