//! Copies between tensor memory (TMEM) and registers (`tcgen05.ld` / `tcgen05.st`, CuTe's
//! `SM100_TMEM_LOAD_*` / `SM100_TMEM_STORE_*`: `include/cute/arch/copy_sm100.hpp`,
//! `include/cute/atom/copy_traits_sm100.hpp`).
//!
//! TMEM is 128 lanes of 512 32-bit columns per block; an address holds the lane in bits 16-31 and
//! the column in bits 0-15. A warp moves one *data-path shape* per repetition (PTX ISA
//! 9.7.16.2.3, "Data Movement Shape"): `32x32b` is 32 lanes of 32 bits (thread `t` owns lane `t`),
//! `16x64b`, `16x128b` and `16x256b` are 16 lanes of 64, 128 and 256 bits; `.num` repetitions
//! (`x1`..`x128`) continue along the columns. Every thread of the warp names the same address
//! (the tile's first lane and column), and a warp reaches only its quarter of the lanes: warp `w`
//! of a warpgroup lanes `32 (w % 4) ..` (PTX ISA 9.7.16.5, Table 46).
//!
//! [`TmemCopy::thread_values`] is the atom's thread-value layout in rute's terms: `(thread,
//! register) ->` the index `lane + lanes * column` of the column-major `(lanes, columns)` tile
//! the instruction moves. For `32x32b` it is the PTX ISA's statement (register `j` of thread `t`
//! is lane `t`, column `j`); for the 16-lane shapes it is CuTe's `DstLayout` (its bits regrouped
//! into 32-bit columns), which the tests compare entry by entry.
//!
//! ```
//! use dsl_core::atom::{TmemCopy, TmemDirection};
//! use dsl_core::ir::op::TmemShape;
//! let ld = TmemCopy::new(TmemDirection::Load, TmemShape::S32x32b, 64);
//! assert_eq!(ld.name(), "SM100_TMEM_LOAD_32dp32b64x");
//! assert_eq!((ld.lanes(), ld.columns(), ld.regs()), (32, 64, 64));
//! assert_eq!(ld.thread_values().to_string(), "(32,64):(1,32)");
//! ```

use super::mma::constant;
use crate::ir::op::{Tcgen05, TmemShape};
use crate::ir::{Operand, Reg};
use crate::kernel::{emit, Var};
use crate::layout::{Layout, LayoutError};

/// Which way a TMEM copy moves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TmemDirection {
    /// TMEM -> registers (`tcgen05.ld`); wait with `tcgen05.wait::ld` before reading them.
    Load,
    /// Registers -> TMEM (`tcgen05.st`); `tcgen05.wait::st` before the registers are reused.
    Store,
}

/// `SM100_TMEM_{LOAD,STORE}_{32dp32b,16dp64b,16dp128b,16dp256b}{N}x`: one `tcgen05.ld` or
/// `tcgen05.st` of a warp, `num` repetitions of `shape`, 32-bit values (no 16-bit packing).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TmemCopy {
    /// Load or store.
    pub dir: TmemDirection,
    /// The data-path shape.
    pub shape: TmemShape,
    /// Repetitions along the columns: a power of two, at most 128 registers in all.
    pub num: u32,
}

impl TmemCopy {
    /// The atom (checked when it is used: [`TmemCopy::check`]).
    pub fn new(dir: TmemDirection, shape: TmemShape, num: u32) -> TmemCopy {
        TmemCopy { dir, shape, num }
    }

    /// Why the PTX ISA has no such instruction (Table 49: `.num` a power of two, each thread at
    /// most 128 registers), if it has none.
    pub fn check(&self) -> Result<(), String> {
        if !self.num.is_power_of_two() || self.num > 128 {
            return Err(format!(
                ".x{}: repetitions are a power of two up to 128",
                self.num
            ));
        }
        if self.regs() > 128 {
            return Err(format!(
                "{}.x{} moves {} registers per thread; at most 128",
                self.shape.name(),
                self.num,
                self.regs()
            ));
        }
        Ok(())
    }

