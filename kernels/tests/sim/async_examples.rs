//! The examples that use the asynchronous families in the simulator: the TMA round trip (load,
//! negate in shared memory, store; on a tensor whose extents are not multiples of the box, so
//! loads fill zeros and stores clip) and the one-warpgroup `wgmma` tile, under every schedule
//! and four seeds, against CPU references with no finding.

use dsl_core::atom::tma::{TmaDescriptor, TmaSwizzleMode};
use dsl_core::atom::ValType;
use dsl_core::sim::{Arg, Launch, Memory, Options, Schedule, Simulator, TensorMapArg};
use half::f16;
use kernels::examples::{tma_round_trip, wgmma_tile};

const SCHEDULES: [Schedule; 3] = [
    Schedule::RoundRobin,
    Schedule::Random,
    Schedule::Pct { depth: 3 },
];

#[test]
fn tma_round_trip_negates_every_element_and_clips_at_the_edges() {
    let (rows, cols) = (70usize, 100usize);
    let b = tma_round_trip::BOX;
    let kernel = tma_round_trip::tma_round_trip(b, true).unwrap();
    let sim = Simulator::new(kernel.check().unwrap());
    let x: Vec<f32> = super::floats(5, rows * cols);
    let map = TmaDescriptor {
        elem: ValType::F32,
        global_dims: vec![cols as u64, rows as u64],
        global_strides_bytes: vec![4 * cols as u64],
        box_dims: vec![b.cols, b.rows],
        element_strides: vec![1, 1],
        swizzle: TmaSwizzleMode::None,
        l2_promotion: Default::default(),
    };
    let grid = [
        (cols as u32).div_ceil(b.cols),
        (rows as u32).div_ceil(b.rows),
        1,
    ];
    let launch = Launch::new(grid, [tma_round_trip::THREADS, 1, 1]);
    for schedule in SCHEDULES {
        for seed in 0..4 {
            let mut mem = Memory::new();
            let src = mem.upload("src", &x);
            mem.set_read_only(src, true);
            let dst = mem.alloc("dst", 4 * rows * cols);
            let args = [
                Arg::Tma(Box::new(TensorMapArg::new(src, map.clone()))),
                Arg::Tma(Box::new(TensorMapArg::new(dst, map.clone()))),
            ];
            let r = sim
                .run(&launch, &args, &mut mem, &Options::seeded(seed, schedule))
                .unwrap();
            assert!(r.is_clean(), "{schedule:?} {seed}: {r}");
            let got = mem.read::<f32>(dst);
            let want: Vec<f32> = x.iter().map(|v| -v).collect();
            assert_eq!(got, want, "{schedule:?} {seed}");
        }
    }
}

#[test]
fn wgmma_tile_matches_the_cpu() {
    let t = wgmma_tile::WgmmaTile::new().unwrap();
    let kernel = wgmma_tile::wgmma_tile(&t).unwrap();
    let sim = Simulator::new(kernel.check().unwrap());
    let n = wgmma_tile::TILE as usize;
    // Small integers: every product and partial sum is exact.
    let ints = |seed| -> Vec<f16> {
        super::floats(seed, n * n)
            .into_iter()
            .map(|v| f16::from_f32((v * 3.0).round()))
            .collect()
    };
    let (a, b) = (ints(1), ints(2));
    let mut want = vec![0f32; n * n];
    for i in 0..n {
        for j in 0..n {
            want[i * n + j] = (0..n)
                .map(|p| a[i * n + p].to_f32() * b[j * n + p].to_f32())
                .sum();
        }
    }
    for schedule in SCHEDULES {
        for seed in 0..4 {
            let mut mem = Memory::new();
            let d = mem.alloc("d", 4 * n * n);
            let (da, db) = (mem.upload("a", &a), mem.upload("b", &b));
            let args = [Arg::Buffer(d), Arg::Buffer(da), Arg::Buffer(db)];
            let r = sim
                .run(
                    &Launch::linear(1, wgmma_tile::THREADS),
                    &args,
                    &mut mem,
                    &Options::seeded(seed, schedule),
                )
                .unwrap();
            assert!(r.is_clean(), "{schedule:?} {seed}: {r}");
            assert_eq!(mem.read::<f32>(d), want, "{schedule:?} {seed}");
        }
    }
}
