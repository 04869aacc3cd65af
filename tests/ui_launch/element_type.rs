// A buffer of another element type cannot fill a pointer parameter: vector_add reads f32s.
use codegen_ptx::jit::{CudaSlice, Launch, TypedFunction};
use kernels::examples::vector_add::VectorAddKernel;

fn launch(
    f: &TypedFunction<VectorAddKernel<4>>,
    a: &CudaSlice<u32>,
    b: &CudaSlice<f32>,
    c: &mut CudaSlice<f32>,
) {
    let cfg = Launch::linear(1000, 256);
    let _ = VectorAddKernel::launch(f.with(&cfg), a, b, c, 1000);
}

fn main() {}
