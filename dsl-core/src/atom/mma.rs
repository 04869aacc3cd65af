//! MMA atoms: one warp-level `mma.sync` and its thread-value layouts, as CuTe's `MMA_Traits`
//! (`include/cute/atom/mma_traits_sm80.hpp`) define them.

use std::fmt;

use super::value::ValType;
use crate::layout::{IntTuple, Layout};

/// Which PTX `mma.sync` an atom issues; codegen matches on it.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum MmaOp {
    /// `SM80_16x8x16_F16F16F16F16_TN`: `mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16`.
    Sm80_16x8x16F16F16F16F16Tn,
    /// `SM80_16x8x16_F32F16F16F32_TN`: `mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32`.
    Sm80_16x8x16F32F16F16F32Tn,
    /// `SM80_16x8x16_F32BF16BF16F32_TN`: `mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32`.
    Sm80_16x8x16F32Bf16Bf16F32Tn,
}

impl MmaOp {
    /// Every MMA operation rute knows.
    pub const ALL: [MmaOp; 3] = [
        MmaOp::Sm80_16x8x16F16F16F16F16Tn,
        MmaOp::Sm80_16x8x16F32F16F16F32Tn,
        MmaOp::Sm80_16x8x16F32Bf16Bf16F32Tn,
    ];

    /// CuTe's name of the operation.
    pub fn cute_name(self) -> &'static str {
        match self {
            MmaOp::Sm80_16x8x16F16F16F16F16Tn => "SM80_16x8x16_F16F16F16F16_TN",
            MmaOp::Sm80_16x8x16F32F16F16F32Tn => "SM80_16x8x16_F32F16F16F32_TN",
            MmaOp::Sm80_16x8x16F32Bf16Bf16F32Tn => "SM80_16x8x16_F32BF16BF16F32_TN",
        }
    }

    /// Element types `(D, A, B, C)` (CuTe's `ValTypeD/A/B/C`).
    pub fn val_types(self) -> (ValType, ValType, ValType, ValType) {
        match self {
            MmaOp::Sm80_16x8x16F16F16F16F16Tn => {
                (ValType::F16, ValType::F16, ValType::F16, ValType::F16)
            }
            MmaOp::Sm80_16x8x16F32F16F16F32Tn => {
                (ValType::F32, ValType::F16, ValType::F16, ValType::F32)
            }
            MmaOp::Sm80_16x8x16F32Bf16Bf16F32Tn => {
                (ValType::F32, ValType::BF16, ValType::BF16, ValType::F32)
            }
        }
    }

    /// The PTX shape qualifier (`m16n8k16`).
    pub fn ptx_shape(self) -> &'static str {
        "m16n8k16"
    }

    /// The full PTX opcode, e.g. `mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32` (TN means A
    /// row-major, B column-major: both K-major).
    pub fn ptx_opcode(self) -> String {
        let (d, a, b, c) = self.val_types();
        format!(
            "mma.sync.aligned.{}.row.col.{}.{}.{}.{}",
            self.ptx_shape(),
            d.short_name(),
            a.short_name(),
            b.short_name(),
            c.short_name()
        )
    }

    /// Number of 32-bit registers per thread for the operands `(D, A, B, C)` of one instruction
    /// (the values of the TV layouts packed into `b32`s).
    pub fn regs_dabc(self) -> (u32, u32, u32, u32) {
        let (d, a, b, c) = self.val_types();
        let atom = MmaAtom::new(self);
        let regs = |vals: i64, t: ValType| (vals as u32 * t.bits()).div_ceil(32);
        (
            regs(atom.c_layout.mode(1).map(|m| m.size()).unwrap_or(0), d),
            regs(atom.a_layout.mode(1).map(|m| m.size()).unwrap_or(0), a),
            regs(atom.b_layout.mode(1).map(|m| m.size()).unwrap_or(0), b),
            regs(atom.c_layout.mode(1).map(|m| m.size()).unwrap_or(0), c),
        )
    }
}

impl fmt::Display for MmaOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.cute_name())
    }
}

fn constant(text: &str) -> Layout {
    // Trait layouts are constants of this file: failing to parse one is a bug in rute.
    text.parse()
        .unwrap_or_else(|e| panic!("atom constant `{text}`: {e}"))
}

/// CuTe's `MMA_Atom<MMA_Traits<Op>>`: the operation and its layouts.
///
/// `a_layout: (thr, val) -> (m, k)` index in the column-major `(M, K)` tile of the atom, likewise
/// `b_layout` into `(N, K)` and `c_layout` into `(M, N)`; `thr_id` maps the logical thread to the
/// thread index within the warp.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct MmaAtom {
    /// The PTX operation.
    pub op: MmaOp,
    /// CuTe's `Shape_MNK`.
    pub shape_mnk: (i64, i64, i64),
    /// CuTe's `ThrID`.
    pub thr_id: Layout,
    /// CuTe's `ALayout` (`LayoutA_TV`).
    pub a_layout: Layout,
    /// CuTe's `BLayout` (`LayoutB_TV`).
    pub b_layout: Layout,
    /// CuTe's `CLayout` (`LayoutC_TV`).
    pub c_layout: Layout,
}

