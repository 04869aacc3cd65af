//! # dsl-core
//!
//! The core of rute, a Rust embedded DSL for NVIDIA GPU kernels: CuTe's layout algebra
//! ([`layout`]), and (in later modules) the kernel IR and its builder, atoms, tiled copies and MMAs,
//! and pipelines, and a CPU simulator of the IR that checks kernels without a GPU ([`sim`]). It
//! knows nothing of PTX syntax or CUDA; `codegen-ptx` turns its IR into PTX.
//!
//! ```
//! use dsl_core::layout::Layout;
//! let tile: Layout = "(8,32):(32,1)".parse().unwrap();
//! assert_eq!(tile.eval(1).unwrap(), 32);
//! ```

#![warn(missing_docs)]

pub mod atom;
pub mod ir;
pub mod kernel;
pub mod layout;
pub mod pipeline;
pub mod sim;
pub mod tensor;
pub mod tiled;
