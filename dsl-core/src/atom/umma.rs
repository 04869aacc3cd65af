//! Blackwell's fifth-generation tensor-core MMA (`tcgen05.mma`, CuTe's UMMA) is told what to
//! multiply by two descriptors: a 64-bit *shared-memory descriptor* per operand tile in shared
//! memory, and a 32-bit *instruction descriptor* naming the types, the majors and the shape.
//! Both are computed here on the host from layouts and types, never typed in.
//!
//! The shared-memory descriptor (PTX ISA 9.7.16.4.1, "Shared Memory Descriptor", Table 40):
//!
//! | bits | field |
//! |------|-------|
//! | 0-13 | start address >> 4 |
//! | 16-29 | leading-dimension byte offset >> 4 |
//! | 32-45 | stride-dimension byte offset >> 4 |
//! | 46-48 | the constant `0b001` (CuTe's `version_ = 1`) |
//! | 49-51 | base offset (0 when the tile starts on its swizzle pattern) |
//! | 52 | leading-dimension mode: 0 relative offset (sm_103a also has an absolute address) |
//! | 61-63 | swizzle: 0 none, 1 128-byte with 32-byte atoms, 2 128-byte, 4 64-byte, 6 32-byte |
//!
//! The canonical layouts the descriptor describes are Hopper's (CuTe's `UMMA::Layout_*_Atom` are
//! `GMMA::Layout_*_Atom`), and so are the start address, the two offsets and the base offset:
//! [`make_umma_desc`] checks the tile with [`make_gmma_desc`] and re-encodes the result. Even
//! the swizzle codes line up, 3 bits at 61 against Hopper's 2 bits at 62 (128-byte: 2 << 61 =
//! 1 << 62), so that a UMMA descriptor is the wgmma one plus bit 46.
//!
//! The instruction descriptor for `.kind::f16` (PTX ISA 9.7.16.4.2, "Instruction Descriptor",
//! Table 42): bits 4-5 D's type (0 f16, 1 f32), 7-9 A's and 10-12 B's (0 f16, 1 bf16), 13/14
//! negate A/B, 15/16 transpose A/B (1: MN-major), 17-22 N >> 3, 24-28 M >> 4; the sparsity bits
//! 0-2, saturation 3 and the `.ws` shift 30-31 are 0 for the dense MMA.
//!
//! ```
//! use dsl_core::atom::gmma::{gmma_atom, GmmaLayoutType, GmmaMajor};
//! use dsl_core::atom::umma::{make_umma_desc, InstrDescriptor, UmmaLayoutType};
//! use dsl_core::atom::ValType;
//! use dsl_core::layout::IntTuple;
//! // One 128x16 k-block of a K-major, 128-byte swizzled 128x64 tile of f16.
//! let tile = gmma_atom(GmmaMajor::K, GmmaLayoutType::B128, 2).unwrap()
//!     .tile_to_shape(&IntTuple::ints(&[128, 64]), None).unwrap();
//! let kblock = tile.compose(&"(128,16):(1,128)".parse().unwrap()).unwrap();
//! let desc = make_umma_desc(GmmaMajor::K, &kblock, 2).unwrap();
//! assert_eq!((desc.layout_type, desc.sbo, desc.lbo), (UmmaLayoutType::B128, 64, 1));
//! assert_eq!(desc.bits(0x400), 0x4000_4040_0001_0040);
//! // f16 x f16 -> f32, both K-major, 128 x 128.
//! let idesc = InstrDescriptor::dense(ValType::F32, ValType::F16, (GmmaMajor::K, GmmaMajor::K), 128, 128);
//! assert_eq!(idesc.unwrap().bits(), 0x0820_0010);
//! ```

use super::gmma::{make_gmma_desc, GmmaDescriptor, GmmaLayoutType, GmmaMajor};
use super::value::ValType;
use crate::layout::{ComposedLayout, LayoutError};

/// The descriptor's constant field at bits 46-48 (`0b001`): what tells a UMMA descriptor from a
/// wgmma one.
pub const UMMA_DESC_VERSION: u64 = 1 << 46;

/// The swizzle mode of a UMMA shared-memory descriptor, with the value of its 3-bit field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UmmaLayoutType {
    /// No swizzle: 8x16-byte core matrices.
    Interleave = 0,
    /// 128-byte swizzle.
    B128 = 2,
    /// 64-byte swizzle.
    B64 = 4,
    /// 32-byte swizzle.
    B32 = 6,
}