impl MmaAtom {
    /// The atom of `op`, with the layouts of CuTe's `MMA_Traits<op>`.
    pub fn new(op: MmaOp) -> MmaAtom {
        // All three SM80 16x8x16 atoms share the F16F16F16F16 traits (CuTe derives the other two
        // from it and only changes value types).
        MmaAtom {
            op,
            shape_mnk: (16, 8, 16),
            thr_id: constant("32:1"),
            a_layout: constant("((4,8),(2,2,2)):((32,1),(16,8,128))"),
            b_layout: constant("((4,8),(2,2)):((16,1),(8,64))"),
            // CuTe's SM80_16x8_Row.
            c_layout: constant("((4,8),(2,2)):((32,1),(16,8))"),
        }
    }

    /// CuTe's `Shape_MNK` as an `IntTuple`.
    pub fn shape_mnk_tuple(&self) -> IntTuple {
        let (m, n, k) = self.shape_mnk;
        IntTuple::ints(&[m, n, k])
    }

    /// Number of threads (`size(ThrID)`).
    pub fn num_threads(&self) -> i64 {
        self.thr_id.size()
    }

    /// Element types `(D, A, B, C)`.
    pub fn val_types(&self) -> (ValType, ValType, ValType, ValType) {
        self.op.val_types()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The PTX ISA's fragment tables for `mma.m16n8k16` with 16-bit A/B (section "Matrix Fragments
    /// for mma.m16n8k16"), written out independently of CuTe: lane `t`, `groupID = t / 4`,
    /// `tig = t % 4`.
    fn ptx_a(t: i64, v: i64) -> (i64, i64) {
        // a0..a7: row = groupID (+8 for a2,a3,a6,a7), col = tig*2 + (v%2) (+8 for a4..a7).
        let row = t / 4 + if matches!(v, 2 | 3 | 6 | 7) { 8 } else { 0 };
        let col = (t % 4) * 2 + (v % 2) + if v >= 4 { 8 } else { 0 };
        (row, col)
    }
    fn ptx_b(t: i64, v: i64) -> (i64, i64) {
        // b0..b3: row (k) = tig*2 + (v%2) (+8 for b2,b3), col (n) = groupID.
        let k = (t % 4) * 2 + (v % 2) + if v >= 2 { 8 } else { 0 };
        (t / 4, k) // as (n, k)
    }
    fn ptx_c(t: i64, v: i64) -> (i64, i64) {
        // c0..c3: row = groupID (+8 for c2,c3), col = tig*2 + (v%2).
        (t / 4 + if v >= 2 { 8 } else { 0 }, (t % 4) * 2 + (v % 2))
    }

    fn check(l: &Layout, rows: i64, truth: fn(i64, i64) -> (i64, i64)) {
        let nv = l.mode(1).unwrap().size();
        let mut seen = vec![false; l.cosize() as usize];
        for t in 0..32 {
            for v in 0..nv {
                let idx = l.crd2idx(&IntTuple::ints(&[t, v])).unwrap();
                let (r, c) = truth(t, v);
                assert_eq!(
                    (idx % rows, idx / rows),
                    (r, c),
                    "thread {t} value {v} of {l}"
                );
                assert!(!seen[idx as usize]);
                seen[idx as usize] = true;
            }
        }
        assert!(seen.iter().all(|&s| s), "{l} is not onto its tile");
    }

    #[test]
    fn sm80_16x8x16_layouts_match_the_ptx_fragment_tables() {
        for op in MmaOp::ALL {
            let a = MmaAtom::new(op);
            assert_eq!(a.num_threads(), 32);
            check(&a.a_layout, 16, ptx_a);
            check(&a.b_layout, 8, ptx_b);
            check(&a.c_layout, 16, ptx_c);
        }
    }

    #[test]
    fn layouts_print_as_cute_writes_them() {
        let a = MmaAtom::new(MmaOp::Sm80_16x8x16F16F16F16F16Tn);
        assert_eq!(
            a.a_layout.to_string(),
            "((4,8),(2,2,2)):((32,1),(16,8,128))"
        );
        assert_eq!(a.b_layout.to_string(), "((4,8),(2,2)):((16,1),(8,64))");
        assert_eq!(a.c_layout.to_string(), "((4,8),(2,2)):((32,1),(16,8))");
    }

    #[test]
    fn opcodes_and_registers() {
        assert_eq!(
            MmaOp::Sm80_16x8x16F32Bf16Bf16F32Tn.ptx_opcode(),
            "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"
        );
        assert_eq!(MmaOp::Sm80_16x8x16F16F16F16F16Tn.regs_dabc(), (2, 4, 2, 2));
        assert_eq!(MmaOp::Sm80_16x8x16F32F16F16F32Tn.regs_dabc(), (4, 4, 2, 4));
    }
}
