//! Hopper's warpgroup MMA (`wgmma`, CuTe's GMMA) reads A and B from shared memory through 64-bit
//! matrix descriptors. This module holds CuTe's canonical shared-memory atoms for them
//! (`GMMA::Layout_{K,MN}_{INTER,SW32,SW64,SW128}_Atom<T>`) and `make_gmma_desc`, which checks that
//! a tile is one of the canonical forms and computes the descriptor's static fields.
//!
//! rute's swizzles act on element offsets, CuTe's GMMA swizzles on byte addresses: the byte-level
//! `Swizzle<B,4,3>` is `Swizzle<B, 4 - log2(bytes), 3>` here (for 16-bit elements `Sw<3,3,3>`,
//! the multistage GEMM's shared atom).
//!
//! The descriptor (PTX ISA, "Matrix Descriptor Format"): bits 0-13 the start address >> 4, 16-29
//! the leading-dimension byte offset >> 4, 32-45 the stride-dimension byte offset >> 4, 49-51
//! the base offset, 62-63 the swizzle mode (0 interleave, 1 128B, 2 64B, 3 32B).
//!
//! ```
//! use dsl_core::atom::gmma::{gmma_atom, make_gmma_desc, GmmaLayoutType, GmmaMajor};
//! use dsl_core::layout::IntTuple;
//! // A 64x16 k-block of a K-major 128B-swizzled tile of 16-bit elements (rows of 64 elements).
//! let atom = gmma_atom(GmmaMajor::K, GmmaLayoutType::B128, 2).unwrap();
//! assert_eq!(atom.to_string(), "Sw<3,3,3> o 0 o (8,64):(64,1)");
//! let tile = atom.tile_to_shape(&IntTuple::ints(&[64, 64]), None).unwrap();
//! let kblock = tile.compose(&"(64,16):(1,64)".parse().unwrap()).unwrap();
//! let desc = make_gmma_desc(GmmaMajor::K, &kblock, 2).unwrap();
//! // 8 rows of 128 bytes between core-matrix groups; the leading offset is unused (1).
//! assert_eq!((desc.sbo, desc.lbo, desc.layout_type), (64, 1, GmmaLayoutType::B128));
//! assert_eq!(desc.bits(0x400), 0x4000_0040_0001_0040);
//! ```

use crate::layout::{
    logical_divide, upcast, ComposedLayout, IntTuple, Layout, LayoutError, Swizzle, Tiler,
};

/// Which dimension of the operand is contiguous in shared memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GmmaMajor {
    /// K contiguous (CuTe's `GMMA::Major::K`, "row-major A" / "column-major B").
    K,
    /// M (for A) or N (for B) contiguous (`GMMA::Major::MN`).
    MN,
}

/// The descriptor's swizzle mode, with the value of its 2-bit field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GmmaLayoutType {
    /// No swizzle: 8x16-byte core matrices.
    Interleave = 0,
    /// 128-byte swizzle.
    B128 = 1,
    /// 64-byte swizzle.
    B64 = 2,
    /// 32-byte swizzle.
    B32 = 3,
}

impl GmmaLayoutType {
    /// The byte-level swizzle's `B` (bits of the 16-byte chunk index it XORs).
    fn bits(self) -> u32 {
        match self {
            GmmaLayoutType::Interleave => 0,
            GmmaLayoutType::B32 => 1,
            GmmaLayoutType::B64 => 2,
            GmmaLayoutType::B128 => 3,
        }
    }

    /// 16-byte chunks per swizzled row (CuTe's `W`).
    fn width(self) -> i64 {
        1 << self.bits()
    }

    fn from_bits(b: u32) -> Option<GmmaLayoutType> {
        Some(match b {
            0 => GmmaLayoutType::Interleave,
            1 => GmmaLayoutType::B32,
            2 => GmmaLayoutType::B64,
            3 => GmmaLayoutType::B128,
            _ => return None,
        })
    }
}

/// The static part of a GMMA shared-memory descriptor: everything but the start address.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct GmmaDescriptor {
    /// The swizzle mode.
    pub layout_type: GmmaLayoutType,
    /// Leading-dimension byte offset in 16-byte units.
    pub lbo: u16,
    /// Stride-dimension byte offset in 16-byte units.
    pub sbo: u16,
    /// The matrix base offset (3 bits; 0 for tiles whose swizzle pattern starts at their base).
    pub base_offset: u8,
}

