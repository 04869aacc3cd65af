// The untyped launch of a loaded kernel, whatever its PTX, is `unsafe`: its extents are not
// compared with the buffers (a vector_add over 16-element buffers with n = 2^24).
use codegen_ptx::jit::{CudaSlice, Jit, KernelArg, Launch};

fn launch(jit: &Jit, ptx: &str, a: &CudaSlice<f32>, b: &CudaSlice<f32>, c: &mut CudaSlice<f32>) {
    let f = jit.load(ptx).unwrap().function("vector_add").unwrap();
    let _ = f.launch(
        &Launch::linear(1 << 24, 256),
        &[jit.buffer(a), jit.buffer(b), jit.buffer_mut(c), KernelArg::U32(1 << 24)],
    );
}

fn main() {}
