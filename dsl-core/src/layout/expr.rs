//! The expression language of the `rute layout` calculator. (Being written.)
