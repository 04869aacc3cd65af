// A buffer the kernel writes (`c: GlobalPtr<f32>`) must be borrowed mutably: `&c` is refused.
use codegen_ptx::jit::{CudaSlice, Launch, TypedFunction};
use kernels::examples::vector_add::VectorAddKernel;

fn launch(f: &TypedFunction<VectorAddKernel<4>>, a: &CudaSlice<f32>, c: &CudaSlice<f32>) {
    let cfg = Launch::linear(1000, 256);
    let _ = VectorAddKernel::launch(f.with(&cfg), a, a, c, 1000);
}

fn main() {}