impl From<GmmaLayoutType> for UmmaLayoutType {
    fn from(t: GmmaLayoutType) -> Self {
        match t {
            GmmaLayoutType::Interleave => UmmaLayoutType::Interleave,
            GmmaLayoutType::B128 => UmmaLayoutType::B128,
            GmmaLayoutType::B64 => UmmaLayoutType::B64,
            GmmaLayoutType::B32 => UmmaLayoutType::B32,
        }
    }
}

/// The static part of a UMMA shared-memory descriptor: everything but the start address.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct UmmaDescriptor {
    /// The swizzle mode.
    pub layout_type: UmmaLayoutType,
    /// Leading-dimension byte offset in 16-byte units (relative mode).
    pub lbo: u16,
    /// Stride-dimension byte offset in 16-byte units.
    pub sbo: u16,
    /// The matrix base offset (3 bits; 0 for tiles whose swizzle pattern starts at their base).
    pub base_offset: u8,
}

impl UmmaDescriptor {
    /// The descriptor of the canonical layout Hopper's descriptor `g` describes.
    pub fn from_gmma(g: &GmmaDescriptor) -> UmmaDescriptor {
        UmmaDescriptor {
            layout_type: g.layout_type.into(),
            lbo: g.lbo,
            sbo: g.sbo,
            base_offset: g.base_offset,
        }
    }

    /// The 64-bit descriptor without its start address: OR in `(address >> 4) & 0x3FFF` on the
    /// device.
    pub fn static_bits(&self) -> u64 {
        (u64::from(self.lbo & 0x3FFF) << 16)
            | (u64::from(self.sbo & 0x3FFF) << 32)
            | UMMA_DESC_VERSION
            | (u64::from(self.base_offset & 7) << 49)
            | ((self.layout_type as u64) << 61)
    }

    /// The whole descriptor for a tile at shared-memory byte `address` (16-byte aligned).
    pub fn bits(&self, address: u32) -> u64 {
        self.static_bits() | u64::from((address >> 4) & 0x3FFF)
    }
}

/// CuTe's `make_umma_desc<Major>`: the descriptor of a rank-2 shared tile `(MN, K)` of one
/// `tcgen05.mma` k-block (K = 32 bytes of elements), which must be one of the canonical forms
/// ([`super::gmma::gmma_atom`] tiled with `tile_to_shape`). Errors name the tile and the rule it
/// breaks ([`make_gmma_desc`]'s sentences: the forms are the same).
pub fn make_umma_desc(
    major: GmmaMajor,
    tile: &ComposedLayout,
    elem_bytes: i64,
) -> Result<UmmaDescriptor, LayoutError> {
    make_gmma_desc(major, tile, elem_bytes).map(|g| UmmaDescriptor::from_gmma(&g))
}

/// The instruction descriptor of a dense `tcgen05.mma.kind::f16` (f16 or bf16 inputs, f16 or
/// f32 accumulation): what the instruction's `idesc` operand holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct InstrDescriptor {
    /// D's (and C's) type: `F16` or `F32`.
    pub d: ValType,
    /// A's and B's type: `F16` or `BF16`.
    pub ab: ValType,
    /// A's major in shared memory (MN-major is the "transpose A" bit).
    pub a_major: GmmaMajor,
    /// B's major (MN-major: "transpose B").
    pub b_major: GmmaMajor,
    /// Negate A.
    pub negate_a: bool,
    /// Negate B.
    pub negate_b: bool,
    /// M of the instruction (64, 128 or 256).
    pub m: u32,
    /// N of the instruction (a multiple of 8 up to 256).
    pub n: u32,
}

impl InstrDescriptor {
    /// The descriptor of `D(m x n) = A B (+ D)` with `d` accumulators, `ab` inputs and the two
    /// majors, nothing negated; an error where the field encodings have no such value (the
    /// shapes an instruction takes are the atom's to check: [`super::Umma::check`]).
    pub fn dense(
        d: ValType,
        ab: ValType,
        (a_major, b_major): (GmmaMajor, GmmaMajor),
        m: u32,
        n: u32,
    ) -> Result<InstrDescriptor, String> {
        let desc = InstrDescriptor {
            d,
            ab,
            a_major,
            b_major,
            negate_a: false,
            negate_b: false,
            m,
            n,
        };
        desc.fields().map(|_| desc)
    }

