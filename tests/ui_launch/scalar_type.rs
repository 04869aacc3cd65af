// A scalar parameter `n: Var<u32>` takes a `u32`, not a `u64` or a float.
use codegen_ptx::jit::{CudaSlice, Launch, TypedFunction};
use kernels::examples::vector_add::VectorAddKernel;

fn launch(
    f: &TypedFunction<VectorAddKernel<4>>,
    a: &CudaSlice<f32>,
    b: &CudaSlice<f32>,
    c: &mut CudaSlice<f32>,
    n: u64,
) {
    let cfg = Launch::linear(1000, 256);
    let _ = VectorAddKernel::launch(f.with(&cfg), a, b, &mut *c, n);
    let _ = VectorAddKernel::launch(f.with(&cfg), a, b, c, 1000.0);
}

fn main() {}
