//! What `rute gemm` and the GPU tests share: seeded random operands, poisoned outputs, a
//! correctness case against cuBLAS and a timed comparison with cuBLAS from the same run.

use codegen_ptx::jit::{CudaSlice, DeviceRepr, Jit, JitError};
use cudarc::driver::sys;

use super::check::BufferLens;
use super::metric::{count_non_finite, f64_error, relative_frobenius_error, CheckErrors};
use super::program::Plan;
use super::rotation::{copy_buffer_bytes, rotating_sets, CAP_BYTES};
use super::runtime::{Gemm, GemmArgs, GemmError};
use super::{Accum, CublasRef, GemmDtype, GemmElem, KernelChoice};
use half::{bf16, f16};

/// The byte every output byte is set to before a run: `0xFFFF` is a NaN in f16 and in bf16,
/// and no GEMM of finite inputs produces it.
pub const POISON_BYTE: u8 = 0xFF;

/// xorshift64*: reproducible pseudo-random numbers without a dependency.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator seeded with `seed` (a zero seed is replaced: xorshift would stay at zero).
    pub fn new(seed: u64) -> Self {
        Rng(if seed == 0 {
            0x9e37_79b9_7f4a_7c15
        } else {
            seed
        })
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Uniform in [-1, 1), in steps of 2^-23.
    pub fn uniform(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 23) as f32 - 1.0
    }

    /// `len` values uniform in [-1, 1), rounded to `T`.
    pub fn matrix<T: GemmElem>(&mut self, len: usize) -> Vec<T> {
        (0..len).map(|_| T::from_f32(self.uniform())).collect()
    }
}

/// A seed for one case, mixed from the run's seed and the shape, so that every shape draws
/// different inputs.
pub fn case_seed(seed: u64, m: usize, n: usize, k: usize) -> u64 {
    let mut h = seed ^ 0x5851_f42d_4c95_7f2d;
    for v in [m, n, k] {
        h = (h ^ v as u64)
            .wrapping_mul(0x0000_0100_0000_01b3)
            .rotate_left(17);
    }
    h
}

/// A device GEMM's three buffers.
#[derive(Debug)]
pub struct Operands<T> {
    /// `m x k`, random.
    pub a: CudaSlice<T>,
    /// `n x k`, random.
    pub b: CudaSlice<T>,
    /// `m x n`, poisoned.
    pub d: CudaSlice<T>,
}

impl<T: GemmElem + DeviceRepr> Operands<T> {
    /// A and B uniform in [-1, 1) drawn from `seed`, D poisoned.
    pub fn random(jit: &Jit, m: usize, n: usize, k: usize, seed: u64) -> Result<Self, GemmError> {
        let lens = BufferLens::for_shape(m, n, k).ok_or(GemmError::Input(
            super::InputError::SizeOverflow {
                buffer: "A, B or D",
                rows: m.max(n),
                cols: k.max(n),
            },
        ))?;
        let mut rng = Rng::new(seed);
        let a = jit.upload(&rng.matrix::<T>(lens.a))?;
        let b = jit.upload(&rng.matrix::<T>(lens.b))?;
        let mut d = jit.upload(&vec![T::from_f32(0.0); lens.d])?;
        poison(jit, &mut d)?;
        Ok(Operands { a, b, d })
    }
}

impl<T: GemmElem + DeviceRepr> Operands<T> {
    /// Queues rute's GEMM of `case` (shape, accumulator, kernel) on these buffers.
    pub fn run(&mut self, gemm: &Gemm<'_>, case: &Case) -> Result<Plan, GemmError> {
        let (m, n, k) = case.shape;
        gemm.run(GemmArgs {
            m,
            n,
            k,
            a: &self.a,
            b: &self.b,
            d: &mut self.d,
            acc: case.acc,
            kernel: case.kernel,
        })
    }
}

/// Sets every byte of `buf` to [`POISON_BYTE`] (queued on the `Jit`'s stream).
pub fn poison<T: GemmElem>(jit: &Jit, buf: &mut CudaSlice<T>) -> Result<(), GemmError> {
    Ok(jit.fill_bytes(buf, POISON_BYTE)?)
}

