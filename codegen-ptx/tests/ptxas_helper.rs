//! The ptxas helper's contract: typed errors naming `RUTE_PTXAS` when it is unset or unusable,
//! ptxas's own message when it rejects PTX, and the `-v` numbers when it accepts.
//!
//! One test function, alone in its binary, because it changes the process environment.

use codegen_ptx::ptxas::{assemble, PtxasError, PTXAS_ENV};
use dsl_core::ir::Target;

const GOOD: &str = ".version 7.0\n.target sm_80\n.address_size 64\n\
.shared .align 16 .b8 tile[512];\n\
.visible .entry k(.param .u64 out)\n{\n\t.reg .b32 %r<2>;\n\t.reg .b64 %rd<1>;\n\
\tld.param.u64 %rd0, [out];\n\tmov.u32 %r0, %tid.x;\n\tst.shared.u32 [tile], %r0;\n\
\tld.shared.u32 %r1, [tile+4];\n\tst.global.u32 [%rd0], %r1;\n\tret;\n}\n";

#[test]
fn ptxas_errors_and_report() {
    let real = std::env::var_os(PTXAS_ENV)
        .expect("RUTE_PTXAS must point at ptxas for this test (CI sets it)");

    std::env::remove_var(PTXAS_ENV);
    let e = assemble(GOOD, Target::Sm80).unwrap_err();
    assert!(matches!(e, PtxasError::NotConfigured), "{e}");
    assert!(e.to_string().contains("RUTE_PTXAS"), "{e}");

    std::env::set_var(PTXAS_ENV, "/nonexistent/ptxas");
    let e = assemble(GOOD, Target::Sm80).unwrap_err();
    assert!(matches!(e, PtxasError::NotExecutable { .. }), "{e}");
    assert!(e.to_string().contains("RUTE_PTXAS") && e.to_string().contains("/nonexistent/ptxas"));

    std::env::set_var(PTXAS_ENV, env!("CARGO_MANIFEST_DIR"));
    let e = assemble(GOOD, Target::Sm80).unwrap_err();
    assert!(matches!(e, PtxasError::NotExecutable { .. }), "{e}");

    std::env::set_var(PTXAS_ENV, &real);
    let rep = assemble(GOOD, Target::Sm80).unwrap();
    assert_eq!(rep.shared_bytes, 512, "{}", rep.log);
    assert!(rep.registers >= 2, "{}", rep.log);
    assert_eq!((rep.spill_store_bytes, rep.spill_load_bytes), (0, 0));
    assert!(rep.cubin.starts_with(b"\x7fELF"), "a cubin is an ELF file");

    // A wgmma in an sm_80 module: ptxas's message comes back in the error.
    let bad = GOOD.replace("\tret;", "\twgmma.fence.sync.aligned;\n\tret;");
    let e = assemble(&bad, Target::Sm80).unwrap_err();
    match &e {
        PtxasError::Rejected { target, log } => {
            assert_eq!(*target, Target::Sm80);
            assert!(log.contains("wgmma"), "{log}");
        }
        other => panic!("expected Rejected, got {other}"),
    }
    assert!(e.to_string().contains("sm_80"));
}
