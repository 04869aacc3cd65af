//! Tuning records: the schedule `rute tune` measured fastest for a device, an element type and a
//! shape class, kept in a text file ([`TuningFile`]) that the runtime reads at start and prefers
//! to a program's default ([`Tuned::check`]).
//!
//! The file is one record per line, fields separated by ` | `, `#` starting a comment:
//!
//! ```text
//! # device | dtype | shape class | program | schedule | tuned on | its time | the default's
//! NVIDIA H200 | bf16 | m256 n8192 k8192 | hopper_ws | 128x128x64s6_n | 200x6144x8192 | 41.2 us | 47.9 us
//! ```
//!
//! A shape class holds M, N and K each rounded up to a power of two ([`ShapeClass`]): a record
//! made at 200 x 6144 x 8192 serves 129 to 256 rows, 4097 to 8192 columns and 4097 to 8192 of K.
//! The file is `RUTE_TUNING_FILE`, else `rute/tuning.txt` under `XDG_CACHE_HOME` or
//! `~/.cache` ([`TuningFile::default_path`]).
//!
//! ```
//! use kernels::gemm::{GemmDtype, ShapeClass, TuningFile, TuningRecord};
//! let mut file = TuningFile::default();
//! file.record(TuningRecord {
//!     device: "NVIDIA H200".into(),
//!     dtype: GemmDtype::Bf16,
//!     class: ShapeClass::of(200, 6144, 8192),
//!     program: "hopper_ws".into(),
//!     schedule: "128x128x64s6_n".into(),
//!     shape: (200, 6144, 8192),
//!     micros: 41.2,
//!     default_micros: Some(47.9),
//! });
//! let text = file.to_text();
//! assert_eq!(TuningFile::parse(&text).unwrap(), file);
//! let r = file.lookup("NVIDIA H200", GemmDtype::Bf16, (256, 8192, 4097)).unwrap();
//! assert_eq!(r.schedule, "128x128x64s6_n");
//! assert!(file.lookup("NVIDIA H200", GemmDtype::Bf16, (257, 8192, 8192)).is_none());
//! ```

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use thiserror::Error;

use super::check::{check, BufferLens, InputError};
use super::device::Device;
use super::program::{Config, KernelChoice, Plan, Problem};
use super::GemmDtype;

/// The class of a shape that a record serves: M, N and K each rounded up to a power of two.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ShapeClass {
    /// M rounded up to a power of two.
    pub m: u64,
    /// N rounded up to a power of two.
    pub n: u64,
    /// K rounded up to a power of two.
    pub k: u64,
}

impl ShapeClass {
    /// The class of `m x n x k`.
    pub fn of(m: usize, n: usize, k: usize) -> ShapeClass {
        let up = |v: usize| (v.max(1) as u64).next_power_of_two();
        ShapeClass {
            m: up(m),
            n: up(n),
            k: up(k),
        }
    }
}

impl fmt::Display for ShapeClass {
    /// `m256 n8192 k8192`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "m{} n{} k{}", self.m, self.n, self.k)
    }
}

impl FromStr for ShapeClass {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || {
            format!("`{s}` is not a shape class: write m{{M}} n{{N}} k{{K}}, each a power of two")
        };
        let words: Vec<&str> = s.split_whitespace().collect();
        let [m, n, k] = words[..] else {
            return Err(bad());
        };
        let power = |w: &str, letter: char| -> Result<u64, String> {
            let v: u64 = w
                .strip_prefix(letter)
                .and_then(|v| v.parse().ok())
                .ok_or_else(bad)?;
            if v.is_power_of_two() {
                Ok(v)
            } else {
                Err(bad())
            }
        };
        Ok(ShapeClass {
            m: power(m, 'm')?,
            n: power(n, 'n')?,
            k: power(k, 'k')?,
        })
    }
}

/// One record: the schedule measured fastest.
#[derive(Debug, Clone, PartialEq)]
pub struct TuningRecord {
    /// The device's name ([`Device::name`]).
    pub device: String,
    /// The element type.
    pub dtype: GemmDtype,
    /// The shapes it serves.
    pub class: ShapeClass,
    /// The program (`hopper_ws`).
    pub program: String,
    /// The schedule, in the program's spelling.
    pub schedule: String,
    /// The shape it was measured on.
    pub shape: (usize, usize, usize),
    /// Its time there, microseconds.
    pub micros: f64,
    /// The program's default's time there, microseconds, if it was timed.
    pub default_micros: Option<f64>,
}

