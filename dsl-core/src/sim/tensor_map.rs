//! Tensor maps as the simulator takes them: the plain description the JIT encodes into a
//! `CUtensorMap` (the TMA atom's [`TmaDescriptor`], the interleave and the out-of-bounds fill)
//! over a buffer of the simulated memory ([`TensorMapArg`]), resolved at launch into what the
//! TMA ops read ([`TmaMap`]), and the addressing those ops share: which global element a box
//! element is, and where the swizzle puts a byte of shared memory.
//!
//! The encoded `CUtensorMap` is opaque (its layout is the driver's), so a kernel that receives
//! its tensor map as 128 raw bytes ([`Arg::TensorMap`](super::Arg::TensorMap)) cannot run a TMA
//! op in the simulator: the run stops with [`SimError::Unsupported`](super::SimError) there.

use super::memory::{BufferId, Memory};
use crate::atom::tma::{TmaDescriptor, TmaInterleave, TmaOobFill, TmaSwizzleMode};
use crate::atom::ValType;

/// A tensor-map kernel argument: the description a `CUtensorMap` is encoded from, over a buffer
/// of the simulated [`Memory`] (the address the driver would take is the buffer's plus
/// `offset`). A GEMM plan's tensor maps ([`TmaDescriptor`]s) pass as they are.
///
/// ```
/// use dsl_core::atom::tma::{TmaDescriptor, TmaSwizzleMode};
/// use dsl_core::atom::ValType;
/// use dsl_core::sim::{Arg, Memory, TensorMapArg};
/// let mut mem = Memory::new();
/// let a = mem.upload("a", &vec![0u16; 64 * 32]);
/// // A row-major 32 x 64 f16 matrix, loaded in 8 x 64 boxes, 128-byte swizzled.
/// let map = TmaDescriptor {
///     elem: ValType::F16,
///     global_dims: vec![64, 32],
///     global_strides_bytes: vec![128],
///     box_dims: vec![64, 8],
///     element_strides: vec![1, 1],
///     swizzle: TmaSwizzleMode::B128,
///     l2_promotion: Default::default(),
/// };
/// let arg = Arg::Tma(Box::new(TensorMapArg::new(a, map)));
/// assert!(matches!(arg, Arg::Tma(_)));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TensorMapArg {
    /// The buffer the map addresses.
    pub buffer: BufferId,
    /// Where the tensor's first element is, in bytes from the buffer's start.
    pub offset: u64,
    /// Element type, extents, strides, box, element strides, swizzle and L2 promotion.
    pub descriptor: TmaDescriptor,
    /// The global layout's interleave.
    pub interleave: TmaInterleave,
    /// What out-of-bounds elements of a box read as.
    pub oob_fill: TmaOobFill,
}

impl TensorMapArg {
    /// The map `descriptor` over `buffer` from its first byte, not interleaved, filling zeros out
    /// of bounds: what `codegen_ptx::jit::tensor_map_spec` encodes for a TMA atom's descriptor.
    pub fn new(buffer: BufferId, descriptor: TmaDescriptor) -> TensorMapArg {
        TensorMapArg {
            buffer,
            offset: 0,
            descriptor,
            interleave: TmaInterleave::None,
            oob_fill: TmaOobFill::Zero,
        }
    }

    /// The same map starting `offset` bytes into its buffer.
    pub fn at_offset(mut self, offset: u64) -> TensorMapArg {
        self.offset = offset;
        self
    }

    /// The same map with `interleave`.
    pub fn with_interleave(mut self, interleave: TmaInterleave) -> TensorMapArg {
        self.interleave = interleave;
        self
    }

    /// The same map with `oob_fill`.
    pub fn with_oob_fill(mut self, oob_fill: TmaOobFill) -> TensorMapArg {
        self.oob_fill = oob_fill;
        self
    }
}

/// A tensor map resolved against the memory at launch.
#[derive(Debug, Clone)]
pub(crate) struct TmaMap {
    /// The buffer's index and the byte offset of the tensor's first element in it.
    pub buf: usize,
    pub base: u64,
    /// Bytes per element.
    pub elem: u32,
    /// Extents, innermost first.
    pub dims: Vec<u64>,
    /// Byte strides of every dimension (the innermost's is the element size).
    pub strides: Vec<u64>,
    pub element_strides: Vec<u32>,
    /// Elements a box copies along each dimension (`ceil(box / element stride)`).
    pub counts: Vec<u32>,
    pub swizzle: Swizzle,
    pub interleave: TmaInterleave,
    pub oob_fill: TmaOobFill,
}

