//! Blackwell's MMA (`tcgen05.mma.kind::f16`, CuTe's `SM100_MMA_F16BF16_SS` and
//! `SM100_MMA_F16BF16_2x1SM_SS`: `include/cute/arch/mma_sm100_umma.hpp`,
//! `include/cute/atom/mma_traits_sm100.hpp`): one thread issues `D = A B (+ D)` for an
//! `M x N x 16` tile, A and B read from shared memory through UMMA descriptors
//! ([`super::umma`]), D in tensor memory (TMEM). The instruction is asynchronous: a
//! `tcgen05.commit` arrives on an mbarrier once this thread's MMAs issued before it are done.
//!
//! With `cta_group::2` the instruction spans the pair of blocks of a two-block cluster: issued by
//! one thread of the even block, it reads A's rows `0..M/2` and B's rows `0..N/2` from the even
//! block's shared memory and the other halves from the odd block's, at the same offsets, and
//! writes D's rows `0..M/2` to the even block's TMEM and the rest to the odd block's, at the same
//! TMEM address. CuTe's traits say so with two "threads" (the peers): `ThrID = 2`, A's
//! `(2,(M/2,K)):(M/2,(1,M))`.
//!
//! The shapes (PTX ISA 9.7.16.2.1, Table 39, dense `.kind::f16`): one block M = 64 or 128 with
//! N = 8..=256 in steps of 8; a pair M = 128 or 256 with N = 16..=256 in steps of 16; K = 16.
//!
//! The accumulator operand of an [`MmaCall`] is one `u32` register holding the TMEM address of
//! the instruction's D tile (CuTe's `tmem_frg`: D is not in registers);
//! [`crate::tensor::gemm_tmem`] makes it from a TMEM tensor.
//!
//! ```
//! use dsl_core::atom::{MmaAtom, Umma, ValType};
//! use dsl_core::ir::op::CtaGroup;
//! let one = MmaAtom::new(Umma::ss(128, 128, CtaGroup::One, ValType::F32, ValType::F16));
//! assert_eq!(one.name(), "SM100_MMA_F16BF16_SS<half_t,half_t,float,128,128,K,K>");
//! assert_eq!(one.a_layout.to_string(), "(1,(128,16)):(0,(1,128))");
//! let pair = MmaAtom::new(Umma::ss(256, 256, CtaGroup::Two, ValType::F32, ValType::BF16));
//! assert_eq!(pair.thr_id.to_string(), "2:1");
//! assert_eq!(pair.b_layout.to_string(), "(2,(128,16)):(128,(1,256))");
//! ```

use super::gmma::GmmaMajor;
use super::mma::{
    bad_call, constant, Accumulate, MmaCall, MmaOperation, MmaSource, MmaSourceKind, MmaTraits,
};
use super::umma::InstrDescriptor;
use super::value::ValType;
use crate::ir::op::{CtaGroup, MmaKind, Tcgen05, Tcgen05A};
use crate::ir::Operand;
use crate::kernel::emit;
use crate::layout::LayoutError;

/// `SM100_MMA_F16BF16{_2x1SM}_SS<A, B, D, M, N, a_major, b_major>`: one `tcgen05.mma.kind::f16`
/// with both operands in shared memory.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Umma {
    /// M of the instruction (for a pair of blocks, both blocks' rows).
    pub m: u32,
    /// N of the instruction.
    pub n: u32,
    /// One block or the pair.
    pub cta_group: CtaGroup,
    /// Accumulator type in TMEM: `F32`, or `F16`.
    pub d: ValType,
    /// A's and B's type: `F16` or `BF16`.
    pub ab: ValType,
    /// A's major in shared memory.
    pub a_major: GmmaMajor,
    /// B's major in shared memory.
    pub b_major: GmmaMajor,
}

impl Umma {
    /// K of every instruction: 256 bits of 16-bit elements.
    pub const K: u32 = 16;

    /// The atom with both operands K-major.
    pub fn ss(m: u32, n: u32, cta_group: CtaGroup, d: ValType, ab: ValType) -> Umma {
        Umma {
            m,
            n,
            cta_group,
            d,
            ab,
            a_major: GmmaMajor::K,
            b_major: GmmaMajor::K,
        }
    }

