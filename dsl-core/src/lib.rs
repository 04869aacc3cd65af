//! # dsl-core
//!
//! The core of rute, a Rust embedded DSL for NVIDIA GPU kernels: CuTe's layout algebra
//! ([`layout`]), the kernel IR ([`ir`]) and the builder that writes it ([`kernel`]: device values,
//! control flow, intrinsics, typed kernel signatures), atoms ([`atom`]), tiled copies and MMAs
//! ([`tiled`]), tensors ([`tensor`]), pipelines ([`pipeline`]), and a CPU simulator of the IR that
//! checks kernels without a GPU ([`sim`]). It knows nothing of PTX syntax or CUDA; `codegen-ptx` turns its IR into PTX, and the `#[kernel]` macro of `dsl-macros` writes
//! the builder's calls from plain Rust.
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