    /// CuTe's name.
    pub fn name(&self) -> String {
        let dir = match self.dir {
            TmemDirection::Load => "LOAD",
            TmemDirection::Store => "STORE",
        };
        let shape = match self.shape {
            TmemShape::S32x32b => "32dp32b",
            TmemShape::S16x64b => "16dp64b",
            TmemShape::S16x128b => "16dp128b",
            TmemShape::S16x256b => "16dp256b",
        };
        format!("SM100_TMEM_{dir}_{shape}{}x", self.num)
    }

    /// TMEM lanes one instruction touches (the warp's 32, or the first 16 of them).
    pub fn lanes(&self) -> u32 {
        match self.shape {
            TmemShape::S32x32b => 32,
            _ => 16,
        }
    }

    /// 32-bit columns per lane one instruction touches.
    pub fn columns(&self) -> u32 {
        let per_rep = match self.shape {
            TmemShape::S32x32b => 1,
            TmemShape::S16x64b => 2,
            TmemShape::S16x128b => 4,
            TmemShape::S16x256b => 8,
        };
        per_rep * self.num
    }

    /// 32-bit registers per thread.
    pub fn regs(&self) -> usize {
        self.shape.regs_per_rep() * self.num as usize
    }

    /// `(thread, register) -> lane + lanes() * column` in the instruction's tile (see the
    /// module's docs).
    pub fn thread_values(&self) -> Layout {
        let n = self.num;
        constant(&match self.shape {
            TmemShape::S32x32b => format!("(32,{n}):(1,32)"),
            // Thread t = t0 + 2 t1 + 4 t2: lane 8 t0 + t2, column t1 + 2 r.
            TmemShape::S16x64b => format!("((2,2,8),{n}):((8,16,1),32)"),
            // Thread t = t0 + 4 t1: lane t1 (+ 8 for the second register), column t0 + 4 r.
            TmemShape::S16x128b => format!("((4,8),(2,{n})):((16,1),(8,64))"),
            // Lane t1 (+ 8), columns 2 t0 and 2 t0 + 1, + 8 r.
            TmemShape::S16x256b => format!("((4,8),(2,2,{n})):((32,1),(16,8,128))"),
        })
    }

