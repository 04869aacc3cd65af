//! codegen-ptx
