//! [`Device`]: the facts about a GPU that choosing a GEMM's schedule and launching it need,
//! read from the device at run time (`Device::query`, feature `gpu`, beside the runtime), or
//! given by a test on a host without one.
//!
//! ```
//! use dsl_core::ir::Target;
//! use kernels::gemm::Device;
//! let d = Device::h200();
//! assert_eq!((d.target, d.sms), (Target::Sm90a, 132));
//! // Bytes per FLOP where the two rates meet: below it a GEMM is bound by its math.
//! assert!(d.balance() > 0.003 && d.balance() < 0.006);
//! ```

use dsl_core::ir::Target;

/// A GPU as the programs see it.
#[derive(Debug, Clone, PartialEq)]
pub struct Device {
    /// Its name as the driver gives it (`NVIDIA H200`): what tuning records are kept under.
    pub name: String,
    /// The PTX target rute emits for it.
    pub target: Target,
    /// Streaming multiprocessors.
    pub sms: u32,
    /// The L2 cache, bytes.
    pub l2_bytes: u64,
    /// The most shared memory one block may have, static and dynamic together (the opt-in
    /// limit), bytes.
    pub smem_per_block: u32,
    /// Dense 16-bit tensor-core throughput with an f32 sum, FLOP/s.
    pub tensor_flops: f64,
    /// DRAM bandwidth, bytes/s.
    pub dram_bytes_per_s: f64,
}

impl Device {
    /// The H200's facts (as `Device::query` reads them there): 132 SMs, 60 MiB of L2, 227 KiB
    /// of shared memory per block, 989 TFLOP/s of dense bf16, 4.8 TB/s. For tests and examples
    /// on a host without a GPU; a program run on a device uses the device's own.
    pub fn h200() -> Device {
        Device {
            name: "NVIDIA H200".into(),
            target: Target::Sm90a,
            sms: 132,
            l2_bytes: 60 << 20,
            smem_per_block: 227 * 1024,
            tensor_flops: 989e12,
            dram_bytes_per_s: 4.8e12,
        }
    }

    /// A device of `target` whose facts are not known yet: one SM, no L2, the architecture's
    /// shared memory per block. What a check before any device is found plans for: the program
    /// chosen and its refusals are the same on every device of the target (the schedule's
    /// fine choice is the device's, and waits for it).
    pub fn unknown(target: Target) -> Device {
        let smem_per_block = match target {
            Target::Sm80 => 163 * 1024,
            _ => 227 * 1024,
        };
        Device {
            name: format!("an unknown {target} device"),
            target,
            sms: 1,
            l2_bytes: 0,
            smem_per_block,
            tensor_flops: 1e12,
            dram_bytes_per_s: 1e12,
        }
    }

    /// Bytes of DRAM traffic per FLOP at which the device's two rates meet: a kernel that moves
    /// more per FLOP waits on memory.
    pub fn balance(&self) -> f64 {
        self.dram_bytes_per_s / self.tensor_flops
    }
}