    /// The instruction for one warp: `taddr` the tile's TMEM address (the same in every
    /// thread), `regs` this thread's [`TmemCopy::regs`] 32-bit registers, written (a load) or
    /// read (a store) in [`TmemCopy::thread_values`]' order.
    pub fn call(&self, taddr: Var<u32>, regs: &[Reg]) -> Result<(), LayoutError> {
        let fail = |why: String| LayoutError::precondition("copy", self.name(), why);
        self.check().map_err(fail)?;
        if regs.len() != self.regs() || regs.iter().any(|r| r.ty.bits() != 32) {
            return Err(fail(format!(
                "moves {} 32-bit registers per thread, not {}",
                self.regs(),
                regs.len()
            )));
        }
        let taddr = Operand::Reg(taddr.to_reg());
        emit(match self.dir {
            TmemDirection::Load => Tcgen05::Ld {
                shape: self.shape,
                num: self.num,
                pack16: false,
                dsts: regs.to_vec(),
                taddr,
            },
            TmemDirection::Store => Tcgen05::St {
                shape: self.shape,
                num: self.num,
                unpack16: false,
                taddr,
                srcs: regs.iter().map(|&r| Operand::Reg(r)).collect(),
            },
        });
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::IntTuple;

    const SHAPES: [TmemShape; 4] = [
        TmemShape::S32x32b,
        TmemShape::S16x64b,
        TmemShape::S16x128b,
        TmemShape::S16x256b,
    ];

    fn entry(l: &Layout, t: i64, r: i64) -> i64 {
        l.crd2idx(&IntTuple::ints(&[t, r])).unwrap()
    }

    /// The PTX ISA's `32x32b` (Figure 183): thread `t` of the warp owns lane `t`, its register
    /// `j` is column `j`, `.num` columns per lane.
    #[test]
    fn thirty_two_lanes_one_per_thread() {
        for num in [1, 2, 8, 128] {
            let c = TmemCopy::new(TmemDirection::Load, TmemShape::S32x32b, num);
            let l = c.thread_values();
            for t in 0..32 {
                for j in 0..i64::from(num) {
                    assert_eq!(entry(&l, t, j), t + 32 * j);
                }
            }
        }
    }

    /// Every shape covers its `(lanes, columns)` tile once, in `regs` registers of 32 threads.
    #[test]
    fn each_shape_covers_its_tile_once() {
        for shape in SHAPES {
            for num in [1, 2, 4] {
                let c = TmemCopy::new(TmemDirection::Load, shape, num);
                let l = c.thread_values();
                assert_eq!(l.size(), 32 * c.regs() as i64, "{}", c.name());
                let mut seen = vec![false; (c.lanes() * c.columns()) as usize];
                for t in 0..32 {
                    for r in 0..c.regs() as i64 {
                        let i = entry(&l, t, r) as usize;
                        assert!(!seen[i], "{}: {i} twice", c.name());
                        seen[i] = true;
                    }
                }
                assert!(seen.iter().all(|&s| s), "{}", c.name());
            }
        }
    }

    /// CuTe's `DstLayout`s (`copy_traits_sm100.hpp`), in bits: `(thread, bit) -> b + B * lane`
    /// with `B` the bits per lane of the instruction (`ValID`); the bit `32 j` of a thread is its
    /// register `j`. Regrouped into `(lane, column = b / 32)`, they are `thread_values`.
    #[test]
    fn sixteen_lane_shapes_are_cutes() {
        let cute = [
            (TmemShape::S16x64b, 1, "((2,2,8),32):((512,32,64),1)", 64),
            (
                TmemShape::S16x64b,
                2,
                "((2,2,8),(32,2)):((1024,32,128),(1,64))",
                128,
            ),
            (
                TmemShape::S16x128b,
                1,
                "((4,8),(32,2)):((32,128),(1,1024))",
                128,
            ),
            (
                TmemShape::S16x128b,
                2,
                "((4,8),(32,2,2)):((32,256),(1,2048,128))",
                256,
            ),
            (
                TmemShape::S16x256b,
                1,
                "((4,8),(64,2)):((64,256),(1,2048))",
                256,
            ),
            (
                TmemShape::S16x256b,
                2,
                "((4,8),(64,2,2)):((64,512),(1,4096,256))",
                512,
            ),
            (TmemShape::S32x32b, 2, "(32,64):(64,1)", 64),
        ];
        for (shape, num, bits, per_lane) in cute {
            let c = TmemCopy::new(TmemDirection::Load, shape, num);
            let cute: Layout = bits.parse().unwrap();
            let mine = c.thread_values();
            let lanes = i64::from(c.lanes());
            for t in 0..32 {
                for r in 0..c.regs() as i64 {
                    let bit = cute.crd2idx(&IntTuple::ints(&[t, 32 * r])).unwrap();
                    let (lane, col) = (bit / per_lane, (bit % per_lane) / 32);
                    assert_eq!(
                        entry(&mine, t, r),
                        lane + lanes * col,
                        "{} thread {t} register {r}",
                        c.name()
                    );
                }
            }
        }
    }

    #[test]
    fn limits_and_names() {
        let ok = TmemCopy::new(TmemDirection::Store, TmemShape::S16x256b, 32);
        assert_eq!(ok.name(), "SM100_TMEM_STORE_16dp256b32x");
        assert!(ok.check().is_ok());
        assert!(TmemCopy::new(TmemDirection::Load, TmemShape::S16x256b, 64)
            .check()
            .is_err());
        assert!(TmemCopy::new(TmemDirection::Load, TmemShape::S32x32b, 3)
            .check()
            .is_err());
    }
}
