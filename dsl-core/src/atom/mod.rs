//! Atoms: the smallest copy and MMA instructions as data.
//!
//! An atom is an operation (the PTX instruction codegen will emit) plus CuTe's thread-ID and
//! thread-value layouts for it, exactly as CuTe's traits define them
//! (`include/cute/atom/mma_traits_sm80.hpp`, `copy_traits_sm75.hpp`, `copy_traits_sm80.hpp`,
//! `copy_traits_sm90.hpp`). [`crate::tiled`] builds tiled copies and MMAs from them.
//!
//! ```
//! use dsl_core::atom::{CopyAtom, CopyOp, MmaAtom, MmaOp, ValType};
//! let mma = MmaAtom::new(MmaOp::Sm80_16x8x16F16F16F16F16Tn);
//! assert_eq!(mma.c_layout.to_string(), "((4,8),(2,2)):((32,1),(16,8))");
//! let ldsm = CopyAtom::new(CopyOp::LdsmN { n: 4 }, ValType::F16).unwrap();
//! assert_eq!(ldsm.val_layout_dst.to_string(), "(32,(2,4)):(2,(1,64))");
//! assert_eq!(ldsm.num_val_dst(), 8);
//! ```

mod copy;
pub mod gmma;
mod mma;
mod registry;
mod value;

pub use copy::{CopyAtom, CopyOp, CopyTraits};
pub use mma::{MmaAtom, MmaOp};
pub use registry::{atom_names, levenshtein, lookup_atom, AtomOp, UnknownAtom};
pub use value::ValType;
