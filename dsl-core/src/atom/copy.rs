//! Copy atoms: one instruction's thread-value layouts in bits (CuTe's `Copy_Traits`,
//! `include/cute/atom/copy_traits*.hpp`) and the same layouts recast to an element type (CuTe's
//! `Copy_Atom<Traits, T>`, `include/cute/atom/copy_atom.hpp`).

use std::fmt;

use super::value::ValType;
use crate::layout::{recast_layout, Layout, LayoutError};

/// Which copy instruction an atom issues; codegen matches on it.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum CopyOp {
    /// `UniversalCopy<uintN_t>`: a plain load/store of `bits` (8, 16, 32, 64 or 128) per thread.
    UniversalCopy {
        /// Width of the access.
        bits: u32,
    },
    /// `SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>`: `cp.async.cg.shared.global` (16 bytes only).
    CpAsyncCacheGlobal {
        /// Width of the access (128).
        bits: u32,
    },
    /// `SM80_CP_ASYNC_CACHEALWAYS<uintN_t>`: `cp.async.ca.shared.global` of 4, 8 or 16 bytes.
    CpAsyncCacheAlways {
        /// Width of the access (32, 64 or 128).
        bits: u32,
    },
    /// `SM75_U32x{1,2,4}_LDSM_N`: `ldmatrix.sync.aligned.x{n}.m8n8.shared.b16`.
    LdsmN {
        /// Number of 8x8 matrices (1, 2, 4).
        n: u32,
    },
    /// `SM75_U16x{2,4,8}_LDSM_T`: `ldmatrix.sync.aligned.x{n}.trans.m8n8.shared.b16`.
    LdsmT {
        /// Number of 8x8 matrices (1, 2, 4); CuTe's name counts 16-bit values (2n).
        n: u32,
    },
    /// `SM90_U32x{1,2,4}_STSM_N`: `stmatrix.sync.aligned.x{n}.m8n8.shared.b16`.
    StsmN {
        /// Number of 8x8 matrices (1, 2, 4).
        n: u32,
    },
}

impl CopyOp {
    /// Every copy operation rute knows, in a fixed order.
    pub fn all() -> Vec<CopyOp> {
        let mut v = Vec::new();
        for bits in [8, 16, 32, 64, 128] {
            v.push(CopyOp::UniversalCopy { bits });
        }
        v.push(CopyOp::CpAsyncCacheGlobal { bits: 128 });
        for bits in [32, 64, 128] {
            v.push(CopyOp::CpAsyncCacheAlways { bits });
        }
        for n in [1, 2, 4] {
            v.push(CopyOp::LdsmN { n });
        }
        for n in [1, 2, 4] {
            v.push(CopyOp::LdsmT { n });
        }
        for n in [1, 2, 4] {
            v.push(CopyOp::StsmN { n });
        }
        v
    }

    /// CuTe's name (`SM75_U32x4_LDSM_N`, `SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>`, ...).
    pub fn cute_name(self) -> String {
        let uint = |bits: u32| {
            ValType::uint_of_bits(bits)
                .map(ValType::cute_name)
                .unwrap_or("?")
        };
        match self {
            CopyOp::UniversalCopy { bits } => format!("UniversalCopy<{}>", uint(bits)),
            CopyOp::CpAsyncCacheGlobal { bits } => {
                format!("SM80_CP_ASYNC_CACHEGLOBAL<{}>", uint(bits))
            }
            CopyOp::CpAsyncCacheAlways { bits } => {
                format!("SM80_CP_ASYNC_CACHEALWAYS<{}>", uint(bits))
            }
            CopyOp::LdsmN { n } => format!("SM75_U32x{n}_LDSM_N"),
            CopyOp::LdsmT { n } => format!("SM75_U16x{}_LDSM_T", 2 * n),
            CopyOp::StsmN { n } => format!("SM90_U32x{n}_STSM_N"),
        }
    }

    /// Whether CuTe defines this operation (the widths its `static_assert`s allow).
    pub fn is_valid(self) -> bool {
        match self {
            CopyOp::UniversalCopy { bits } => ValType::uint_of_bits(bits).is_some(),
            CopyOp::CpAsyncCacheGlobal { bits } => bits == 128,
            CopyOp::CpAsyncCacheAlways { bits } => matches!(bits, 32 | 64 | 128),
            CopyOp::LdsmN { n } | CopyOp::LdsmT { n } | CopyOp::StsmN { n } => {
                matches!(n, 1 | 2 | 4)
            }
        }
    }

