//! The `rute` command line tool.
fn main() {}
