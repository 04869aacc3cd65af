use dsl_macros::{tiled_copy, tiled_mma};

fn main() {
    let _ = tiled_copy!(SM80_CP_ASYNC_CACHEGLOBAL<u128>, f61, thr = (32,4):(4,1), val = (1,8));
    let _ = tiled_copy!(SM80_CP_ASYNC_CACHEGLOBAL<u128>, f64, thr = (32,4):(4,1), val = (1,8));
    let _ = tiled_copy!(SM80_CP_ASYNC_CACHEGLOBAL<u128>, half::f16, thr = (32,4):(4,1), val = (1,8));
    let _ = tiled_mma!(SM80_16x8x16_F32F16F16F32_TN, f16, atoms = (2,2,1));
}