/// Why a tuning file could not be read or written.
#[derive(Debug, Error)]
pub enum TuningError {
    /// A line is not a record.
    #[error("{file}:{line}: {why}")]
    Line {
        /// The file (or `text`).
        file: String,
        /// The line, from 1.
        line: usize,
        /// Why.
        why: String,
    },
    /// The file system refused.
    #[error("{path}: {source}")]
    Io {
        /// The path.
        path: String,
        /// The error.
        source: std::io::Error,
    },
    /// A record's field holds the separator or a line break.
    #[error(
        "a record's {field} `{value}` holds ` | ` or a line break, which the file separates by"
    )]
    Field {
        /// The field.
        field: &'static str,
        /// Its value.
        value: String,
    },
}

/// The records of a tuning file, one per (device, dtype, shape class).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TuningFile {
    records: Vec<TuningRecord>,
}

const HEADER: &str = "# rute tuning records (rute tune), one per device, element type and shape class\n\
                      # device | dtype | shape class | program | schedule | tuned on | its time | the default's\n";

impl TuningFile {
    /// The records, in the file's order.
    pub fn records(&self) -> &[TuningRecord] {
        &self.records
    }

    /// Adds `record`, replacing the one for its device, dtype and class.
    pub fn record(&mut self, record: TuningRecord) {
        let key = |r: &TuningRecord| (r.device.clone(), r.dtype, r.class);
        match self.records.iter_mut().find(|r| key(r) == key(&record)) {
            Some(r) => *r = record,
            None => self.records.push(record),
        }
    }

    /// The record for `device`, `dtype` and the class of `shape`.
    pub fn lookup(
        &self,
        device: &str,
        dtype: GemmDtype,
        (m, n, k): (usize, usize, usize),
    ) -> Option<&TuningRecord> {
        let class = ShapeClass::of(m, n, k);
        self.records
            .iter()
            .find(|r| r.device == device && r.dtype == dtype && r.class == class)
    }

    /// The file's text.
    pub fn to_text(&self) -> String {
        let mut out = HEADER.to_string();
        for r in &self.records {
            let (m, n, k) = r.shape;
            let default = r
                .default_micros
                .map_or("-".to_string(), |t| format!("{t} us"));
            out.push_str(&format!(
                "{} | {} | {} | {} | {} | {m}x{n}x{k} | {} us | {default}\n",
                r.device, r.dtype, r.class, r.program, r.schedule, r.micros
            ));
        }
        out
    }

    /// The records `text` holds (see the module's docs for the format).
    pub fn parse(text: &str) -> Result<TuningFile, TuningError> {
        TuningFile::parse_named(text, "text")
    }

    fn parse_named(text: &str, file: &str) -> Result<TuningFile, TuningError> {
        let mut out = TuningFile::default();
        for (i, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let r = parse_record(line).map_err(|why| TuningError::Line {
                file: file.to_string(),
                line: i + 1,
                why,
            })?;
            out.record(r);
        }
        Ok(out)
    }