/// The device memory free now, in bytes (`cuMemGetInfo`): what the memory check of a run
/// compares its needs with before anything is allocated.
pub fn free_device_memory(jit: &Jit) -> Result<u64, GemmError> {
    let (free, _total) = jit.context().mem_get_info().map_err(|e| JitError::Driver {
        call: "cuMemGetInfo",
        reason: e.to_string(),
    })?;
    Ok(free as u64)
}

/// The L2 cache's size in bytes (0 if the driver does not say).
pub fn l2_bytes(jit: &Jit) -> usize {
    jit.context()
        .attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)
        .ok()
        .and_then(|v| usize::try_from(v).ok())
        .unwrap_or(0)
}

/// The outcome of one correctness case.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckOutcome {
    /// The plan rute ran.
    pub plan: Plan,
    /// `||D - D_cublas|| / ||D_cublas||` over every element, NaN if any element is not finite.
    pub error: f64,
    /// The accumulator's tolerance ([`Accum::tolerance`]), on the distance to the exact product.
    pub tolerance: f64,
    /// Elements of rute's D still poisoned (or otherwise not finite) after the run.
    pub unwritten: usize,
    /// Elements of cuBLAS's D not finite (a broken reference, not a rute failure).
    pub reference_non_finite: usize,
    /// The relative error of rute's D and of cuBLAS's D against the exact product (f64 dot
    /// products on the host) over the same [`CheckOutcome::f64_entries`] entries: a reference
    /// independent of both (rute's D can be bit-identical to cuBLAS's where both add the same
    /// 16-wide tensor-core products in the same k order).
    pub f64_error: (f64, f64),
    /// How many entries of D the exact reference covers: all of them for small products, else
    /// [`SAMPLED_ENTRIES`] ([`f64_error`]).
    pub f64_entries: usize,
}

/// How many entries of D [`Harness::check`] recomputes in f64 on the host when D is too large to
/// recompute in full.
pub const SAMPLED_ENTRIES: usize = 512;

impl CheckOutcome {
    /// The three distances the verdict weighs.
    pub fn errors(&self) -> CheckErrors {
        CheckErrors {
            rute_f64: self.f64_error.0,
            cublas_f64: self.f64_error.1,
            rute_cublas: self.error,
        }
    }

    /// Every element written, cuBLAS's finite, and the distances within
    /// [`CheckErrors::passes`]'s bounds: rute's distance to the exact product within the
    /// tolerance or 1.5 times cuBLAS's, its distance to cuBLAS within what both allow.
    pub fn passed(&self) -> bool {
        self.unwritten == 0
            && self.reference_non_finite == 0
            && self.errors().passes(self.tolerance)
    }
}

/// Device times of rute and cuBLAS on one shape, measured in the same run.
#[derive(Debug, Clone, PartialEq)]
pub struct BenchOutcome {
    /// The plan rute ran.
    pub plan: Plan,
    /// Median time of one rute GEMM, ms.
    pub rute_ms: f64,
    /// Median time of one cuBLAS GEMM, ms.
    pub cublas_ms: f64,
    /// Median time of the device's own copy (`cuMemcpyDtoD`) of half the GEMM's bytes into
    /// another buffer, ms, timed right after the two: it reads and writes
    /// [`BenchOutcome::copy_bytes`], what the GEMM must read and write at least, so its rate is
    /// the memory-bound ceiling.
    pub copy_ms: f64,
    /// Bytes the copy reads and writes together (the GEMM's, rounded up to 8).
    pub copy_bytes: f64,
    /// The GEMM's A, B and D once each, in bytes.
    pub bytes: f64,
    /// Input sets rotated through (more than one when one set fits in L2).
    pub sets: usize,
    /// Timed repeats (each runs the GEMM once on every set).
    pub repeats: usize,
    /// `2 * m * n * k`.
    pub flops: f64,
}

impl BenchOutcome {
    /// rute's rate in TFLOP/s.
    pub fn rute_tflops(&self) -> f64 {
        self.flops / (self.rute_ms * 1e-3) / 1e12
    }

    /// cuBLAS's rate in TFLOP/s.
    pub fn cublas_tflops(&self) -> f64 {
        self.flops / (self.cublas_ms * 1e-3) / 1e12
    }

