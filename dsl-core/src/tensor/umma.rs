//! `gemm` into tensor memory with Blackwell's MMA (`tcgen05.mma`): the UMMA descriptor fragments
//! of shared-memory operands, and the accumulator in a [`TTensor`].
//!
//! One thread issues the MMA for its whole block (or, with a pair atom, for both blocks of the
//! pair); what it needs of A and B are descriptors of their k-blocks in shared memory, made from
//! the thread's partition exactly as Hopper's are ([`DescriptorFragment`]) and then marked as
//! UMMA descriptors ([`UMMA_DESC_VERSION`]: the fields are the same, [`crate::atom::umma`]).
//!
//! ```
//! use dsl_core::atom::gmma::{gmma_atom, GmmaLayoutType, GmmaMajor};
//! use dsl_core::atom::{Accumulate, MmaAtom, Umma, ValType};
//! use dsl_core::ir::op::CtaGroup;
//! use dsl_core::kernel::*;
//! use dsl_core::layout::{IntTuple, Layout};
//! use dsl_core::tensor::{gemm_tmem, Idx, STensor, TTensor, UmmaDescriptorFragment};
//! use dsl_core::tiled::make_tiled_mma;
//! use half::f16;
//! let umma = Umma::ss(128, 128, CtaGroup::One, ValType::F32, ValType::F16);
//! let mma = make_tiled_mma(MmaAtom::new(umma), &Layout::vector(1, 0).unwrap(), &[]).unwrap();
//! let tile = gmma_atom(GmmaMajor::K, GmmaLayoutType::B128, 2).unwrap()
//!     .tile_to_shape(&IntTuple::ints(&[128, 64]), None).unwrap();
//! let k = build_kernel("mma", |kb| {
//!     let smem = kb.dynamic_shared::<f16>(1024);
//!     let (sa, sb) = (STensor::new(smem, tile.clone()).unwrap(), STensor::new(smem + 8192u32, tile.clone()).unwrap());
//!     let ta = UmmaDescriptorFragment::new(&sa.partition_a(&mma, Var::konst(0)).unwrap(), GmmaMajor::K).unwrap();
//!     let tb = UmmaDescriptorFragment::new(&sb.partition_b(&mma, Var::konst(0)).unwrap(), GmmaMajor::K).unwrap();
//!     let acc = TTensor::accumulator(kb.param::<u32>("tmem"), &umma, 1).unwrap();
//!     let acc = acc.slice(&[Idx::All, Idx::All, Idx::At(0)]).unwrap();
//!     // A 128 x 64 k-tile is four instructions of K = 16, the first overwriting D.
//!     gemm_tmem(&mma, &acc, &ta, &tb, Accumulate::No).unwrap();
//! })
//! .unwrap();
//! ```

use super::mma::instruction_grid;
use super::{DescriptorFragment, MmaOperand, STensor, TTensor};
use crate::atom::gmma::GmmaMajor;
use crate::atom::umma::{make_umma_desc, UMMA_DESC_VERSION};
use crate::atom::{Accumulate, MmaCall, MmaSource, MmaSourceKind};
use crate::kernel::{DeviceType, Var};
use crate::layout::{ComposedLayout, Layout, LayoutError};
use crate::tiled::TiledMma;

/// The UMMA shared-memory descriptors of a thread's `(MMA, MMA_M|N, MMA_K)` partition of a
/// shared tile in a canonical layout (CuTe's `make_fragment_A/B` with a UMMA atom): one 64-bit
/// descriptor per instruction, the first computed once, the others a constant add away.
#[derive(Clone, Debug)]
pub struct UmmaDescriptorFragment {
    inner: DescriptorFragment,
    major: GmmaMajor,
}

