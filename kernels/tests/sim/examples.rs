//! The example kernels in the simulator, on inputs whose sizes are not multiples of the block or the tile, under every schedule and four seeds each: the outputs
//! equal a CPU reference (bit for bit where the kernel's arithmetic is exact or ordered), the
//! reports have no finding, and the same seed gives the same report byte for byte. The examples
//! that use TMA or wgmma run in `async_examples.rs`.

use dsl_core::ir::Kernel;
use dsl_core::sim::{Arg, BufferId, Launch, Memory, Options, Report, Schedule, Simulator};
use half::f16;
use kernels::examples;
use kernels::gemm::naive::gemm_naive;

use super::{floats, gemm_args};

const SCHEDULES: [Schedule; 3] = [
    Schedule::RoundRobin,
    Schedule::Random,
    Schedule::Pct { depth: 3 },
];
const SEEDS: u64 = 4;

fn simulator(k: Kernel) -> Simulator {
    Simulator::new(k.check().unwrap_or_else(|e| panic!("{e}")))
}

/// Runs `sim` under every schedule and seed on a fresh memory from `setup`; checks each report
/// is clean and repeats byte for byte, and hands the memory to `check`.
fn every_schedule(
    sim: &Simulator,
    launch: &Launch,
    setup: impl Fn(&mut Memory) -> Vec<Arg>,
    check: impl Fn(&Memory, &str),
) {
    for schedule in SCHEDULES {
        for seed in 0..SEEDS {
            let opts = Options::seeded(seed, schedule);
            let run = || -> (Report, Memory) {
                let mut mem = Memory::new();
                let args = setup(&mut mem);
                let r = sim
                    .run(launch, &args, &mut mem, &opts)
                    .unwrap_or_else(|e| panic!("{}: {e}", sim.name()));
                (r, mem)
            };
            let (report, mem) = run();
            let what = format!("{} {schedule:?} seed {seed}", sim.name());
            assert!(report.is_clean(), "{what}: {report}");
            check(&mem, &what);
            let (again, _) = run();
            assert_eq!(
                report.to_string(),
                again.to_string(),
                "{what}: not repeatable"
            );
        }
    }
}

fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

#[test]
fn vector_add_matches_the_cpu() {
    let n = 1003usize;
    let (a, b) = (floats(1, n), floats(2, n));
    let want: Vec<f32> = a.iter().zip(&b).map(|(x, y)| x + y).collect();
    for vec in [1usize, 2, 4] {
        let k = match vec {
            1 => examples::vector_add::<1>(),
            2 => examples::vector_add::<2>(),
            _ => examples::vector_add::<4>(),
        };
        let sim = simulator(k.unwrap());
        let threads = n.div_ceil(vec) as u32;
        let block = examples::vector_add::THREADS;
        let launch = Launch::linear(threads.div_ceil(block), block);
        let out = std::cell::Cell::new(None::<BufferId>);
        every_schedule(
            &sim,
            &launch,
            |mem| {
                let (da, db) = (mem.upload("a", &a), mem.upload("b", &b));
                mem.set_read_only(da, true);
                mem.set_read_only(db, true);
                let dc = mem.alloc("c", 4 * n);
                out.set(Some(dc));
                vec![
                    Arg::Buffer(da),
                    Arg::Buffer(db),
                    Arg::Buffer(dc),
                    Arg::u32(n as u32),
                ]
            },
            |mem, what| {
                let got = mem.read::<f32>(out.get().unwrap());
                assert_eq!(bits(&got), bits(&want), "{what} VEC={vec}");
            },
        );
    }
}

#[test]
fn transpose_matches_the_cpu() {
    let (rows, cols) = (70usize, 45usize);
    let src = floats(3, rows * cols);
    let mut want = vec![0.0f32; rows * cols];
    for r in 0..rows {
        for c in 0..cols {
            want[c * rows + r] = src[r * cols + c];
        }
    }
    let tile = examples::transpose::TILE;
    for block_rows in [8u32, 4] {
        let sim = simulator(examples::transpose(block_rows).unwrap());
        let launch = Launch::new(
            [
                (cols as u32).div_ceil(tile),
                (rows as u32).div_ceil(tile),
                1,
            ],
            [tile, block_rows, 1],
        );
        let out = std::cell::Cell::new(None::<BufferId>);
        every_schedule(
            &sim,
            &launch,
            |mem| {
                let s = mem.upload("src", &src);
                mem.set_read_only(s, true);
                let d = mem.alloc("dst", 4 * rows * cols);
                out.set(Some(d));
                vec![
                    Arg::Buffer(s),
                    Arg::Buffer(d),
                    Arg::u32(rows as u32),
                    Arg::u32(cols as u32),
                ]
            },
            |mem, what| {
                let got = mem.read::<f32>(out.get().unwrap());
                assert_eq!(bits(&got), bits(&want), "{what} block 32x{block_rows}");
            },
        );
    }
}