    /// The traits of this operation; `None` for a width CuTe does not define.
    pub fn traits(self) -> Option<CopyTraits> {
        if !self.is_valid() {
            return None;
        }
        let l = |s: &str| -> Layout {
            // Trait layouts are constants of this file: failing to parse one is a bug in rute.
            s.parse()
                .unwrap_or_else(|e| panic!("copy trait constant `{s}`: {e}"))
        };
        let per_thread = |bits: u32| CopyTraits {
            op: self,
            thr_id: l("1:1"),
            src: l(&format!("(1,{bits}):(1,1)")),
            dst: l(&format!("(1,{bits}):(1,1)")),
            reference: l(&format!("(1,{bits}):(1,1)")),
        };
        // ldmatrix: the source is one 128-bit row address per thread (threads past the matrices
        // the instruction reads are broadcast with stride 0); the destination is 32 bits per
        // thread per matrix, matrix j at bit 1024*j.
        let ldsm_src = |n: u32| match n {
            1 => l("((8,4),128):((128,0),1)"),
            2 => l("((16,2),128):((128,0),1)"),
            _ => l("(32,128):(128,1)"),
        };
        let ldsm_n_dst = |n: u32| match n {
            1 => l("(32,32):(32,1)"),
            2 => l("(32,(32,2)):(32,(1,1024))"),
            _ => l("(32,(32,4)):(32,(1,1024))"),
        };
        let ldsm_t_dst = |n: u32| match n {
            1 => l("((4,8),(16,2)):((256,16),(1,128))"),
            2 => l("((4,8),(16,2,2)):((256,16),(1,128,1024))"),
            _ => l("((4,8),(16,2,4)):((256,16),(1,128,1024))"),
        };
        Some(match self {
            CopyOp::UniversalCopy { bits }
            | CopyOp::CpAsyncCacheGlobal { bits }
            | CopyOp::CpAsyncCacheAlways { bits } => per_thread(bits),
            CopyOp::LdsmN { n } => CopyTraits {
                op: self,
                thr_id: l("32:1"),
                src: ldsm_src(n),
                dst: ldsm_n_dst(n),
                reference: ldsm_n_dst(n),
            },
            CopyOp::LdsmT { n } => CopyTraits {
                op: self,
                thr_id: l("32:1"),
                src: ldsm_src(n),
                dst: ldsm_t_dst(n),
                reference: ldsm_t_dst(n),
            },
            // stmatrix is ldmatrix reversed: CuTe swaps LDSM_N's source and destination.
            CopyOp::StsmN { n } => CopyTraits {
                op: self,
                thr_id: l("32:1"),
                src: ldsm_n_dst(n),
                dst: ldsm_src(n),
                reference: ldsm_n_dst(n),
            },
        })
    }
}

impl fmt::Display for CopyOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.cute_name())
    }
}

/// CuTe's `Copy_Traits<Op>`: layouts from `(thread, value)` to a *bit* of an abstract reference
/// order. Only the relations between them matter: `TiledCopy` maps reference `(thr, val)` to the
/// source's or destination's through `right_inverse(reference) o src`.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct CopyTraits {
    /// The operation.
    pub op: CopyOp,
    /// `ThrID`: logical thread -> thread index.
    pub thr_id: Layout,
    /// `SrcLayout`: (thr, val) -> bit.
    pub src: Layout,
    /// `DstLayout`: (thr, val) -> bit.
    pub dst: Layout,
    /// `RefLayout`: (thr, val) -> bit; the layout a `TiledCopy`'s TV layout is written in.
    pub reference: Layout,
}