impl UmmaDescriptorFragment {
    /// The descriptors of `part`, whose blocks are `major`-major; errors as
    /// [`DescriptorFragment::new`]'s (a block that is not a canonical layout, a first block off
    /// its swizzle pattern).
    pub fn new<T: DeviceType>(part: &STensor<T>, major: GmmaMajor) -> Result<Self, LayoutError> {
        let block = ComposedLayout::new(part.swizzle(), 0, part.layout().mode(0)?);
        make_umma_desc(major, &block, i64::from(T::TY.bytes()))?;
        Ok(UmmaDescriptorFragment {
            inner: DescriptorFragment::new(part, major)?,
            major,
        })
    }

    /// The descriptor of block `(i, k)`.
    pub fn at(&self, i: i64, k: i64) -> Result<Var<u64>, LayoutError> {
        // Bits 46-48 are 0 in the Hopper form: adding sets them, and folds with the block's
        // offset into one add.
        Ok(self.inner.at(i, k)? + UMMA_DESC_VERSION)
    }
}

impl MmaOperand for UmmaDescriptorFragment {
    fn fragment_layout(&self) -> &Layout {
        self.inner.fragment_layout()
    }
    fn source(&self, i: i64, k: i64) -> Result<MmaSource, LayoutError> {
        Ok(MmaSource::Descriptor(self.at(i, k)?))
    }
    fn kind(&self) -> MmaSourceKind {
        MmaSourceKind::Descriptor(self.major)
    }
}

fn bad(l: &Layout, msg: impl Into<String>) -> LayoutError {
    LayoutError::precondition("gemm_tmem", l.to_string(), msg.into())
}