#[test]
fn reduce_sum_matches_the_cpu() {
    let n = 1000usize;
    let x = floats(4, n);
    let exact: f64 = x.iter().map(|&v| f64::from(v)).sum();
    let abs: f64 = x.iter().map(|&v| f64::from(v.abs())).sum();
    for (threads, blocks) in [(256u32, 3u32), (96, 7)] {
        let sim = simulator(examples::reduce_sum(threads).unwrap());
        let (partial, total) = (
            std::cell::Cell::new(None::<BufferId>),
            std::cell::Cell::new(None::<BufferId>),
        );
        // Pass 1 over x into one partial sum per block; pass 2 (one block) over the partials.
        every_schedule(
            &sim,
            &Launch::linear(blocks, threads),
            |mem| {
                let dx = mem.upload("x", &x);
                let p = mem.alloc("partial", 4 * blocks as usize);
                partial.set(Some(p));
                vec![Arg::Buffer(dx), Arg::Buffer(p), Arg::u32(n as u32)]
            },
            |mem, what| {
                let parts = mem.read::<f32>(partial.get().unwrap());
                let grid = (blocks * threads) as usize;
                for (b, &p) in parts.iter().enumerate() {
                    let want: f64 = (0..n)
                        .filter(|i| (i % grid) / threads as usize == b)
                        .map(|i| f64::from(x[i]))
                        .sum();
                    assert!(
                        (f64::from(p) - want).abs() <= 1e-5 * abs,
                        "{what}: block {b}"
                    );
                }
                let mut mem2 = Memory::new();
                let dp = mem2.upload("partial", &parts);
                let out = mem2.alloc("out", 4);
                total.set(Some(out));
                let r = sim
                    .run(
                        &Launch::linear(1, threads),
                        &[Arg::Buffer(dp), Arg::Buffer(out), Arg::u32(blocks)],
                        &mut mem2,
                        &Options::default(),
                    )
                    .unwrap();
                assert!(r.is_clean(), "{what} pass 2: {r}");
                let got = f64::from(mem2.read::<f32>(out)[0]);
                assert!(
                    (got - exact).abs() <= 1e-5 * abs,
                    "{what}: {got} vs {exact}"
                );
            },
        );
    }
}

#[test]
fn async_copy_matches_the_cpu() {
    for n in [513usize, 3] {
        let src = floats(5, n);
        for threads in [128u32, 96] {
            let sim = simulator(examples::async_copy(threads).unwrap());
            let chunks = (n as u32).div_ceil(threads * examples::async_copy::PER_THREAD);
            for blocks in [2, chunks + 2] {
                let out = std::cell::Cell::new(None::<BufferId>);
                every_schedule(
                    &sim,
                    &Launch::linear(blocks, threads),
                    |mem| {
                        let s = mem.upload("src", &src);
                        mem.set_read_only(s, true);
                        let d = mem.alloc("dst", 4 * n);
                        out.set(Some(d));
                        vec![Arg::Buffer(s), Arg::Buffer(d), Arg::u32(n as u32)]
                    },
                    |mem, what| {
                        let got = mem.read::<f32>(out.get().unwrap());
                        assert_eq!(bits(&got), bits(&src), "{what} n={n} blocks={blocks}");
                    },
                );
            }
        }
    }
}

#[test]
fn gemm_naive_matches_the_cpu_bit_for_bit() {
    let (m, n, k) = (37usize, 21usize, 19usize);
    let a: Vec<f16> = floats(6, m * k).into_iter().map(f16::from_f32).collect();
    let b: Vec<f16> = floats(7, n * k).into_iter().map(f16::from_f32).collect();
    let mut want = vec![f16::ZERO; m * n];
    for r in 0..m {
        for c in 0..n {
            let mut acc = 0.0f32;
            for kk in 0..k {
                acc = a[r * k + kk].to_f32().mul_add(b[c * k + kk].to_f32(), acc);
            }
            want[r * n + c] = f16::from_f32(acc);
        }
    }
    let sim = simulator(gemm_naive::<f16>().unwrap());
    let (bx, by) = kernels::gemm::naive::BLOCK;
    let launch = Launch::new(
        [(n as u32).div_ceil(bx), (m as u32).div_ceil(by), 1],
        [bx, by, 1],
    );
    let out = std::cell::Cell::new(None::<BufferId>);
    every_schedule(
        &sim,
        &launch,
        |mem| {
            let d = mem.alloc("d", 2 * m * n);
            out.set(Some(d));
            let (da, db) = (mem.upload("a", &a), mem.upload("b", &b));
            gemm_args(d, da, db, (m, n, k))
        },
        |mem, what| {
            let got = mem.read::<f16>(out.get().unwrap());
            assert_eq!(got, want, "{what}");
        },
    );
}