/// CuTe's `Copy_Atom<Copy_Traits<Op>, T>`: the traits with their layouts recast from bits to `T`.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct CopyAtom {
    /// The traits (bit layouts).
    pub traits: CopyTraits,
    /// The element type `T`.
    pub val_type: ValType,
    /// `ValLayoutSrc = recast_layout<uint1_t, T>(SrcLayout)`.
    pub val_layout_src: Layout,
    /// `ValLayoutDst = recast_layout<uint1_t, T>(DstLayout)`.
    pub val_layout_dst: Layout,
    /// `ValLayoutRef = recast_layout<uint1_t, T>(RefLayout)`.
    pub val_layout_ref: Layout,
}

impl CopyAtom {
    /// `Copy_Atom<Copy_Traits<op>, val_type>`.
    ///
    /// Fails (as CuTe's static assertions do) when `op` has no traits, when a bit layout does not
    /// recast to `val_type`, or when the recast layouts no longer have `size(ThrID)` threads in
    /// mode 0 (the type is wider than what one thread moves).
    pub fn new(op: CopyOp, val_type: ValType) -> Result<CopyAtom, LayoutError> {
        let traits = op.traits().ok_or_else(|| {
            LayoutError::precondition(
                "Copy_Atom",
                op.cute_name(),
                "CuTe defines no Copy_Traits for this width",
            )
        })?;
        let bits = val_type.bits();
        let recast = |l: &Layout| recast_layout(l, 1, bits);
        let (src, dst, reference) = (
            recast(&traits.src)?,
            recast(&traits.dst)?,
            recast(&traits.reference)?,
        );
        for (what, l) in [("Src", &src), ("Dst", &dst), ("Ref", &reference)] {
            if l.mode(0)?.size() != traits.thr_id.size() {
                return Err(LayoutError::precondition(
                    "Copy_Atom",
                    format!("{}, {}", op.cute_name(), val_type),
                    format!(
                        "the {what} layout recast to {val_type} is {l}, whose mode 0 is not the \
                         atom's {} threads: the operation is not valid for this value type",
                        traits.thr_id.size()
                    ),
                ));
            }
        }
        Ok(CopyAtom {
            traits,
            val_type,
            val_layout_src: src,
            val_layout_dst: dst,
            val_layout_ref: reference,
        })
    }

    /// The operation.
    pub fn op(&self) -> CopyOp {
        self.traits.op
    }

    /// `size(ThrID)`: threads that cooperate in one instruction.
    pub fn num_threads(&self) -> i64 {
        self.traits.thr_id.size()
    }

    /// CuTe's `NumValSrc`: values each thread provides (`size<1>(ValLayoutSrc)`).
    pub fn num_val_src(&self) -> i64 {
        self.val_layout_src.mode(1).map(|m| m.size()).unwrap_or(1)
    }

    /// CuTe's `NumValDst`: values each thread receives (`size<1>(ValLayoutDst)`).
    pub fn num_val_dst(&self) -> i64 {
        self.val_layout_dst.mode(1).map(|m| m.size()).unwrap_or(1)
    }

