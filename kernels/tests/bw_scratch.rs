use dsl_core::ir::Target;
use kernels::blackwell::*;
use kernels::gemm::GemmDtype;

#[test]
fn scratch() {
    for step in Step::ALL {
        let cfg = step.config(step.seed_depth());
        let k = blackwell_kernel(cfg, GemmDtype::F16).unwrap_or_else(|e| panic!("{step:?}: {e}"));
        let ptx = codegen_ptx::emit(&k, Target::Sm100a).unwrap_or_else(|e| panic!("{step:?}: {e}"));
        std::fs::write(format!("/tmp/bwt/{}.ptx", step.name()), &ptx).unwrap();
        let r = codegen_ptx::ptxas::assemble(&ptx, Target::Sm100a);
        match r { Ok(r) => println!("{step:?}: regs {} spills {}/{} smem {} warnings {:?}", r.registers, r.spill_store_bytes, r.spill_load_bytes, r.shared_bytes, r.warnings), Err(e) => println!("{step:?}: {e}") }
    }
}
