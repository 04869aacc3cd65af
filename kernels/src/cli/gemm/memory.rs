//! What a run of `rute gemm` allocates, on the host and on the GPU, counted before anything is
//! allocated: a run that does not fit is refused with a sentence naming the case, what it needs
//! and what there is.

use dsl_core::ir::Target;
use kernels::gemm::rotation::{self, rotating_sets};
use kernels::gemm::GemmDtype;

use super::request::{Request, Suite};
use super::suites::{pairs, precheck, problem, shapes};

/// Bytes of memory, on the host and on the GPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Memory {
    /// Host memory, bytes.
    pub host: u64,
    /// Device (GPU) memory, bytes.
    pub device: u64,
}

/// A run that does not fit: the case with the largest need on the side that is short.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{case} needs {} of {side} memory ({what}), more than the {} available", bytes(*.needed), bytes(*.available))]
pub struct MemoryError {
    /// The case, e.g. `1 x 2147483647 x 2147483647 (f16)`.
    pub case: String,
    /// `host` or `device`.
    pub side: &'static str,
    /// What the bytes are for.
    pub what: &'static str,
    /// Bytes the case needs there at its peak.
    pub needed: u64,
    /// Bytes there are.
    pub available: u64,
}

/// `n` bytes in binary units with the exact count, e.g. `8.0 EiB (9223372028264841218 bytes)`.
fn bytes(n: u64) -> String {
    const UNITS: [&str; 7] = ["bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    let exp = (0..UNITS.len())
        .rev()
        .find(|&e| n >> (10 * e) > 0)
        .unwrap_or(0);
    if exp == 0 {
        format!("{n} bytes")
    } else {
        let scaled = n as f64 / (1u64 << (10 * exp)) as f64;
        format!("{scaled:.1} {} ({n} bytes)", UNITS[exp])
    }
}

/// What one case of a run allocates at its peak, on the host and on the device.
///
/// A, B and D (m*k, n*k, m*n elements of `dtype`) live on the device in every form. Without
/// `check` and `bench` the GEMM runs once: the host holds one operand at a time while uploading,
/// then D. `check` adds cuBLAS's D on the device and holds A, B and both Ds on the host at once
/// (the f64 reference and the comparison). `bench` keeps the rotating input sets on the device
/// ([`rotating_sets`] of the device's `l2_bytes`, the harness's; `u64::MAX` gives the most any L2
/// would, [`rotation::MAX_SETS`] sets within [`rotation::CAP_BYTES`]), each with its copy's
/// source and destination (half a set each, in 4-byte words), and on the host one operand or one
/// copy source at a time and 16 bytes per repeat for the samples. The phases run one after the other, so each side's peak is the largest of its
/// phases. Saturates at `u64::MAX`.
pub fn case_memory(
    (m, n, k): (usize, usize, usize),
    dtype: GemmDtype,
    check: bool,
    bench: bool,
    repeats: usize,
    l2_bytes: u64,
) -> Memory {
    let elem: u128 = match dtype {
        GemmDtype::F16 | GemmDtype::Bf16 => 2,
    };
    let (m, n, k) = (m as u128, n as u128, k as u128);
    let (a, b, d) = (
        m.saturating_mul(k).saturating_mul(elem),
        n.saturating_mul(k).saturating_mul(elem),
        m.saturating_mul(n).saturating_mul(elem),
    );
    let set = a.saturating_add(b).saturating_add(d);
    let one_operand = a.max(b).max(d);
    let mut host = 0u128;
    let mut device = 0u128;
    if !check && !bench {
        host = one_operand;
        device = set;
    }
    if check {
        let both = set.saturating_add(d);
        host = host.max(both);
        device = device.max(both);
    }
    if bench {
        let samples = 16u128.saturating_mul(repeats as u128);
        let copy_half = rotation::copy_buffer_bytes(set);
        host = host.max(one_operand.max(copy_half).saturating_add(samples));
        let sets = rotating_sets(set, l2_bytes, rotation::CAP_BYTES) as u128;
        let with_copy = set.saturating_add(copy_half.saturating_mul(2));
        device = device.max(with_copy.saturating_mul(sets));
    }
    let clamp = |v: u128| u64::try_from(v).unwrap_or(u64::MAX);
    Memory {
        host: clamp(host),
        device: clamp(device),
    }
}

/// The cases `request` runs, each with what it allocates ([`case_memory`]): its shape, dtype
/// and memory. Cases [`precheck`] refuses are left out: they are refused before allocating.
fn cases_memory(
    request: &Request,
    l2_bytes: u64,
) -> Vec<((usize, usize, usize), GemmDtype, Memory)> {
    let (opts, shapes, check, bench): (_, Vec<_>, _, _) = match request {
        Request::Single {
            shape,
            check,
            bench,
            opts,
        } => (opts, vec![*shape], *check, *bench),
        Request::Suite {
            suite: Suite::Correctness,
            opts,
            ..
        } => (opts, shapes(Suite::Correctness), true, false),
        Request::Suite { suite, opts, .. } => (opts, shapes(*suite), true, true),
    };
    let dtype_accs = match request {
        Request::Suite {
            suite: Suite::Correctness,
            ..
        } => pairs(opts),
        _ => vec![(opts.dtype_or_default(), opts.acc_or_default())],
    };
    let mut cases = Vec::new();
    for (dtype, acc) in dtype_accs {
        for &shape in &shapes {
            if precheck(&problem(shape, dtype, acc, opts), &Target::ALL).is_ok() {
                let need = case_memory(shape, dtype, check, bench, opts.repeats, l2_bytes);
                cases.push((shape, dtype, need));
            }
        }
    }
    cases
}

/// The most `request` allocates at once on the host and on the device: the largest
/// [`case_memory`] of its cases, each side on its own (the cases run one after the other). Pass
/// the device's L2 size in bytes, or `u64::MAX` for the most any device would take.
pub fn memory_needed(request: &Request, l2_bytes: u64) -> Memory {
    cases_memory(request, l2_bytes)
        .into_iter()
        .fold(Memory::default(), |acc, (_, _, need)| Memory {
            host: acc.host.max(need.host),
            device: acc.device.max(need.device),
        })
}

/// What the runner calls once it knows the machine, before it allocates anything: refuses
/// `request` when one of its cases needs more than `available` on the host or on the device,
/// naming the first such case (host before device), what it needs and what there is. Pass the
/// device's free memory (`cuMemGetInfo`), [`host_available`] (or `u64::MAX` where unknown) and
/// the device's L2 size. On success, returns [`memory_needed`]. cuBLAS's workspace, the CUDA
/// context and the loaded modules are not counted: leave them room in `available`.
pub fn check_memory(
    request: &Request,
    l2_bytes: u64,
    available: Memory,
) -> Result<Memory, MemoryError> {
    let cases = cases_memory(request, l2_bytes);
    for (side, get, have, what) in [
        (
            "host",
            (|m: &Memory| m.host) as fn(&Memory) -> u64,
            available.host,
            "A, B and D as they are drawn, and the copies a check compares",
        ),
        (
            "device",
            |m: &Memory| m.device,
            available.device,
            "A, B, D and the reference or the timing's input sets",
        ),
    ] {
        if let Some(((m, n, k), dtype, need)) = cases.iter().find(|(_, _, need)| get(need) > have) {
            return Err(MemoryError {
                case: format!("{m} x {n} x {k} ({dtype})"),
                side,
                what,
                needed: get(need),
                available: have,
            });
        }
    }
    Ok(memory_needed(request, l2_bytes))
}

/// The host memory available to a new allocation, in bytes: `MemAvailable` of `/proc/meminfo`
/// (`None` where there is no such file, as off Linux).
pub fn host_available() -> Option<u64> {
    meminfo_available(&std::fs::read_to_string("/proc/meminfo").ok()?)
}

/// `MemAvailable:   123456 kB` of a `/proc/meminfo` text, in bytes.
fn meminfo_available(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let mut words = line["MemAvailable:".len()..].split_whitespace();
    let kib: u64 = words.next()?.parse().ok()?;
    (words.next() == Some("kB")).then(|| kib.saturating_mul(1024))
}

#[cfg(test)]
mod tests {
    use kernels::gemm::check::MAX_DIM;
    use kernels::gemm::{Accum, KernelChoice};

    use super::super::request::Options;
    use super::*;

    fn kernel(name: &str) -> KernelChoice {
        KernelChoice::named(name).unwrap()
    }

    const GIB: u64 = 1 << 30;

    fn single(shape: (usize, usize, usize), check: bool, bench: bool, opts: Options) -> Request {
        Request::Single {
            shape,
            check,
            bench,
            opts,
        }
    }

    #[test]
    fn memory_counts_the_operands_and_the_copies_of_each_form() {
        // 4096^3 f16: A, B, D 32 MiB each.
        let (mib, shape) = (1u64 << 20, (4096, 4096, 4096));
        let run = case_memory(shape, GemmDtype::F16, false, false, 20, 0);
        assert_eq!(
            run,
            Memory {
                host: 32 * mib,
                device: 96 * mib
            }
        );
        // The check: cuBLAS's D on the device; A, B and both Ds on the host.
        let check = case_memory(shape, GemmDtype::Bf16, true, false, 20, 0);
        assert_eq!(
            check,
            Memory {
                host: 128 * mib,
                device: 128 * mib
            }
        );
        // The timing: one set when twice the L2 (40 MiB) is below a set (96 MiB), two when it is
        // not, each with a copy's source and destination of 48 MiB; on the host one copy source
        // (larger than an operand) and 16 bytes a repeat.
        let bench = case_memory(shape, GemmDtype::F16, false, true, 10_000, 40 << 20);
        assert_eq!(
            bench,
            Memory {
                host: 48 * mib + 160_000,
                device: 192 * mib
            }
        );
        let bench = case_memory(shape, GemmDtype::F16, false, true, 20, 50 << 20);
        assert_eq!(bench.device, 2 * 192 * mib);
        // Without the L2 size: the most rotation any device would make, 16 sets within 4 GiB.
        let most = case_memory(shape, GemmDtype::F16, false, true, 20, u64::MAX);
        assert_eq!(most.device, 16 * 192 * mib);
        let most = case_memory(
            (8192, 8192, 8192),
            GemmDtype::F16,
            false,
            true,
            20,
            u64::MAX,
        );
        assert_eq!(most.device, 10 * 768 * mib);
        let small = case_memory((64, 64, 64), GemmDtype::F16, false, true, 20, u64::MAX);
        assert_eq!(small.device, 16 * 2 * 3 * 64 * 64 * 2);
        // Check and time: each side's peak is its larger phase.
        let both = case_memory(shape, GemmDtype::F16, true, true, 20, 40 << 20);
        assert_eq!(
            both,
            Memory {
                host: 128 * mib,
                device: 192 * mib
            }
        );
        // The largest shapes saturate instead of overflowing.
        let max = MAX_DIM;
        let huge = case_memory(
            (max, max, max),
            GemmDtype::F16,
            true,
            true,
            10_000,
            u64::MAX,
        );
        assert!(
            huge.host > u64::MAX / 2 && huge.device == u64::MAX,
            "{huge:?}"
        );
    }

    /// M = 1 against a B of 2^20 x 2^20 on the naive kernel: 2 TiB of B.
    fn naive_row() -> Request {
        let opts = Options {
            kernel: kernel("naive"),
            ..Options::default()
        };
        single((1, 1048576, 1048576), false, false, opts)
    }

    #[test]
    fn requests_need_their_largest_case() {
        let need = memory_needed(&naive_row(), u64::MAX);
        // B is 2^40 f16 elements: 2 TiB on either side.
        assert_eq!(
            need,
            Memory {
                host: 2 << 40,
                device: (2 << 40) + 4 * (1 << 20)
            }
        );
        // The correctness suite's largest case is 8192^3 checked: 4 matrices of 128 MiB.
        let suite = Request::Suite {
            suite: Suite::Correctness,
            out: None,
            opts: Options::default(),
        };
        assert_eq!(
            memory_needed(&suite, 50 << 20),
            Memory {
                host: 512 << 20,
                device: 512 << 20
            }
        );
        // The bench suite: 8192^3 timed (one set of 384 MiB and its copy's 2 x 192 MiB; 2048^3
        // rotated through 5 sets is less).
        let bench = Request::Suite {
            suite: Suite::Bench,
            out: None,
            opts: Options::default(),
        };
        assert_eq!(memory_needed(&bench, 50 << 20).device, 768 << 20);
    }

    #[test]
    fn check_memory_names_the_case_and_both_sizes() {
        let h200 = Memory {
            host: 100 * GIB,
            device: 139 * GIB,
        };
        let naive = naive_row();
        let e = check_memory(&naive, 50 << 20, h200).unwrap_err();
        assert_eq!(
            (e.side, e.needed, e.available),
            ("host", 2 << 40, 100 * GIB)
        );
        assert_eq!(
            e.to_string(),
            "1 x 1048576 x 1048576 (f16) needs 2.0 TiB (2199023255552 bytes) of host memory \
             (A, B and D as they are drawn, and the copies a check compares), more than the 100.0 GiB (107374182400 bytes) available"
        );
        let roomy_host = Memory {
            host: u64::MAX,
            ..h200
        };
        let e = check_memory(&naive, 50 << 20, roomy_host).unwrap_err();
        assert_eq!(e.side, "device");
        assert!(e.to_string().contains("of device memory (A, B, D and the reference or the timing's input sets), more than the 139.0 GiB"), "{e}");
        let absurd = single((1, 2147483647, 2147483647), true, false, Options::default());
        let e = check_memory(&absurd, u64::MAX, h200).unwrap_err();
        assert!(e.to_string().starts_with("1 x 2147483647 x 2147483647 (f16) needs 8.0 EiB (9223372041149743100 bytes) of host memory"), "{e}");
        // The device check gpu_run.sh makes: one matrix at a time fits the host, the three do not
        // fit the device.
        let large = single((170000, 170000, 170000), false, false, Options::default());
        assert_eq!(
            precheck(
                &problem(
                    (170000, 170000, 170000),
                    GemmDtype::F16,
                    Accum::F32,
                    &Options::default()
                ),
                &Target::ALL
            ),
            Ok(())
        );
        let e = check_memory(&large, 50 << 20, h200).unwrap_err();
        assert_eq!(
            e.to_string(),
            "170000 x 170000 x 170000 (f16) needs 161.5 GiB (173400000000 bytes) of device memory \
             (A, B, D and the reference or the timing's input sets), more than the 139.0 GiB \
             (149250113536 bytes) available"
        );
        // What fits passes and says what it needs.
        let fits = single((4096, 4096, 4096), true, true, Options::default());
        assert_eq!(
            check_memory(&fits, 50 << 20, h200),
            Ok(memory_needed(&fits, 50 << 20))
        );
        let suite = Request::Suite {
            suite: Suite::Correctness,
            out: None,
            opts: Options::default(),
        };
        let e = check_memory(
            &suite,
            0,
            Memory {
                host: GIB,
                device: 256 << 20,
            },
        )
        .unwrap_err();
        assert!(
            e.to_string().starts_with(
                "8192 x 8192 x 8192 (f16) needs 512.0 MiB (536870912 bytes) of device memory"
            ),
            "{e}"
        );
    }

    #[test]
    fn host_memory_is_read_from_meminfo() {
        let text =
            "MemTotal:       131072000 kB\nMemFree:         1000 kB\nMemAvailable:   65536000 kB\n";
        assert_eq!(meminfo_available(text), Some(65536000 * 1024));
        assert_eq!(meminfo_available("MemTotal: 5 kB\n"), None);
        assert_eq!(meminfo_available("MemAvailable: x kB\n"), None);
        if cfg!(target_os = "linux") {
            assert!(host_available().is_some_and(|b| b > 0));
        }
    }
}
