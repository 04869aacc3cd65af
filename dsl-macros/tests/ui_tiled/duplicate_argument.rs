use dsl_macros::{tiled_copy, tiled_mma};

fn main() {
    let _ = tiled_copy!(SM80_CP_ASYNC_CACHEGLOBAL<u128>, f16, thr = (32,4):(4,1), val = (1,8), thr = (16,8):(8,1));
    let _ = tiled_mma!(SM80_16x8x16_F16F16F16F16_TN, atoms = (2,2,1), tile = (32,32,16), tile = (32,32,32));
}
