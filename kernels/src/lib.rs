//! # kernels
//!
//! GEMM programs written in rute, the runtime GEMM call, and the `rute` command line tool.
