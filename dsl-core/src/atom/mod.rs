//! Atoms: the smallest copy and MMA instructions as data and as code.
//!
//! An atom is an operation plus CuTe's thread-ID and thread-value layouts for it, exactly as
//! CuTe's traits define them (`include/cute/atom/mma_traits_sm80.hpp`, `mma_traits_sm90_gmma.hpp`,
//! `copy_traits_sm75.hpp`, `copy_traits_sm80.hpp`, `copy_traits_sm90.hpp`), and the code that
//! emits its instruction ([`CopyOperation::call`], [`MmaOperation::call`]). Each family is one
//! file and one line of the [`registry`](mod@registry); [`crate::tiled`] builds tiled copies and
//! MMAs from atoms, [`crate::tensor`] runs them.
//!
//! | family | file | atoms |
//! |--------|------|-------|
//! | `UniversalCopy<uintN_t>` | `copy_universal.rs` | plain loads and stores |
//! | `SM80_CP_ASYNC_*` | `copy_sm80.rs` | `cp.async` global -> shared |
//! | `SM75_*_LDSM_*`, `SM90_*_STSM_N` | `copy_ldsm.rs` | `ldmatrix`, `stmatrix` |
//! | `SM80_16x8x16_*_TN` | `mma_sm80.rs` | `mma.sync.m16n8k16` |
//! | `SM90_64xNx16_*_{SS,RS}` | `mma_sm90.rs` | `wgmma.mma_async` |
//! | `SM90_TMA_LOAD`, `_MULTICAST`, `SM90_TMA_STORE`, `SM100_TMA_2SM_LOAD` | [`tma`] | `cp.async.bulk.tensor` |
//! | `SM100_MMA_F16BF16{_2x1SM}_SS` | `mma_sm100.rs`, descriptors in [`umma`] | `tcgen05.mma` |
//! | `SM100_TMEM_{LOAD,STORE}_*` | `copy_tmem.rs` | `tcgen05.ld`, `tcgen05.st` |

//!
//! ```
//! use dsl_core::atom::{CopyAtom, LdsmN, MmaAtom, Gmma, Sm80Mma, ValType};
//! let mma = MmaAtom::new(Sm80Mma::F16F16F16F16);
//! assert_eq!(mma.c_layout.to_string(), "((4,8),(2,2)):((32,1),(16,8))");
//! let ldsm = CopyAtom::new(LdsmN { n: 4 }, ValType::F16).unwrap();
//! assert_eq!(ldsm.val_layout_dst.to_string(), "(32,(2,4)):(2,(1,64))");
//! assert_eq!(ldsm.num_val_dst(), 8);
//! let wgmma = MmaAtom::new(Gmma::ss(128, ValType::F32, ValType::F16));
//! assert_eq!(wgmma.name(), "SM90_64x128x16_F32F16F16_SS");
//! assert_eq!(wgmma.c_layout.to_string(), "((4,8,4),(2,2,16)):((128,1,16),(64,8,512))");
//! ```

mod copy;
mod copy_ldsm;
mod copy_sm80;
mod copy_tmem;
mod copy_universal;
pub mod gmma;
mod mma;
mod mma_sm100;
mod mma_sm80;
mod mma_sm90;
pub mod registry;
pub mod tma;
pub mod umma;
mod value;

pub use copy::{CopyAtom, CopyEnd, CopyOperation, CopyTraits, EndKind};
pub use copy_ldsm::{LdsmN, LdsmT, StsmN};
pub use copy_sm80::{CpAsyncCacheAlways, CpAsyncCacheGlobal};
pub use copy_tmem::{TmemCopy, TmemDirection};
pub use copy_universal::UniversalCopy;
pub use mma::{Accumulate, MmaAtom, MmaCall, MmaOperation, MmaSource, MmaSourceKind, MmaTraits};
pub use mma_sm100::Umma;
pub use mma_sm80::Sm80Mma;
pub use mma_sm90::{Gmma, GmmaA};
pub use registry::{
    atom_names, levenshtein, lookup_atom, lookup_copy, lookup_mma, NamedAtom, UnknownAtom,
};
pub use value::ValType;
