// One argument per kernel parameter: leaving out `n` does not compile.
use codegen_ptx::jit::{CudaSlice, Launch, TypedFunction};
use kernels::examples::vector_add::VectorAddKernel;

fn launch(
    f: &TypedFunction<VectorAddKernel<4>>,
    a: &CudaSlice<f32>,
    b: &CudaSlice<f32>,
    c: &mut CudaSlice<f32>,
) {
    let cfg = Launch::linear(1000, 256);
    let _ = VectorAddKernel::launch(f.with(&cfg), a, b, c);
}

fn main() {}
