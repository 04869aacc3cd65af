// reduce_sum writes `out[block]`, which its signature cannot bound: it does not implement
// `TrustedKernel`, so only the unsafe launcher runs it.
use codegen_ptx::jit::{CudaSlice, Launch, TypedFunction};
use kernels::examples::reduce_sum::ReduceSumKernel;

fn launch(f: &TypedFunction<ReduceSumKernel>, x: &CudaSlice<f32>, out: &mut CudaSlice<f32>) {
    let cfg = Launch::new((120, 1, 1), (256, 1, 1));
    let _ = ReduceSumKernel::launch(f.with(&cfg), x, out, 1000);
}

fn main() {}