    /// The encoded fields `(d, a, b, n >> 3, m >> 4)`, or why one has no encoding.
    fn fields(&self) -> Result<(u32, u32, u32, u32, u32), String> {
        let d = match self.d {
            ValType::F16 => 0,
            ValType::F32 => 1,
            t => return Err(format!(".kind::f16 accumulates in f16 or f32, not {t}")),
        };
        let ab = match self.ab {
            ValType::F16 => 0,
            ValType::BF16 => 1,
            t => return Err(format!(".kind::f16 multiplies f16 or bf16, not {t}")),
        };
        if !self.n.is_multiple_of(8) || !(8..=256).contains(&self.n) {
            return Err(format!("N = {} has no encoding: N >> 3 in 1..=32", self.n));
        }
        if !self.m.is_multiple_of(16) || !(16..=496).contains(&self.m) {
            return Err(format!("M = {} has no encoding: M >> 4 in 1..=31", self.m));
        }
        Ok((d, ab, ab, self.n >> 3, self.m >> 4))
    }

    /// The 32-bit value (Table 42 of the PTX ISA).
    pub fn bits(&self) -> u32 {
        let (d, a, b, n, m) = self
            .fields()
            .expect("an InstrDescriptor is made by InstrDescriptor::dense, which checks it");
        let major = |x: GmmaMajor| u32::from(x == GmmaMajor::MN);
        (d << 4)
            | (a << 7)
            | (b << 10)
            | (u32::from(self.negate_a) << 13)
            | (u32::from(self.negate_b) << 14)
            | (major(self.a_major) << 15)
            | (major(self.b_major) << 16)
            | (n << 17)
            | (m << 24)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::atom::gmma::gmma_atom;
    use crate::layout::IntTuple;

    fn kblock(t: GmmaLayoutType, major: GmmaMajor, shape: (i64, i64)) -> ComposedLayout {
        let atom = gmma_atom(major, t, 2).unwrap();
        atom.tile_to_shape(&IntTuple::ints(&[shape.0, shape.1]), None)
            .unwrap()
            .compose(&format!("({},16):(1,{})", shape.0, shape.0).parse().unwrap())
            .unwrap()
    }

    /// Shared-memory descriptors written out by hand from Table 40 of the PTX ISA.
    ///
    /// K-major 128-byte swizzle, 16-bit elements, a 128x16 k-block at byte 0x400: start
    /// 0x400 >> 4 = 0x40 (bits 0-13), LBO unused for a swizzled K-major tile, 1 (bits 16-29:
    /// 0x1_0000), SBO 8 rows x 128 B = 1024 B, 1024 >> 4 = 64 (bits 32-45: 0x40_0000_0000),
    /// bit 46 set (0x4000_0000_0000), swizzle 2 at bit 61 (0x4000_0000_0000_0000):
    /// 0x4000_4040_0001_0040.
    ///
    /// K-major 64-byte swizzle at byte 0x1200: start 0x120, LBO 1, SBO 8 x 64 B = 512 B -> 32
    /// (0x20_0000_0000), swizzle 4 at bit 61 (0x8000_0000_0000_0000): 0x8000_4020_0001_0120.
    ///
    /// K-major 32-byte swizzle at 0: SBO 8 x 32 B = 256 B -> 16, swizzle 6 (0xC000_...):
    /// 0xC000_4010_0001_0000.
    #[test]
    fn smem_descriptors_are_the_ptx_tables() {
        let d = make_umma_desc(
            GmmaMajor::K,
            &kblock(GmmaLayoutType::B128, GmmaMajor::K, (128, 64)),
            2,
        )
        .unwrap();
        assert_eq!(d.bits(0x400), 0x4000_4040_0001_0040);
        let d = make_umma_desc(
            GmmaMajor::K,
            &kblock(GmmaLayoutType::B64, GmmaMajor::K, (128, 32)),
            2,
        )
        .unwrap();
        assert_eq!(d.bits(0x1200), 0x8000_4020_0001_0120);
        let d = make_umma_desc(
            GmmaMajor::K,
            &kblock(GmmaLayoutType::B32, GmmaMajor::K, (64, 16)),
            2,
        )
        .unwrap();
        assert_eq!(d.bits(0), 0xC000_4010_0001_0000);
        // The same tile's wgmma descriptor differs in bit 46 only.
        let tile = kblock(GmmaLayoutType::B128, GmmaMajor::K, (128, 64));
        let g = make_gmma_desc(GmmaMajor::K, &tile, 2).unwrap();
        let u = make_umma_desc(GmmaMajor::K, &tile, 2).unwrap();
        assert_eq!(u.bits(0x400) ^ g.bits(0x400), UMMA_DESC_VERSION);
    }

    /// An MN-major 128-byte swizzled 16-bit k-block (64 MN x 16 K): K steps of 8 rows of
    /// 128 B, SBO 1024 B -> 64; LBO spans the next 64 MN, none here: 0. No start address:
    /// 0x4000_4040_0000_0000.
    #[test]
    fn mn_major_descriptor() {
        let atom = gmma_atom(GmmaMajor::MN, GmmaLayoutType::B128, 2).unwrap();
        let tile = atom
            .tile_to_shape(&IntTuple::ints(&[64, 16]), None)
            .unwrap()
            .compose(&"(64,16):(1,64)".parse().unwrap())
            .unwrap();
        let d = make_umma_desc(GmmaMajor::MN, &tile, 2).unwrap();
        assert_eq!(d.bits(0), 0x4000_4040_0000_0000);
    }

    #[test]
    fn non_canonical_tiles_are_refused_with_the_rule() {
        let seed = ComposedLayout::new(
            crate::layout::Swizzle::new(3, 3, 3).unwrap(),
            0,
            "(64,16):(32,1)".parse().unwrap(),
        );
        let e = make_umma_desc(GmmaMajor::K, &seed, 2)
            .unwrap_err()
            .to_string();
        assert!(e.contains("make_gmma_desc"), "{e}");
    }

    /// Instruction descriptors written out by hand from Table 42 of the PTX ISA.
    ///
    /// - f16 x f16 -> f32, K-major, 128 x 128: D f32 = 1 << 4 (0x10), A = B = f16 = 0,
    ///   N >> 3 = 16 << 17 (0x20_0000), M >> 4 = 8 << 24 (0x800_0000): 0x0820_0010.
    /// - bf16 -> f32, 256 x 256 (the two-block MMA): 0x10 | bf16 1 << 7 (0x80) | 1 << 10
    ///   (0x400) | 32 << 17 (0x40_0000) | 16 << 24 (0x1000_0000): 0x1040_0490.
    /// - f16 -> f16, both MN-major, 64 x 8: D 0, transpose A 1 << 15 (0x8000), B 1 << 16
    ///   (0x1_0000), N >> 3 = 1 << 17 (0x2_0000), M >> 4 = 4 << 24 (0x400_0000): 0x0403_8000.
    #[test]
    fn instruction_descriptors_are_the_ptx_table() {
        let k = (GmmaMajor::K, GmmaMajor::K);
        let bits =
            |d, ab, majors, m, n| InstrDescriptor::dense(d, ab, majors, m, n).unwrap().bits();
        assert_eq!(bits(ValType::F32, ValType::F16, k, 128, 128), 0x0820_0010);
        assert_eq!(bits(ValType::F32, ValType::BF16, k, 256, 256), 0x1040_0490);
        let mn = (GmmaMajor::MN, GmmaMajor::MN);
        assert_eq!(bits(ValType::F16, ValType::F16, mn, 64, 8), 0x0403_8000);
        let neg = InstrDescriptor {
            negate_a: true,
            negate_b: true,
            ..InstrDescriptor::dense(ValType::F32, ValType::F16, k, 128, 128).unwrap()
        };
        assert_eq!(neg.bits(), 0x0820_0010 | 0x2000 | 0x4000);
    }

    #[test]
    fn descriptors_without_an_encoding_are_refused() {
        let k = (GmmaMajor::K, GmmaMajor::K);
        assert!(InstrDescriptor::dense(ValType::F32, ValType::F32, k, 128, 128).is_err());
        assert!(InstrDescriptor::dense(ValType::BF16, ValType::BF16, k, 128, 128).is_err());
        assert!(InstrDescriptor::dense(ValType::F32, ValType::F16, k, 128, 260).is_err());
        assert!(InstrDescriptor::dense(ValType::F32, ValType::F16, k, 100, 128).is_err());
    }
}
