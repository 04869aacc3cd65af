//! Each file in `tests/ui_tiled` holds `tiled_copy!` / `tiled_mma!` mistakes; its `.stderr` holds the
//! errors rustc must print (regenerate with `TRYBUILD=overwrite`, then read the diff).

#[test]
fn tiled_macro_errors() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui_tiled/*.rs");
}
