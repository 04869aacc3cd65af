//! The launches that must not compile in safe code (each file in `tests/ui_launch` is one; its
//! `.stderr` holds the error rustc must print, regenerated with `TRYBUILD=overwrite` and read):
//! the typed launch with a buffer of another element type, a shared buffer for one the kernel
//! writes, a wrong count or a wrong scalar type, a read-only tensor map for one the kernel stores
//! through, and a kernel not trusted to launch safely; the untyped launch of loaded PTX outside
//! `unsafe`; a GEMM plan implemented without `unsafe impl`. No GPU is needed: they are compile
//! errors.

#[test]
fn unsound_launches_do_not_compile() {
    let t = trybuild::TestCases::new();
    t.compile_fail("ui_launch/*.rs");
}
