//! SM80's warp-level `mma.sync.aligned.m16n8k16` (`include/cute/arch/mma_sm80.hpp`,
//! `mma_traits_sm80.hpp`): 32 threads, A and B from registers.

use super::mma::{
    bad_call, constant, Accumulate, MmaCall, MmaOperation, MmaSource, MmaSourceKind, MmaTraits,
};
use super::value::ValType;
use crate::ir::op::MmaSync;
use crate::ir::{Operand, Reg, Type};
use crate::kernel::emit;
use crate::layout::LayoutError;

/// The three SM80 16x8x16 atoms rute has.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Sm80Mma {
    /// `SM80_16x8x16_F16F16F16F16_TN`: `mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16`.
    F16F16F16F16,
    /// `SM80_16x8x16_F32F16F16F32_TN`: `mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32`.
    F32F16F16F32,
    /// `SM80_16x8x16_F32BF16BF16F32_TN`: `mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32`.
    F32BF16BF16F32,
}

impl Sm80Mma {
    /// Every SM80 MMA operation rute has.
    pub const ALL: [Sm80Mma; 3] = [
        Sm80Mma::F16F16F16F16,
        Sm80Mma::F32F16F16F32,
        Sm80Mma::F32BF16BF16F32,
    ];

    /// Element types `(D, A, B, C)` (CuTe's `ValTypeD/A/B/C`).
    pub fn val_types(self) -> (ValType, ValType, ValType, ValType) {
        match self {
            Sm80Mma::F16F16F16F16 => (ValType::F16, ValType::F16, ValType::F16, ValType::F16),
            Sm80Mma::F32F16F16F32 => (ValType::F32, ValType::F16, ValType::F16, ValType::F32),
            Sm80Mma::F32BF16BF16F32 => (ValType::F32, ValType::BF16, ValType::BF16, ValType::F32),
        }
    }

    /// The full PTX opcode, e.g. `mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32` (TN means
    /// A row-major, B column-major: both K-major).
    pub fn ptx_opcode(self) -> String {
        let (d, a, b, c) = self.val_types();
        format!(
            "mma.sync.aligned.m16n8k16.row.col.{}.{}.{}.{}",
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
        let t = self.traits();
        let regs = |vals: i64, t: ValType| (vals as u32 * t.bits()).div_ceil(32);
        let vals = |l: &crate::layout::Layout| l.mode(1).map(|m| m.size()).unwrap_or(0);
        (
            regs(vals(&t.c_layout), d),
            regs(vals(&t.a_layout), a),
            regs(vals(&t.b_layout), b),
            regs(vals(&t.c_layout), c),
        )
    }

    fn ir_types(self) -> (Type, Type) {
        match self {
            Sm80Mma::F16F16F16F16 => (Type::F16, Type::F16),
            Sm80Mma::F32F16F16F32 => (Type::F16, Type::F32),
            Sm80Mma::F32BF16BF16F32 => (Type::BF16, Type::F32),
        }
    }
}

impl MmaOperation for Sm80Mma {
    fn name(&self) -> String {
        match self {
            Sm80Mma::F16F16F16F16 => "SM80_16x8x16_F16F16F16F16_TN",
            Sm80Mma::F32F16F16F32 => "SM80_16x8x16_F32F16F16F32_TN",
            Sm80Mma::F32BF16BF16F32 => "SM80_16x8x16_F32BF16BF16F32_TN",
        }
        .to_string()
    }

    fn traits(&self) -> MmaTraits {
        // All three share the F16F16F16F16 traits (CuTe derives the other two from it and only
        // changes value types).
        MmaTraits {
            shape_mnk: (16, 8, 16),
            thr_id: constant("32:1"),
            a_layout: constant("((4,8),(2,2,2)):((32,1),(16,8,128))"),
            b_layout: constant("((4,8),(2,2)):((16,1),(8,64))"),
            // CuTe's SM80_16x8_Row.
            c_layout: constant("((4,8),(2,2)):((32,1),(16,8))"),
            val_types: self.val_types(),
            a_source: MmaSourceKind::Registers,
            b_source: MmaSourceKind::Registers,
        }
    }

    fn call(&self, call: &MmaCall) -> Result<(), LayoutError> {
        let regs = |s: &MmaSource| -> Result<Vec<Reg>, LayoutError> {
            match s {
                MmaSource::Registers(r) => Ok(r.clone()),
                MmaSource::Descriptor(_) => {
                    Err(bad_call(self, "mma.sync reads A and B from registers"))
                }
            }
        };
        if !matches!(call.accumulate, Accumulate::Yes) {
            return Err(bad_call(
                self,
                "mma.sync always adds C: clear the accumulators instead of overwriting them",
            ));
        }
        let (ab_ty, acc_ty) = self.ir_types();
        let (dn, an, bn, _) = self.regs_dabc();
        let (a, b) = (regs(&call.a)?, regs(&call.b)?);
        if (call.d.len(), a.len(), b.len()) != (dn as usize, an as usize, bn as usize) {
            return Err(bad_call(
                self,
                format!(
                    "takes {dn}, {an} and {bn} registers for D, A and B, not {}, {} and {}",
                    call.d.len(),
                    a.len(),
                    b.len()
                ),
            ));
        }
        emit(MmaSync {
            ab_ty,
            acc_ty,
            d: call.d.clone(),
            a,
            b,
            c: call.d.iter().copied().map(Operand::Reg).collect(),
        });
        Ok(())
    }
}
#[cfg(test)]
mod tests {
    use super::*;
    use crate::atom::MmaAtom;
    use crate::layout::{IntTuple, Layout};

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
        for op in Sm80Mma::ALL {
            let a = MmaAtom::new(op);
            assert_eq!(a.num_threads(), 32);
            check(&a.a_layout, 16, ptx_a);
            check(&a.b_layout, 8, ptx_b);
            check(&a.c_layout, 16, ptx_c);
        }
    }

    #[test]
    fn layouts_print_as_cute_writes_them() {
        let a = MmaAtom::new(Sm80Mma::F16F16F16F16);
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
            Sm80Mma::F32BF16BF16F32.ptx_opcode(),
            "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"
        );
        assert_eq!(Sm80Mma::F16F16F16F16.regs_dabc(), (2, 4, 2, 2));
        assert_eq!(Sm80Mma::F32F16F16F32.regs_dabc(), (4, 4, 2, 4));
    }
}