    /// Why the PTX ISA has no such instruction, if it has none (Table 39's shapes, the types of
    /// `.kind::f16`).
    pub fn check(&self) -> Result<(), String> {
        let (ms, step) = match self.cta_group {
            CtaGroup::One => ([64, 128], 8),
            CtaGroup::Two => ([128, 256], 16),
        };
        let blocks = self.cta_group.count();
        if !ms.contains(&self.m) {
            return Err(format!(
                "M = {} with {blocks} block(s): M is {} or {}",
                self.m, ms[0], ms[1]
            ));
        }
        if !self.n.is_multiple_of(step) || !(step..=256).contains(&self.n) {
            return Err(format!(
                "N = {} with {blocks} block(s): N is a multiple of {step} in {step}..=256",
                self.n
            ));
        }
        if self.d == ValType::F16 && self.ab != ValType::F16 {
            return Err("f16 accumulators take f16 inputs only".into());
        }
        self.instr_descriptor().map(|_| ())
    }

    /// The instruction descriptor (`idesc`).
    pub fn instr_descriptor(&self) -> Result<InstrDescriptor, String> {
        InstrDescriptor::dense(
            self.d,
            self.ab,
            (self.a_major, self.b_major),
            self.m,
            self.n,
        )
    }

    /// The rows of A (and of D) each block of the group holds.
    pub fn m_per_block(&self) -> u32 {
        self.m / self.cta_group.count()
    }

    /// The rows of B each block of the group holds.
    pub fn n_per_block(&self) -> u32 {
        self.n / self.cta_group.count()
    }
}

fn cute_type(t: ValType) -> &'static str {
    t.cute_name()
}

fn major_name(m: GmmaMajor) -> &'static str {
    match m {
        GmmaMajor::K => "K",
        GmmaMajor::MN => "MN",
    }
}

impl MmaOperation for Umma {
    /// CuTe's template spelling, `SM100_MMA_F16BF16_SS<half_t,half_t,float,128,128,K,K>` (the
    /// pair: `SM100_MMA_F16BF16_2x1SM_SS<...>`).
    fn name(&self) -> String {
        let pair = match self.cta_group {
            CtaGroup::One => "",
            CtaGroup::Two => "_2x1SM",
        };
        format!(
            "SM100_MMA_F16BF16{pair}_SS<{ab},{ab},{d},{},{},{},{}>",
            self.m,
            self.n,
            major_name(self.a_major),
            major_name(self.b_major),
            ab = cute_type(self.ab),
            d = cute_type(self.d),
        )
    }

    fn traits(&self) -> MmaTraits {
        let (m, n, k) = (i64::from(self.m), i64::from(self.n), i64::from(Self::K));
        let (thr_id, a, b, c) = match self.cta_group {
            // One thread issues for the whole tile: it "holds" every value.
            CtaGroup::One => (
                constant("1:0"),
                format!("(1,({m},{k})):(0,(1,{m}))"),
                format!("(1,({n},{k})):(0,(1,{n}))"),
                format!("(1,({m},{n})):(0,(1,{m}))"),
            ),
            // Peer p of the pair holds rows p*M/2.. of A and D, p*N/2.. of B.
            CtaGroup::Two => (
                constant("2:1"),
                format!("(2,({},{k})):({},(1,{m}))", m / 2, m / 2),
                format!("(2,({},{k})):({},(1,{n}))", n / 2, n / 2),
                format!("(2,({},{n})):({},(1,{m}))", m / 2, m / 2),
            ),
        };
        MmaTraits {
            shape_mnk: (m, n, k),
            thr_id,
            a_layout: constant(&a),
            b_layout: constant(&b),
            c_layout: constant(&c),
            val_types: (self.d, self.ab, self.ab, self.d),
            a_source: MmaSourceKind::Descriptor(self.a_major),
            b_source: MmaSourceKind::Descriptor(self.b_major),
        }
    }

