//! dsl-macros