    /// rute's rate in GB/s: [`BenchOutcome::bytes`] over its time.
    pub fn rute_gbps(&self) -> f64 {
        self.bytes / (self.rute_ms * 1e6)
    }

    /// The copy's rate in GB/s (bytes read plus bytes written over its time).
    pub fn copy_gbps(&self) -> f64 {
        self.copy_bytes / (self.copy_ms * 1e6)
    }

    /// rute's throughput over cuBLAS's (`cublas_ms / rute_ms`): 1 is parity.
    pub fn ratio(&self) -> f64 {
        self.cublas_ms / self.rute_ms
    }
}

/// One GEMM case: its shape, accumulator, kernel choice, and the seed its inputs are drawn from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Case {
    /// `(m, n, k)`.
    pub shape: (usize, usize, usize),
    /// Accumulator type.
    pub acc: Accum,
    /// Which kernel rute runs.
    pub kernel: KernelChoice,
    /// Seed of A and B (see [`case_seed`]).
    pub seed: u64,
}

/// What a case runs on: the JIT, rute's GEMM runtime and the cuBLAS reference.
#[derive(Clone, Copy)]
pub struct Harness<'a> {
    /// The JIT (device, stream).
    pub jit: &'a Jit,
    /// rute's GEMM.
    pub gemm: &'a Gemm<'a>,
    /// The reference.
    pub cublas: &'a CublasRef<'a>,
}