    /// Values per thread in the reference layout (`size<1>(ValLayoutRef)`).
    pub fn num_val_ref(&self) -> i64 {
        self.val_layout_ref.mode(1).map(|m| m.size()).unwrap_or(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::IntTuple;

    fn atom(op: CopyOp, t: ValType) -> CopyAtom {
        CopyAtom::new(op, t).unwrap()
    }

    #[test]
    fn every_op_has_cute_traits_of_the_right_size() {
        for op in CopyOp::all() {
            let t = op.traits().unwrap();
            // Source and destination cover the same bits, each once in the reference (ldmatrix
            // sources may name a row from several threads: CuTe broadcasts with stride 0).
            let bits = |l: &Layout| {
                let mut v = l.values();
                v.sort();
                v.dedup();
                v
            };
            assert_eq!(bits(&t.src), bits(&t.dst), "{op}");
            assert_eq!(bits(&t.reference).len() as i64, t.reference.size(), "{op}");
            assert_eq!(t.src.mode(0).unwrap().size(), t.thr_id.size(), "{op}");
        }
        assert!(CopyOp::CpAsyncCacheGlobal { bits: 64 }.traits().is_none());
        assert!(CopyOp::CpAsyncCacheAlways { bits: 16 }.traits().is_none());
        assert!(CopyOp::LdsmN { n: 3 }.traits().is_none());
    }

    #[test]
    fn names() {
        let names: Vec<String> = CopyOp::all().iter().map(|o| o.cute_name()).collect();
        for n in [
            "UniversalCopy<uint8_t>",
            "UniversalCopy<uint128_t>",
            "SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>",
            "SM80_CP_ASYNC_CACHEALWAYS<uint32_t>",
            "SM75_U32x1_LDSM_N",
            "SM75_U32x4_LDSM_N",
            "SM75_U16x2_LDSM_T",
            "SM75_U16x8_LDSM_T",
            "SM90_U32x2_STSM_N",
        ] {
            assert!(names.iter().any(|m| m == n), "{n}");
        }
    }

    // Expected recast layouts written from CuTe's definition of upcast by hand: a stride-1 mode of
    // extent s shrinks to s/16, larger strides divide by 16 (half_t = 16 bits).
    #[test]
    fn copy_atoms_recast_to_half_as_cute() {
        let a = atom(CopyOp::LdsmN { n: 4 }, ValType::F16);
        assert_eq!(a.val_layout_src.to_string(), "(32,8):(8,1)");
        assert_eq!(a.val_layout_dst.to_string(), "(32,(2,4)):(2,(1,64))");
        assert_eq!((a.num_val_src(), a.num_val_dst()), (8, 8));

        let a = atom(CopyOp::LdsmN { n: 1 }, ValType::F16);
        assert_eq!(a.val_layout_src.to_string(), "((8,4),8):((8,0),1)");
        assert_eq!(a.val_layout_dst.to_string(), "(32,2):(2,1)");

        let a = atom(CopyOp::LdsmT { n: 4 }, ValType::F16);
        assert_eq!(
            a.val_layout_dst.to_string(),
            "((4,8),(1,2,4)):((16,1),(1,8,64))"
        );
        assert_eq!((a.num_val_src(), a.num_val_dst()), (8, 8));

        let a = atom(CopyOp::StsmN { n: 2 }, ValType::F16);
        assert_eq!(a.val_layout_src.to_string(), "(32,(2,2)):(2,(1,64))");
        assert_eq!(a.val_layout_dst.to_string(), "((16,2),8):((8,0),1)");

        let a = atom(CopyOp::CpAsyncCacheGlobal { bits: 128 }, ValType::F16);
        assert_eq!(a.val_layout_src.to_string(), "(1,8):(1,1)");
        assert_eq!(a.num_val_src(), 8);
        let a = atom(CopyOp::UniversalCopy { bits: 32 }, ValType::F32);
        assert_eq!(a.num_val_dst(), 1);
    }

    /// ldmatrix (non-transposed), PTX ISA: thread `t` receives, for matrix `j`, the two 16-bit
    /// elements at row `t / 4`, columns `2 * (t % 4) + {0, 1}`; the row addresses of matrix `j` come
    /// from threads `8j..8j+7`. In bits, with 128-bit rows, destination value `(t, (e, j))` is bit
    /// `1024 j + 128 (t / 4) + 32 (t % 4) + 16 e`, which is source `(8j + t/4, 32 (t%4) + 16 e)`.
    #[test]
    fn ldsm_n_moves_rows_as_the_ptx_isa_says() {
        let a = atom(CopyOp::LdsmN { n: 4 }, ValType::F16);
        for t in 0..32 {
            for j in 0..4 {
                for e in 0..2 {
                    let dst = a
                        .val_layout_dst
                        .crd2idx(&IntTuple::Tuple(vec![
                            IntTuple::Int(t),
                            IntTuple::ints(&[e, j]),
                        ]))
                        .unwrap();
                    let src_thr = 8 * j + t / 4;
                    let src_val = 2 * (t % 4) + e;
                    let src = a
                        .val_layout_src
                        .crd2idx(&IntTuple::ints(&[src_thr, src_val]))
                        .unwrap();
                    assert_eq!(dst, src, "t {t} j {j} e {e}");
                }
            }
        }
    }

    #[test]
    fn a_type_wider_than_the_access_is_refused() {
        // 64-bit values would give ldmatrix 16 threads in mode 0, not 32.
        let e = CopyAtom::new(CopyOp::LdsmN { n: 4 }, ValType::U64).unwrap_err();
        assert!(e.to_string().contains("SM75_U32x4_LDSM_N"), "{e}");
    }
}
