// A `TensorMap` parameter may be stored through (TMA stores): it takes a map encoded over a
// buffer borrowed mutably (`Jit::tensor_map_mut`), not one over a shared buffer.
use codegen_ptx::jit::{CudaSlice, Jit, Launch, TensorMapSpec, TypedFunction};
use kernels::examples::tma_round_trip::TmaRoundTripKernel;

fn launch(jit: &Jit, f: &TypedFunction<TmaRoundTripKernel>, spec: &TensorMapSpec, src: &CudaSlice<f32>, dst: &CudaSlice<f32>) {
    let src_map = jit.tensor_map(spec, src).unwrap();
    let dst_map = jit.tensor_map(spec, dst).unwrap();
    let cfg = Launch::new((4, 4, 1), (128, 1, 1));
    let _ = TmaRoundTripKernel::launch(f.with(&cfg), &src_map, &dst_map);
}

fn main() {}