/// CuTe's `gemm(tiled_mma, acc, a, b, acc)` for an accumulator in TMEM: `a` is `(MMA, MMA_M,
/// MMA_K)`, `b` `(MMA, MMA_N, MMA_K)` (UMMA descriptor fragments), `acc` the block's D tile
/// `(rows, columns)` for the `MMA_M x MMA_N` instructions (instruction `(m, n)` writes from
/// `acc`'s coordinate `(m * rows/MMA_M, n * columns/MMA_N)`). One `tcgen05.mma` per `(m, n, k)`,
/// k outer; the first k-block accumulates as `first` says, the rest add. One thread issues them.
pub fn gemm_tmem(
    mma: &TiledMma,
    acc: &TTensor,
    a: &impl MmaOperand,
    b: &impl MmaOperand,
    first: Accumulate,
) -> Result<(), LayoutError> {
    let (mm, nn, kk, kb) = instruction_grid("gemm_tmem", mma, acc.layout(), a, b)?;
    let (al, bl) = (a.fragment_layout(), b.fragment_layout());
    let cl = acc.layout();
    if kk != kb || cl.rank() != 2 {
        return Err(bad(
            cl,
            format!("the accumulator is (rows, columns), A {al} and B {bl} of one K"),
        ));
    }
    let (rows, cols) = (cl.mode(0)?.size(), cl.mode(1)?.size());
    let (m_atom, n_atom, _) = mma.atom.shape_mnk;
    // A block holds its share of the instruction's rows (half, for a pair of blocks).
    let m_block = m_atom / mma.atom.num_threads();
    if rows != mm * m_block || cols != nn * n_atom {
        return Err(bad(
            cl,
            format!(
                "is not {mm} x {nn} instruction tiles of {m_block} rows (this block's) x {n_atom} \
                 columns"
            ),
        ));
    }
    for k in 0..kk {
        let accumulate = if k == 0 { first } else { Accumulate::Yes };
        for n in 0..nn {
            for m in 0..mm {
                let at = cl.crd2idx(&crate::layout::IntTuple::ints(&[m * m_block, n * n_atom]))?;
                let d = acc.address_of_offset(at);
                mma.atom.call(&MmaCall {
                    d: vec![d.to_reg()],
                    a: a.source(m, k)?,
                    b: b.source(n, k)?,
                    accumulate,
                })?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::atom::gmma::{gmma_atom, GmmaLayoutType};
    use crate::atom::{MmaAtom, Umma, ValType};
    use crate::ir::op::{CtaGroup, Tcgen05, Tcgen05A};
    use crate::ir::{for_each_instr, Op, Operand};
    use crate::kernel::build_kernel;
    use crate::layout::IntTuple;
    use crate::tiled::make_tiled_mma;
    use half::f16;

    fn stage_tile(rows: i64) -> ComposedLayout {
        gmma_atom(GmmaMajor::K, GmmaLayoutType::B128, 2)
            .unwrap()
            .tile_to_shape(&IntTuple::ints(&[rows, 64]), None)
            .unwrap()
    }

    /// Four k-blocks of a 128x64 K-major stage: descriptors 32 bytes apart (2 in the start
    /// address field), each with bit 46 set; the first overwrites, the rest accumulate.
    #[test]
    fn a_k_tile_is_four_instructions_32_bytes_apart() {
        let umma = Umma::ss(128, 128, CtaGroup::One, ValType::F32, ValType::F16);
        let mma = make_tiled_mma(MmaAtom::new(umma), &Layout::vector(1, 0).unwrap(), &[]).unwrap();
        let k = build_kernel("mma", |kb| {
            let smem = kb.dynamic_shared::<f16>(1024);
            let sa = STensor::new(smem, stage_tile(128)).unwrap();
            let part = sa.partition_a(&mma, Var::konst(0)).unwrap();
            assert_eq!(part.layout().mode(1).unwrap().size(), 1);
            assert_eq!(part.layout().mode(2).unwrap().size(), 4);
            let ta = UmmaDescriptorFragment::new(&part, GmmaMajor::K).unwrap();
            // k-block k starts 16 elements (32 bytes) in: inside the 128-byte swizzled row.
            let kmode = ta.fragment_layout().mode(2).unwrap();
            assert_eq!(
                (0..4).map(|k| kmode.eval(k).unwrap()).collect::<Vec<_>>(),
                [0, 16, 32, 48]
            );
            let tb = UmmaDescriptorFragment::new(
                &sa.partition_b(&mma, Var::konst(0)).unwrap(),
                GmmaMajor::K,
            )
            .unwrap();
            let acc = TTensor::accumulator(kb.param::<u32>("tmem"), &umma, 1)
                .unwrap()
                .slice(&[
                    crate::tensor::Idx::All,
                    crate::tensor::Idx::All,
                    crate::tensor::Idx::At(0),
                ])
                .unwrap();
            gemm_tmem(&mma, &acc, &ta, &tb, Accumulate::No).unwrap();
        })
        .unwrap();
        let mut enables = Vec::new();
        for_each_instr(&k.body, &mut |i| {
            if let Op::Tcgen05(Tcgen05::Mma {
                a: Tcgen05A::Desc(_),
                idesc,
                enable_input_d,
                ..
            }) = &i.op
            {
                assert_eq!(*idesc, Operand::Imm(0x0820_0010));
                enables.push(*enable_input_d);
            }
        });
        assert_eq!(
            enables,
            [0, 1, 1, 1].map(Operand::Imm).to_vec(),
            "one overwrite, then three adds"
        );
    }

    #[test]
    fn the_fragments_must_be_umma_descriptors() {
        let umma = Umma::ss(128, 128, CtaGroup::One, ValType::F32, ValType::F16);
        let mma = make_tiled_mma(MmaAtom::new(umma), &Layout::vector(1, 0).unwrap(), &[]).unwrap();
        build_kernel("mma", |kb| {
            let smem = kb.dynamic_shared::<f16>(1024);
            let sa = STensor::new(smem, stage_tile(128)).unwrap();
            let part = sa.partition_a(&mma, Var::konst(0)).unwrap();
            let acc = TTensor::new(
                kb.param::<u32>("tmem"),
                "(128,64):(65536,1)".parse().unwrap(),
            );
            let ta = UmmaDescriptorFragment::new(&part, GmmaMajor::K).unwrap();
            // 64 columns cannot hold a 128-column instruction tile.
            let e = gemm_tmem(&mma, &acc, &ta, &ta, Accumulate::Yes);
            assert!(e.is_err());
        })
        .unwrap();
    }
}
