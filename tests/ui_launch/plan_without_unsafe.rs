// `Gemm::run` launches a plan's kernel with the grid and scalars the plan gives: a plan is
// trusted, so implementing `ProgramPlan` takes `unsafe impl`.
use dsl_core::ir::Kernel;
use kernels::gemm::{KernelBuildError, LaunchPlan, ProgramPlan};

#[derive(Debug)]
struct Evil;

impl ProgramPlan for Evil {
    fn program(&self) -> &'static str {
        "evil"
    }
    fn key(&self) -> String {
        "evil".into()
    }
    fn describe(&self) -> String {
        "evil".into()
    }
    fn kernel(&self) -> Result<Kernel, KernelBuildError> {
        Ok(Kernel::new("evil"))
    }
    fn entry(&self) -> String {
        "evil".into()
    }
    fn operand_alignment(&self) -> u64 {
        2
    }
    fn launch(&self, _m: u32, _n: u32, _k: u32, _sms: u32) -> LaunchPlan {
        LaunchPlan::new((1 << 20, 1, 1), (1024, 1, 1), Vec::new())
    }
}

fn main() {}