impl TmaMap {
    /// Resolves `arg` against `mem`; the error is a clause saying what is wrong.
    pub fn resolve(arg: &TensorMapArg, mem: &Memory) -> Result<TmaMap, String> {
        let d = &arg.descriptor;
        if arg.buffer.index() >= mem.buffers() {
            return Err(format!("{} is not in the memory", arg.buffer));
        }
        let rank = d.global_dims.len();
        if !(1..=5).contains(&rank) {
            return Err(format!("rank {rank}: tensor maps have 1 to 5 dimensions"));
        }
        if d.global_strides_bytes.len() + 1 != rank
            || d.box_dims.len() != rank
            || d.element_strides.len() != rank
        {
            return Err(format!(
                "{} strides, {} box extents and {} element strides for a rank-{rank} tensor",
                d.global_strides_bytes.len(),
                d.box_dims.len(),
                d.element_strides.len()
            ));
        }
        let elem = match d.elem {
            ValType::U128 => return Err("128-bit elements have no tensor-map type".into()),
            t => t.bits() / 8,
        };
        if d.global_dims.contains(&0) || d.box_dims.contains(&0) {
            return Err("an extent of 0".into());
        }
        if d.element_strides.iter().any(|&s| !(1..=8).contains(&s)) {
            return Err(format!(
                "element strides {:?}: each is in 1..=8",
                d.element_strides
            ));
        }
        let mut strides = vec![u64::from(elem)];
        strides.extend(&d.global_strides_bytes);
        let extent: u128 = d
            .global_dims
            .iter()
            .zip(&strides)
            .map(|(&n, &s)| u128::from(n - 1) * u128::from(s))
            .sum::<u128>()
            + u128::from(elem);
        let len = mem.len(arg.buffer) as u128;
        if u128::from(arg.offset) + extent > len {
            return Err(format!(
                "the tensor spans {extent} bytes from byte {} of buffer `{}`, which has {len}",
                arg.offset,
                mem.name(arg.buffer)
            ));
        }
        let float = matches!(d.elem, ValType::F16 | ValType::BF16 | ValType::F32);
        if arg.oob_fill == TmaOobFill::NanRequestZeroFma && !float {
            return Err(format!(
                "a NaN out-of-bounds fill for {} elements",
                d.elem.bits()
            ));
        }
        Ok(TmaMap {
            buf: arg.buffer.index(),
            base: arg.offset,
            elem,
            dims: d.global_dims.clone(),
            strides,
            element_strides: d.element_strides.clone(),
            counts: d
                .box_dims
                .iter()
                .zip(&d.element_strides)
                .map(|(&b, &s)| b.div_ceil(s))
                .collect(),
            swizzle: Swizzle::of_tma(d.swizzle),
            interleave: arg.interleave,
            oob_fill: arg.oob_fill,
        })
    }

    /// Elements one box copies.
    pub fn box_elems(&self) -> u64 {
        self.counts.iter().map(|&c| u64::from(c)).product()
    }

    /// Bytes one box occupies in shared memory (what its complete-tx counts).
    pub fn box_bytes(&self) -> u64 {
        self.box_elems() * u64::from(self.elem)
    }

    /// Visits the box at `coords` in shared-memory order (innermost dimension fastest) in runs
    /// of consecutive box elements: `f(first element, Some(byte offset in the buffer), count)`
    /// for a run inside the tensor (contiguous in the buffer: the innermost dimension's
    /// traversal stride is 1), `f(first, None, count)` for one outside it.
    pub fn for_each_run(&self, coords: &[i64], mut f: impl FnMut(u64, Option<u64>, u32)) {
        let rank = self.counts.len();
        let n0 = self.counts[0];
        let rows: u64 = self.counts[1..].iter().map(|&c| u64::from(c)).product();
        let mut idx = [0u32; 5];
        for row in 0..rows {
            let first = row * u64::from(n0);
            let mut outer = Some(self.base);
            for d in 1..rank {
                let c = coords[d] + i64::from(idx[d]) * i64::from(self.element_strides[d]);
                outer = outer.filter(|_| c >= 0 && (c as u64) < self.dims[d]);
                outer = outer.map(|o| o + c as u64 * self.strides[d]);
            }
            match outer {
                None => f(first, None, n0),
                Some(o) => {
                    // Inner coordinates c0 .. c0 + n0: those in 0..dims[0] are inside.
                    let c0 = coords[0];
                    let lo = (-c0).clamp(0, i64::from(n0)) as u32;
                    let hi = (self.dims[0] as i64 - c0).clamp(0, i64::from(n0)) as u32;
                    if lo > 0 {
                        f(first, None, lo);
                    }
                    if hi > lo {
                        let at = o + (c0 + i64::from(lo)) as u64 * self.strides[0];
                        f(first + u64::from(lo), Some(at), hi - lo);
                    }
                    if hi.max(lo) < n0 {
                        f(first + u64::from(hi.max(lo)), None, n0 - hi.max(lo));
                    }
                }
            }
            // The next box position past dimension 0, as an odometer.
            for (i, &count) in idx.iter_mut().zip(&self.counts).take(rank).skip(1) {
                *i += 1;
                if *i < count {
                    break;
                }
                *i = 0;
            }
        }
    }
}

