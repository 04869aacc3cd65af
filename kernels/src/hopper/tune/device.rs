//! The tuner on the device: every candidate timed on the same rotating input sets in
//! interleaved rounds, the fastest checked against cuBLAS, and its record.

use std::path::Path;

use codegen_ptx::jit::{DeviceRepr, Jit, JitError};
use half::{bf16, f16};

use super::candidates;
use crate::gemm::harness::{l2_bytes, Case, Harness, Operands};
use crate::gemm::rotation::{rotating_sets, CAP_BYTES};
use crate::gemm::tuning::{ShapeClass, Tuned, TuningError, TuningFile, TuningRecord};
use crate::gemm::{
    Accum, Config, CublasRef, Device, Gemm, GemmDtype, GemmElem, GemmError, KernelChoice,
};
use crate::hopper::{HopperSchedule, HopperWs};

/// What to tune: the problem, its element type, and the timed rounds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TuneRequest {
    /// Rows of A and D.
    pub m: usize,
    /// Rows of B, columns of D.
    pub n: usize,
    /// Columns of A and B.
    pub k: usize,
    /// The element type.
    pub dtype: GemmDtype,
    /// Timed rounds, each running every candidate once on every input set.
    pub repeats: usize,
}

/// A candidate and its time.
#[derive(Debug, Clone, PartialEq)]
pub struct Timed {
    /// The schedule.
    pub schedule: HopperSchedule,
    /// Its median time per GEMM, microseconds.
    pub micros: f64,
}

/// What a tuning found.
#[derive(Debug, Clone, PartialEq)]
pub struct TuneOutcome {
    /// The device it ran on.
    pub device: Device,
    /// The default's time (the first candidate).
    pub default: Timed,
    /// Every candidate's time, fastest first.
    pub timed: Vec<Timed>,
    /// The fastest whose result matched cuBLAS's.
    pub winner: Timed,
    /// The record of the winner, for the tuning file.
    pub record: TuningRecord,
}

/// Tunes `request` on `jit`'s device: times [`candidates`] in interleaved rounds on input sets
/// rotated past the L2, checks the fastest against cuBLAS (passing over any that does not
/// match), and returns every time and the winner's record. Nothing is written: [`record`]
/// keeps it.
pub fn tune(jit: &Jit, request: &TuneRequest) -> Result<TuneOutcome, GemmError> {
    match request.dtype {
        GemmDtype::F16 => tune_as::<f16>(jit, request),
        GemmDtype::Bf16 => tune_as::<bf16>(jit, request),
    }
}