impl Harness<'_> {
    /// Runs rute's GEMM and cuBLAS's on the same fresh random inputs (outputs poisoned first)
    /// and measures both against the exact product and against each other.
    pub fn check<T: GemmElem + DeviceRepr>(&self, case: &Case) -> Result<CheckOutcome, GemmError> {
        let Harness { jit, gemm, cublas } = *self;
        let Case {
            shape: (m, n, k),
            acc,
            seed,
            ..
        } = *case;
        let mut ops = Operands::<T>::random(jit, m, n, k, seed)?;
        let mut reference = jit.upload(&vec![T::from_f32(0.0); m * n])?;
        poison(jit, &mut reference)?;
        let plan = ops.run(gemm, case)?;
        cublas.gemm(m, n, k, &ops.a, &ops.b, &mut reference)?;
        let got = jit.download(&ops.d)?;
        let want = jit.download(&reference)?;
        let (a, b) = (jit.download(&ops.a)?, jit.download(&ops.b)?);
        // The same seed: both Ds are measured on the same entries.
        let exact = |d: &[T]| f64_error(&a, &b, d, (m, n, k), SAMPLED_ENTRIES, seed);
        let ((rute_f64, f64_entries), (cublas_f64, _)) = (exact(&got), exact(&want));
        Ok(CheckOutcome {
            plan,
            error: relative_frobenius_error(&got, &want),
            tolerance: acc.tolerance(T::DTYPE),
            unwritten: count_non_finite(&got),
            reference_non_finite: count_non_finite(&want),
            f64_error: (rute_f64, cublas_f64),
            f64_entries,
        })
    }

    /// Times rute and cuBLAS on the case's shape: warm-up runs, then `repeats` rounds, each
    /// timing rute then cuBLAS (interleaved, so that both meet the same clocks), a sample being
    /// the events' time of one GEMM on every rotating input set divided by the set count; then,
    /// as many rounds of a device copy of the same bytes; reports the medians.
    pub fn bench<T: GemmElem + DeviceRepr>(
        &self,
        case: &Case,
        repeats: usize,
    ) -> Result<BenchOutcome, GemmError> {
        let Harness { jit, gemm, cublas } = *self;
        let Case {
            shape: (m, n, k),
            seed,
            ..
        } = *case;
        let elem = std::mem::size_of::<T>();
        let set_bytes = (m * k + n * k + m * n) * elem;
        let sets = rotating_sets(set_bytes as u128, l2_bytes(jit) as u64, CAP_BYTES);
        let mut ops = Vec::with_capacity(sets);
        for s in 0..sets {
            ops.push(Operands::<T>::random(
                jit,
                m,
                n,
                k,
                seed.wrapping_add(s as u64),
            )?);
        }
        // Each set has a copy of its own: random words from one buffer to another, half the
        // set's bytes each, so that the copy moves what the GEMM moves.
        let copy_words = (copy_buffer_bytes(set_bytes as u128) / 4) as usize;
        let mut rng = Rng::new(seed ^ 0xc0b1_e5ee_d000_0001);
        let mut copies = Vec::with_capacity(sets);
        for _ in 0..sets {
            let words: Vec<u32> = (0..copy_words).map(|_| rng.next_u64() as u32).collect();
            copies.push((jit.upload(&words)?, jit.alloc_zeros::<u32>(copy_words)?));
        }
        // One untimed run first: it compiles the plan and names it.
        let first = &mut ops[0];
        let plan = first.run(gemm, case)?;
        // A failed GEMM stops the timing through a placeholder error; the real one is kept here.
        let mut failure: Option<GemmError> = None;
        let mut piece = |which: usize| -> Result<(), JitError> {
            for o in ops.iter_mut() {
                let r = match which {
                    0 => o.run(gemm, case).map(|_| ()),
                    _ => cublas.gemm(m, n, k, &o.a, &o.b, &mut o.d),
                };
                if let Err(e) = r {
                    failure = Some(e);
                    return Err(JitError::Driver {
                        call: if which == 0 { "gemm" } else { "cublasGemmEx" },
                        reason: "failed".into(),
                    });
                }
            }
            Ok(())
        };
        let warm = (0..2).try_for_each(|_| (0..2).try_for_each(&mut piece));
        let timings = warm
            .and_then(|()| jit.time_interleaved(repeats, 2, &mut piece))
            .map_err(|e| failure.take().unwrap_or(GemmError::Jit(e)))?;
        let (rute, blas) = (&timings[0], &timings[1]);
        // The copy is timed after them, not between: it leaves the L2 full of its written
        // lines, whose write-backs the next timed piece would pay (for a GEMM whose D is small
        // far more than the other GEMM's D costs it).
        let mut copy_all = |_: usize| {
            copies
                .iter_mut()
                .try_for_each(|(src, dst)| jit.copy(src, dst))
        };
        (0..2).try_for_each(&mut copy_all)?;
        let copy = &jit.time_interleaved(repeats, 1, &mut copy_all)?[0];
        jit.synchronize()?;
        Ok(BenchOutcome {
            plan,
            rute_ms: f64::from(rute.median_ms()) / sets as f64,
            cublas_ms: f64::from(blas.median_ms()) / sets as f64,
            copy_ms: f64::from(copy.median_ms()) / sets as f64,
            copy_bytes: (copy_words * 8) as f64,
            bytes: set_bytes as f64,
            sets,
            repeats: repeats.max(1),
            flops: 2.0 * m as f64 * n as f64 * k as f64,
        })
    }

    /// [`Harness::check`] for the element type `dtype` names.
    pub fn check_dtype(&self, dtype: GemmDtype, case: &Case) -> Result<CheckOutcome, GemmError> {
        match dtype {
            GemmDtype::F16 => self.check::<f16>(case),
            GemmDtype::Bf16 => self.check::<bf16>(case),
        }
    }

    /// [`Harness::bench`] for the element type `dtype` names.
    pub fn bench_dtype(
        &self,
        dtype: GemmDtype,
        case: &Case,
        repeats: usize,
    ) -> Result<BenchOutcome, GemmError> {
        match dtype {
            GemmDtype::F16 => self.bench::<f16>(case, repeats),
            GemmDtype::Bf16 => self.bench::<bf16>(case, repeats),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_values_are_uniform_in_the_unit_interval_and_seeded() {
        let xs: Vec<f32> = (0..10_000)
            .scan(Rng::new(7), |r, _| Some(r.uniform()))
            .collect();
        assert!(xs.iter().all(|x| (-1.0..1.0).contains(x)));
        let mean = xs.iter().sum::<f32>() / xs.len() as f32;
        assert!(mean.abs() < 0.05, "{mean}");
        assert!(xs.iter().any(|&x| x < -0.9) && xs.iter().any(|&x| x > 0.9));
        let again: Vec<f32> = (0..10_000)
            .scan(Rng::new(7), |r, _| Some(r.uniform()))
            .collect();
        assert_eq!(xs, again);
        assert_ne!(case_seed(1, 2, 3, 4), case_seed(1, 3, 2, 4));
    }
}