    fn call(&self, call: &MmaCall) -> Result<(), LayoutError> {
        self.check().map_err(|why| bad_call(self, why))?;
        let idesc = self
            .instr_descriptor()
            .map_err(|why| bad_call(self, why))?
            .bits();
        let (MmaSource::Descriptor(a), MmaSource::Descriptor(b)) = (&call.a, &call.b) else {
            return Err(bad_call(
                self,
                "A and B come from shared-memory descriptors (SS)",
            ));
        };
        let [d_tmem] = call.d.as_slice() else {
            return Err(bad_call(
                self,
                format!(
                    "accumulates in TMEM: one u32 register with the tile's TMEM address, not {} \
                     registers",
                    call.d.len()
                ),
            ));
        };
        let enable = match call.accumulate {
            Accumulate::Yes => Operand::Imm(1),
            Accumulate::No => Operand::Imm(0),
            Accumulate::When(p) => p.operand(),
        };
        emit(Tcgen05::Mma {
            cta_group: self.cta_group,
            kind: MmaKind::F16,
            d_tmem: Operand::Reg(*d_tmem),
            a: Tcgen05A::Desc(a.operand()),
            b_desc: b.operand(),
            idesc: Operand::Imm(i64::from(idesc)),
            enable_input_d: enable,
        });
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::atom::MmaAtom;
    use crate::layout::IntTuple;

    /// The layouts exactly as CuTe's `mma_traits_sm100.hpp` writes them for the one-block and
    /// the pair atoms.
    #[test]
    fn tv_layouts_are_cutes() {
        let one = MmaAtom::new(Umma::ss(64, 96, CtaGroup::One, ValType::F32, ValType::F16));
        assert_eq!(one.shape_mnk, (64, 96, 16));
        assert_eq!(one.thr_id.size(), 1);
        assert_eq!(one.b_layout.to_string(), "(1,(96,16)):(0,(1,96))");
        assert_eq!(one.c_layout.to_string(), "(1,(64,96)):(0,(1,64))");
        let pair = MmaAtom::new(Umma::ss(128, 64, CtaGroup::Two, ValType::F32, ValType::F16));
        assert_eq!(pair.a_layout.to_string(), "(2,(64,16)):(64,(1,128))");
        assert_eq!(pair.c_layout.to_string(), "(2,(64,64)):(64,(1,128))");
        assert_eq!(
            pair.val_types(),
            (ValType::F32, ValType::F16, ValType::F16, ValType::F32)
        );
    }

    /// Peer `p` of the pair names A's rows `p * M/2 .. (p+1) * M/2` (every K), each once: the
    /// block's half of the rows the hardware reads from its shared memory.
    #[test]
    fn each_peer_holds_its_half_of_the_rows() {
        let atom = MmaAtom::new(Umma::ss(
            256,
            128,
            CtaGroup::Two,
            ValType::F32,
            ValType::BF16,
        ));
        for (layout, rows, cols) in [(&atom.a_layout, 256, 16), (&atom.c_layout, 256, 128)] {
            for p in 0..2i64 {
                let mut seen = vec![false; (rows / 2 * cols) as usize];
                for v in 0..rows / 2 * cols {
                    let idx = layout
                        .crd2idx(&IntTuple::Tuple(vec![
                            IntTuple::Int(p),
                            IntTuple::ints(&[v % (rows / 2), v / (rows / 2)]),
                        ]))
                        .unwrap();
                    let (row, col) = (idx % rows, idx / rows);
                    assert_eq!(row / (rows / 2), p, "peer {p} value {v}: row {row}");
                    let local = (row % (rows / 2) + rows / 2 * col) as usize;
                    assert!(!seen[local], "peer {p}: ({row}, {col}) twice");
                    seen[local] = true;
                }
                assert!(seen.iter().all(|&s| s), "peer {p} misses rows of its half");
            }
        }
    }

    #[test]
    fn the_shapes_are_table_39s() {
        let f = |m, n, g| Umma::ss(m, n, g, ValType::F32, ValType::F16).check();
        for n in (8..=256).step_by(8) {
            assert!(f(64, n, CtaGroup::One).is_ok() && f(128, n, CtaGroup::One).is_ok());
            let pair_ok = n % 16 == 0;
            assert_eq!(f(128, n, CtaGroup::Two).is_ok(), pair_ok, "N = {n}");
            assert_eq!(f(256, n, CtaGroup::Two).is_ok(), pair_ok, "N = {n}");
        }
        assert!(f(256, 128, CtaGroup::One)
            .unwrap_err()
            .contains("M is 64 or 128"));
        assert!(f(64, 128, CtaGroup::Two).is_err());
        assert!(f(128, 264, CtaGroup::One).is_err());
        let half_acc = Umma::ss(128, 64, CtaGroup::One, ValType::F16, ValType::BF16);
        assert!(half_acc.check().is_err());
        assert!(Umma::ss(128, 64, CtaGroup::One, ValType::F16, ValType::F16)
            .check()
            .is_ok());
    }

    #[test]
    fn names() {
        let a = Umma {
            a_major: GmmaMajor::MN,
            ..Umma::ss(256, 128, CtaGroup::Two, ValType::F32, ValType::BF16)
        };
        assert_eq!(
            a.name(),
            "SM100_MMA_F16BF16_2x1SM_SS<bfloat16_t,bfloat16_t,float,256,128,MN,K>"
        );
    }
}