    /// The records of the file at `path`: none if there is no file.
    pub fn load(path: &Path) -> Result<TuningFile, TuningError> {
        match std::fs::read_to_string(path) {
            Ok(text) => TuningFile::parse_named(&text, &path.display().to_string()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(TuningFile::default()),
            Err(source) => Err(TuningError::Io {
                path: path.display().to_string(),
                source,
            }),
        }
    }

    /// Writes the records to `path` (its directory made if missing), through a file beside it
    /// renamed over it, so that a reader never sees half a file.
    pub fn save(&self, path: &Path) -> Result<(), TuningError> {
        let io = |source| TuningError::Io {
            path: path.display().to_string(),
            source,
        };
        for r in &self.records {
            for (field, value) in [
                ("device", &r.device),
                ("program", &r.program),
                ("schedule", &r.schedule),
            ] {
                if value.contains(" | ")
                    || value.contains(['\n', '\r', '#'])
                    || value.trim() != value
                {
                    return Err(TuningError::Field {
                        field,
                        value: value.clone(),
                    });
                }
            }
        }
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        let tmp = path.with_extension(format!("tmp{}", std::process::id()));
        std::fs::write(&tmp, self.to_text()).map_err(io)?;
        std::fs::rename(&tmp, path).map_err(io)
    }

    /// Where records are kept: `RUTE_TUNING_FILE`, else `rute/tuning.txt` under
    /// `XDG_CACHE_HOME`, else under `~/.cache`; `None` without any of them.
    pub fn default_path() -> Option<PathBuf> {
        let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
        if let Some(p) = var("RUTE_TUNING_FILE") {
            return Some(PathBuf::from(p));
        }
        let cache = var("XDG_CACHE_HOME")
            .map(PathBuf::from)
            .or_else(|| var("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
        Some(cache.join("rute").join("tuning.txt"))
    }
}

/// One line's record, or why it is none.
fn parse_record(line: &str) -> Result<TuningRecord, String> {
    let fields: Vec<&str> = line.split(" | ").map(str::trim).collect();
    let [device, dtype, class, program, schedule, shape, micros, default] = fields[..] else {
        return Err(format!(
            "a record has 8 fields separated by ` | `, this line {}",
            fields.len()
        ));
    };
    let dtype = match dtype {
        "f16" => GemmDtype::F16,
        "bf16" => GemmDtype::Bf16,
        d => return Err(format!("the dtype is f16 or bf16, not `{d}`")),
    };
    let dims: Vec<usize> = shape
        .split('x')
        .map(|d| d.parse().ok().filter(|&d| d > 0))
        .collect::<Option<_>>()
        .ok_or_else(|| format!("the shape is MxNxK, not `{shape}`"))?;
    let [m, n, k] = dims[..] else {
        return Err(format!("the shape is MxNxK, not `{shape}`"));
    };
    let time = |t: &str| -> Result<f64, String> {
        t.strip_suffix(" us")
            .and_then(|v| v.trim().parse::<f64>().ok())
            .filter(|v| v.is_finite() && *v > 0.0)
            .ok_or_else(|| {
                format!("a time is a positive number of microseconds, `12.5 us`, not `{t}`")
            })
    };
    let class: ShapeClass = class.parse()?;
    if class != ShapeClass::of(m, n, k) {
        return Err(format!(
            "the shape {shape} is of class {}, not {class}",
            ShapeClass::of(m, n, k)
        ));
    }
    if device.is_empty() || program.is_empty() || schedule.is_empty() {
        return Err("the device, program and schedule are not empty".into());
    }
    Ok(TuningRecord {
        device: device.to_string(),
        dtype,
        class,
        program: program.to_string(),
        schedule: schedule.to_string(),
        shape: (m, n, k),
        micros: time(micros)?,
        default_micros: match default {
            "-" => None,
            t => Some(time(t)?),
        },
    })
}

/// A tuning file's records for the runtime: each parsed once, into its program's schedule
/// ([`Config`], marked as a record's), and what the runtime prefers ([`Tuned::check`]).
#[derive(Debug, Clone, Default)]
pub struct Tuned {
    file: String,
    records: Vec<(TuningRecord, Config)>,
    skipped: Vec<String>,
}

impl Tuned {
    /// The records of `file` (read from `path`, named in descriptions), each parsed by its
    /// program; a record whose program is not in this build or whose schedule it no longer
    /// takes is skipped, and said so in [`Tuned::skipped`].
    pub fn new(file: &TuningFile, path: &str) -> Tuned {
        let mut tuned = Tuned {
            file: path.to_string(),
            ..Tuned::default()
        };
        for r in file.records() {
            let parsed = KernelChoice::named(&r.program)
                .map_err(|e| e.to_string())
                .and_then(|k| Config::parse(k, &r.schedule).map_err(|e| e.to_string()));
            match parsed {
                Ok(c) => tuned.records.push((r.clone(), c.from_record(path))),
                Err(why) => tuned.skipped.push(format!(
                    "{path}: the record for {} {} {}: {why}",
                    r.device, r.dtype, r.class
                )),
            }
        }
        tuned
    }

    /// The records of the default file ([`TuningFile::default_path`]), or none where there is
    /// no such file; a file that cannot be read is skipped, and said so in
    /// [`Tuned::skipped`].
    pub fn from_default_file() -> Tuned {
        let Some(path) = TuningFile::default_path() else {
            return Tuned::default();
        };
        let name = path.display().to_string();
        match TuningFile::load(&path) {
            Ok(file) => Tuned::new(&file, &name),
            Err(e) => Tuned {
                file: name,
                skipped: vec![e.to_string()],
                ..Tuned::default()
            },
        }
    }

    /// The file's records that could not be used, each a sentence.
    pub fn skipped(&self) -> &[String] {
        &self.skipped
    }

    /// The schedule a record gives `problem` on `device`, if there is one for its dtype and
    /// class.
    pub fn config_for(&self, device: &Device, problem: &Problem) -> Option<&Config> {
        let class = ShapeClass::of(problem.m, problem.n, problem.k);
        self.records
            .iter()
            .find(|(r, _)| r.device == device.name && r.dtype == problem.dtype && r.class == class)
            .map(|(_, c)| c)
    }

    /// [`check`], preferring a record's schedule: with no schedule asked for, the record's for
    /// the device, dtype and shape class where its program runs the problem; otherwise (no
    /// record, or it cannot) the program's default, as `check` picks it.
    pub fn check(
        &self,
        problem: &Problem,
        lens: BufferLens,
        device: &Device,
    ) -> Result<Plan, InputError> {
        if problem.config.is_none() {
            if let Some(config) = self.config_for(device, problem) {
                let recorded = Problem {
                    config: Some(config.clone()),
                    ..problem.clone()
                };
                if let Ok(plan) = check(&recorded, lens, device) {
                    return Ok(plan);
                }
            }
        }
        check(problem, lens, device)
    }

    /// The file the records came from.
    pub fn file(&self) -> &str {
        &self.file
    }
}

#[cfg(test)]
mod tests;