impl GmmaDescriptor {
    /// The 64-bit descriptor without its start address: OR in `(address >> 4) & 0x3FFF` on the
    /// device.
    pub fn static_bits(&self) -> u64 {
        (u64::from(self.lbo & 0x3FFF) << 16)
            | (u64::from(self.sbo & 0x3FFF) << 32)
            | (u64::from(self.base_offset & 7) << 49)
            | ((self.layout_type as u64) << 62)
    }

    /// The whole descriptor for a tile at shared-memory byte `address` (16-byte aligned).
    pub fn bits(&self, address: u32) -> u64 {
        self.static_bits() | u64::from((address >> 4) & 0x3FFF)
    }
}

/// log2 of a GMMA operand's element size: elements are 1, 2 or 4 bytes.
fn gmma_elem_log2(elem_bytes: i64) -> Option<u32> {
    matches!(elem_bytes, 1 | 2 | 4).then(|| elem_bytes.trailing_zeros())
}

/// CuTe's `GMMA::Layout_{K,MN}_{INTER,SW32,SW64,SW128}_Atom<T>` for elements of `elem_bytes`
/// (1, 2 or 4): K-major `(8, W*16/bytes):(W*16/bytes, 1)`, MN-major `(W*16/bytes, 8):(1, W*16/bytes)`,
/// under the element-level swizzle of the byte-level `Swizzle<B,4,3>`.
pub fn gmma_atom(
    major: GmmaMajor,
    layout_type: GmmaLayoutType,
    elem_bytes: i64,
) -> Result<ComposedLayout, LayoutError> {
    let lb = gmma_elem_log2(elem_bytes).ok_or_else(|| {
        LayoutError::precondition(
            "gmma_atom",
            format!("{elem_bytes}-byte elements"),
            "GMMA operands have 1-, 2- or 4-byte elements",
        )
    })?;
    let row = layout_type.width() * 16 / elem_bytes;
    let layout = match major {
        GmmaMajor::K => Layout::new(IntTuple::ints(&[8, row]), IntTuple::ints(&[row, 1]))?,
        GmmaMajor::MN => Layout::new(IntTuple::ints(&[row, 8]), IntTuple::ints(&[1, row]))?,
    };
    let swizzle = match layout_type {
        GmmaLayoutType::Interleave => Swizzle::identity(),
        t => Swizzle::new(i64::from(t.bits()), 4 - i64::from(lb), 3)?,
    };
    Ok(ComposedLayout::new(swizzle, 0, layout))
}