fn tune_as<T: GemmElem + DeviceRepr>(
    jit: &Jit,
    request: &TuneRequest,
) -> Result<TuneOutcome, GemmError> {
    let TuneRequest {
        m, n, k, repeats, ..
    } = *request;
    let device = Device::query(jit)?;
    let schedules = candidates(m, n, k, &device);
    if schedules.is_empty() {
        return Err(GemmError::Input(crate::gemm::InputError::KernelCannot {
            kernel: "hopper_ws",
            reason: format!("no schedule of it takes {m} x {n} x {k} on {}", device.name),
        }));
    }
    // One runtime per candidate, each held to its schedule and to no tuning record.
    let gemms: Vec<Gemm<'_>> = schedules
        .iter()
        .map(|s| {
            Ok(Gemm::new(jit)?
                .with_tuning(Tuned::default())
                .with_schedule(Config::of(&HopperWs, *s)))
        })
        .collect::<Result<_, GemmError>>()?;
    let case = Case {
        shape: (m, n, k),
        acc: Accum::F32,
        kernel: KernelChoice::Program(&HopperWs),
        seed: 0x7e57_0000 ^ (m as u64) ^ ((n as u64) << 20) ^ ((k as u64) << 40),
    };
    let set_bytes = (m * k + n * k + m * n) * std::mem::size_of::<T>();
    let sets = rotating_sets(set_bytes as u128, l2_bytes(jit) as u64, CAP_BYTES);
    let mut ops = (0..sets)
        .map(|s| Operands::<T>::random(jit, m, n, k, case.seed.wrapping_add(s as u64)))
        .collect::<Result<Vec<_>, _>>()?;
    // Each candidate once first: it compiles, and a candidate the device refuses is an error
    // here, not a timing.
    for g in &gemms {
        ops[0].run(g, &case)?;
    }
    let mut failure: Option<GemmError> = None;
    let mut piece = |i: usize| -> Result<(), JitError> {
        for o in ops.iter_mut() {
            if let Err(e) = o.run(&gemms[i], &case) {
                failure = Some(e);
                return Err(JitError::Driver {
                    call: "gemm",
                    reason: "failed".into(),
                });
            }
        }
        Ok(())
    };
    // A warm-up round, then the timed ones.
    let timings = (0..gemms.len())
        .try_for_each(&mut piece)
        .and_then(|()| jit.time_interleaved(repeats.max(1), gemms.len(), &mut piece));
    let timings = timings.map_err(|e| failure.take().unwrap_or(GemmError::Jit(e)))?;
    jit.synchronize()?;
    let mut timed: Vec<Timed> = schedules
        .iter()
        .zip(&timings)
        .map(|(s, t)| Timed {
            schedule: *s,
            micros: f64::from(t.median_ms()) * 1e3 / sets as f64,
        })
        .collect();
    let default = timed[0].clone();
    timed.sort_by(|a, b| a.micros.total_cmp(&b.micros));
    // The fastest that computes the product as cuBLAS does.
    let cublas = CublasRef::new(jit)?;
    let mut winner = None;
    for t in &timed {
        let gemm = Gemm::new(jit)?
            .with_tuning(Tuned::default())
            .with_schedule(Config::of(&HopperWs, t.schedule));
        let harness = Harness {
            jit,
            gemm: &gemm,
            cublas: &cublas,
        };
        if harness.check::<T>(&case)?.passed() {
            winner = Some(t.clone());
            break;
        }
    }
    let winner = winner.ok_or_else(|| {
        GemmError::Cublas(format!(
            "no candidate schedule of {m} x {n} x {k} matched cuBLAS's result"
        ))
    })?;
    let record = TuningRecord {
        device: device.name.clone(),
        dtype: request.dtype,
        class: ShapeClass::of(m, n, k),
        program: "hopper_ws".into(),
        schedule: winner.schedule.to_string(),
        shape: (m, n, k),
        micros: winner.micros,
        default_micros: Some(default.micros),
    };
    Ok(TuneOutcome {
        device,
        default,
        timed,
        winner,
        record,
    })
}

/// Keeps `outcome`'s record in the tuning file at `path` (replacing the one for its device,
/// dtype and class).
pub fn record(outcome: &TuneOutcome, path: &Path) -> Result<(), TuningError> {
    let mut file = TuningFile::load(path)?;
    file.record(outcome.record.clone());
    file.save(path)
}

impl TuneOutcome {
    /// The candidates' times as a table, fastest first, the default and the winner marked.
    pub fn table(&self) -> String {
        let mut out = format!(
            "{} x {} x {} {} on {}: {} candidates\n",
            self.record.shape.0,
            self.record.shape.1,
            self.record.shape.2,
            self.record.dtype,
            self.device.name,
            self.timed.len()
        );
        for t in &self.timed {
            let mark = match (
                t.schedule == self.winner.schedule,
                t.schedule == self.default.schedule,
            ) {
                (true, true) => "  winner, the default",
                (true, false) => "  winner",
                (false, true) => "  the default",
                _ => "",
            };
            out.push_str(&format!(
                "  {:>10.2} us  {:>5.3}x  {}{mark}\n",
                t.micros,
                self.default.micros / t.micros,
                t.schedule
            ));
        }
        out
    }
}