/// A shared-memory swizzle: the 16-byte chunk index within a 128-byte row (address bits 4..)
/// XORed with the row's index (address bits 7..) over `bits` bits: 32-byte (1), 64-byte (2)
/// and 128-byte (3) swizzles, the patterns the PTX ISA draws for tensor copies (*Tensors:
/// Swizzling Modes*) and the wgmma and tcgen05 shared-memory layouts (*Shared Memory Matrix
/// Layout*, its `Swizzle<B,4,3>` on byte addresses).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Swizzle {
    pub bits: u32,
}

impl Swizzle {
    #[cfg_attr(not(test), allow(dead_code))]
    pub const NONE: Swizzle = Swizzle { bits: 0 };

    pub fn of_tma(m: TmaSwizzleMode) -> Swizzle {
        Swizzle {
            bits: match m {
                TmaSwizzleMode::None => 0,
                TmaSwizzleMode::B32 => 1,
                TmaSwizzleMode::B64 => 2,
                TmaSwizzleMode::B128 => 3,
            },
        }
    }

    /// The byte address `addr` lands at, the pattern's rows counted from `base_row` (the
    /// descriptors' base offset; 0 for a pattern aligned to its repeat).
    #[inline]
    pub fn apply(self, addr: u32, base_row: u32) -> u32 {
        if self.bits == 0 {
            return addr;
        }
        let mask = (1 << self.bits) - 1;
        addr ^ ((((addr >> 7).wrapping_sub(base_row)) & mask) << 4)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The PTX ISA's tables of the swizzled destination layout (*Tensors: Swizzling Modes*): in
    /// 16-byte chunks from an aligned start, row `r` holds chunk `c ^ r` (128-byte), `c ^ (r % 4)`
    /// (64-byte), `c ^ (r % 2)` (32-byte).
    #[test]
    fn swizzles_follow_the_isa_tables() {
        let row_128 = [
            [0, 1, 2, 3, 4, 5, 6, 7],
            [1, 0, 3, 2, 5, 4, 7, 6],
            [2, 3, 0, 1, 6, 7, 4, 5],
        ];
        for (r, row) in row_128.iter().enumerate() {
            for (c, &want) in row.iter().enumerate() {
                let a = (r * 128 + c * 16) as u32;
                assert_eq!(
                    Swizzle { bits: 3 }.apply(a, 0),
                    (r * 128 + want * 16) as u32
                );
            }
        }
        // Row 3 of 64-byte: 3 2 1 0 7 6 5 4; row 4 repeats row 0.
        assert_eq!(Swizzle { bits: 2 }.apply(3 * 128, 0), 3 * 128 + 3 * 16);
        assert_eq!(Swizzle { bits: 2 }.apply(4 * 128 + 16, 0), 4 * 128 + 16);
        // Row 1 of 32-byte: 1 0 3 2 ...
        assert_eq!(
            Swizzle { bits: 1 }.apply(128 + 2 * 16 + 5, 0),
            128 + 3 * 16 + 5
        );
        assert_eq!(Swizzle::NONE.apply(1234, 0), 1234);
        // A pattern starting at row 2 of its repeat (base offset 2) swizzles its first row as
        // row 0.
        assert_eq!(Swizzle { bits: 3 }.apply(2 * 128 + 16, 2), 2 * 128 + 16);
    }

    #[test]
    fn boxes_clip_at_the_tensor() {
        let mut mem = Memory::new();
        let b = mem.alloc_zeroed("t", 2 * 10 * 6);
        let d = TmaDescriptor {
            elem: ValType::F16,
            global_dims: vec![10, 6],
            global_strides_bytes: vec![20],
            box_dims: vec![8, 4],
            element_strides: vec![1, 1],
            swizzle: TmaSwizzleMode::None,
            l2_promotion: Default::default(),
        };
        let m = TmaMap::resolve(&TensorMapArg::new(b, d.clone()), &mem).unwrap();
        assert_eq!(m.box_bytes(), 64);
        let mut seen = Vec::new();
        m.for_each_run(&[4, 4], |i, off, n| seen.push((i, off, n)));
        // Row 4, columns 4..=9 inside, 10 and 11 outside; row 5 the same; rows 6 and 7 outside.
        assert_eq!(
            seen,
            [
                (0, Some(4 * 20 + 4 * 2), 6),
                (6, None, 2),
                (8, Some(5 * 20 + 4 * 2), 6),
                (14, None, 2),
                (16, None, 8),
                (24, None, 8)
            ]
        );
        seen.clear();
        m.for_each_run(&[-3, -1], |i, off, n| seen.push((i, off, n)));
        assert_eq!(&seen[..3], [(0, None, 8), (8, None, 3), (11, Some(0), 5)]);
        let too_big = TmaDescriptor {
            global_dims: vec![10, 7],
            ..d
        };
        let e = TmaMap::resolve(&TensorMapArg::new(b, too_big), &mem).unwrap_err();
        assert!(e.contains("spans"), "{e}");
    }
}