/// CuTe's `make_gmma_desc<Major>`: the descriptor of a rank-2 shared tile `(MN, K)` of one
/// wgmma k-block (K = 32 bytes of elements), which must be one of the canonical forms (see
/// [`gmma_atom`] and `tile_to_shape`). Errors name the tile and the rule it breaks.
pub fn make_gmma_desc(
    major: GmmaMajor,
    tile: &ComposedLayout,
    elem_bytes: i64,
) -> Result<GmmaDescriptor, LayoutError> {
    let fail = |rule: String| LayoutError::precondition("make_gmma_desc", tile.to_string(), rule);
    let lb = gmma_elem_log2(elem_bytes)
        .ok_or_else(|| fail(format!("{elem_bytes}-byte elements; GMMA takes 1, 2 or 4")))?;
    if tile.rank() != 2 {
        return Err(fail("a descriptor describes a rank-2 (MN, K) tile".into()));
    }
    if tile.offset != 0 {
        return Err(fail(
            "the tile starts inside its swizzle pattern (offset not 0)".into(),
        ));
    }
    let sw = tile.swizzle;
    let layout_type = if sw.is_identity() {
        GmmaLayoutType::Interleave
    } else {
        let ok = i64::from(sw.base()) == 4 - i64::from(lb) && sw.shift() == 3;
        match GmmaLayoutType::from_bits(sw.bits()) {
            Some(t) if ok => t,
            _ => {
                return Err(fail(format!(
                    "the swizzle is not GMMA's: for {elem_bytes}-byte elements it is Sw<B,{},3> \
                     with B in 0..=3",
                    4 - lb
                )))
            }
        }
    };
    // In 16-byte units, as CuTe recasts to uint128_t.
    let per_chunk = 16 / elem_bytes;
    let u128 = upcast(&tile.layout, per_chunk).map_err(|e| fail(e.to_string()))?;
    let w = layout_type.width();
    let stride = |l: &Layout, i: usize, j: usize| -> Result<i64, LayoutError> {
        let m = l.mode(i)?.mode(j)?;
        Ok(if m.size() == 1 {
            0
        } else {
            m.stride().flatten_ints()[0]
        })
    };
    let tiler = |a: i64, b: i64| Tiler::from_shape(&[a, b]);
    let (lbo, sbo) = match major {
        GmmaMajor::K => {
            let modes = u128.shape().modes();
            if modes[0].product() % 8 != 0 || modes[1].product() != 2 {
                return Err(fail(format!(
                    "a K-major k-block is (8n, {}) elements: {} in 16-byte units is not (8n, 2)",
                    2 * per_chunk,
                    u128
                )));
            }
            let c = logical_divide(&u128, &tiler(8, 2)?).map_err(|e| fail(e.to_string()))?;
            let (s00, s10) = (stride(&c, 0, 0)?, stride(&c, 1, 0)?);
            if s00 != w || (layout_type != GmmaLayoutType::Interleave && s10 != 1) {
                return Err(fail(format!(
                    "not a canonical K-major GMMA layout: in 16-byte units {c} needs stride {w} \
                     down the 8 rows and 1 along K"
                )));
            }
            (s10, stride(&c, 0, 1)?)
        }
        GmmaMajor::MN => {
            let k = u128.shape().modes()[1].product();
            if k != 32 / elem_bytes {
                return Err(fail(format!(
                    "an MN-major k-block has K = {} elements, not {k}",
                    32 / elem_bytes
                )));
            }
            let c = logical_divide(&u128, &tiler(w, 8)?).map_err(|e| fail(e.to_string()))?;
            let (s00, s10) = (stride(&c, 0, 0)?, stride(&c, 1, 0)?);
            if (layout_type != GmmaLayoutType::Interleave && s00 != 1) || s10 != w {
                return Err(fail(format!(
                    "not a canonical MN-major GMMA layout: in 16-byte units {c} needs stride 1 \
                     along MN and {w} down K"
                )));
            }
            let (s01, s11) = (stride(&c, 0, 1)?, stride(&c, 1, 1)?);
            if layout_type == GmmaLayoutType::Interleave {
                (s11, s01)
            } else {
                (s01, s11)
            }
        }
    };
    let field = |v: i64, what: &str| {
        u16::try_from(v)
            .ok()
            .filter(|&x| x < (1 << 14))
            .ok_or_else(|| {
                fail(format!(
                    "the {what} byte offset {} does not fit 14 bits of 16 bytes",
                    v * 16
                ))
            })
    };
    Ok(GmmaDescriptor {
        layout_type,
        lbo: field(lbo, "leading")?,
        sbo: field(sbo, "stride")?,
        base_offset: 0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kblock(atom: &ComposedLayout, shape: (i64, i64), k: &str) -> ComposedLayout {
        let tile = atom
            .tile_to_shape(&IntTuple::ints(&[shape.0, shape.1]), None)
            .unwrap();
        tile.compose(&k.parse().unwrap()).unwrap()
    }

    /// CuTe's atoms, in element units, for every swizzle and the three element sizes.
    #[test]
    fn atoms_are_cutes() {
        let cases = [
            (
                GmmaMajor::K,
                GmmaLayoutType::B128,
                2,
                "Sw<3,3,3> o 0 o (8,64):(64,1)",
            ),
            (
                GmmaMajor::K,
                GmmaLayoutType::B64,
                2,
                "Sw<2,3,3> o 0 o (8,32):(32,1)",
            ),
            (
                GmmaMajor::K,
                GmmaLayoutType::B32,
                2,
                "Sw<1,3,3> o 0 o (8,16):(16,1)",
            ),
            (GmmaMajor::K, GmmaLayoutType::Interleave, 2, "(8,8):(8,1)"),
            (
                GmmaMajor::MN,
                GmmaLayoutType::B128,
                2,
                "Sw<3,3,3> o 0 o (64,8):(1,64)",
            ),
            (
                GmmaMajor::K,
                GmmaLayoutType::B128,
                1,
                "Sw<3,4,3> o 0 o (8,128):(128,1)",
            ),
            (
                GmmaMajor::K,
                GmmaLayoutType::B128,
                4,
                "Sw<3,2,3> o 0 o (8,32):(32,1)",
            ),
        ];
        for (major, t, bytes, want) in cases {
            let got = gmma_atom(major, t, bytes).unwrap().to_string();
            assert!(
                got == want || got.ends_with(want),
                "{major:?} {t:?} {bytes}: {got}"
            );
        }
    }

    /// The descriptors hand-written Hopper GEMMs use for K-major 16-bit tiles: SW128 has SBO =
    /// 1024 B (8 rows of 128 B) and LBO = 1; SW64 SBO = 512 B; SW32 SBO = 256 B; interleave
    /// SBO = 8 rows of 16 B = 128 B and LBO = the distance between the two 16-byte K chunks.
    #[test]
    fn k_major_descriptors() {
        for (t, sbo) in [
            (GmmaLayoutType::B128, 64),
            (GmmaLayoutType::B64, 32),
            (GmmaLayoutType::B32, 16),
        ] {
            let atom = gmma_atom(GmmaMajor::K, t, 2).unwrap();
            let width = atom.layout.shape().modes()[1].product();
            let d = make_gmma_desc(
                GmmaMajor::K,
                &kblock(&atom, (64, width), "(64,16):(1,64)"),
                2,
            )
            .unwrap();
            assert_eq!((d.layout_type, d.sbo, d.lbo), (t, sbo, 1), "{t:?}");
        }
        // Interleave: core matrices of 8 rows x 16 bytes; (64, 16) tiled from (8,8) atoms
        // column-major: the second K chunk lies 8 row-groups (64 rows x 16 B) away.
        let atom = gmma_atom(GmmaMajor::K, GmmaLayoutType::Interleave, 2).unwrap();
        let d =
            make_gmma_desc(GmmaMajor::K, &kblock(&atom, (64, 16), "(64,16):(1,64)"), 2).unwrap();
        assert_eq!(
            (d.layout_type, d.sbo, d.lbo),
            (GmmaLayoutType::Interleave, 8, 64)
        );
        assert_eq!(d.bits(0), (64 << 16) | (8u64 << 32));
    }

    #[test]
    fn mn_major_descriptor() {
        // 128B-swizzled MN-major 16-bit: (64 MN, 16 K); rows of 64 elements along MN.
        let atom = gmma_atom(GmmaMajor::MN, GmmaLayoutType::B128, 2).unwrap();
        let d =
            make_gmma_desc(GmmaMajor::MN, &kblock(&atom, (64, 16), "(64,16):(1,64)"), 2).unwrap();
        assert_eq!(d.layout_type, GmmaLayoutType::B128);
        // K steps of 8 rows of 128 B: SBO = 1024 B; LBO spans the next 64 MN (none here: 0).
        assert_eq!((d.sbo, d.lbo), (64, 0));
    }

    #[test]
    fn non_canonical_tiles_are_refused() {
        // The multistage GEMM's seed atom has 64-byte rows under a 128-byte swizzle pattern.
        let seed = ComposedLayout::new(
            Swizzle::new(3, 3, 3).unwrap(),
            0,
            "(8,32):(32,1)".parse().unwrap(),
        );
        let tile = kblock(&seed, (64, 32), "(64,16):(1,64)");
        let e = make_gmma_desc(GmmaMajor::K, &tile, 2)
            .unwrap_err()
            .to_string();
        assert!(e.contains("not a canonical K-major GMMA layout"), "{e}");
        let wrong_swizzle = ComposedLayout::new(
            Swizzle::new(3, 4, 3).unwrap(),
            0,
            "(64,16):(64,1)".parse().unwrap(),
        );
        let e = make_gmma_desc(GmmaMajor::K, &wrong_swizzle, 2)
            .unwrap_err()
            .to_string();
        assert!(e.contains("the swizzle is not GMMA's"), "{e}");
        assert!(gmma_atom(GmmaMajor::K, GmmaLayoutType::B128, 3).is_err());
        let atom = gmma_atom(GmmaMajor::K, GmmaLayoutType::B128, 2).unwrap();
        let e = make_gmma_desc(GmmaMajor::K, &kblock(&atom, (64, 64), "(64,32):(1,64)"), 2)
            .unwrap_err()
            .to_string();
        assert!(e.contains("is not (8n, 2)"), "{e}");
    }
}
