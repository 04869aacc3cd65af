//! The builder's library on a real GPU (feature `gpu`): the softmax and layernorm examples, the
//! warp and block reductions, masked loads, 16-bit pairs and 16-byte vectors of eight halves,
//! each against a CPU computation of the same thing. Outputs start poisoned (all ones), so an
//! element not written shows.
//!
//! Run: `cargo test -p rute-tests --features gpu --test gpu_kernel_lib`.

use codegen_ptx::emit;
use codegen_ptx::jit::{AnyBitPattern, CudaSlice, Jit, JitFunction, KernelArg, Launch};
use dsl_core::ir::{Kernel, Target};
use dsl_core::kernel::*;
use half::f16;
use kernels::examples::layernorm::{self, LayernormKernel};
use kernels::examples::softmax::{self, SoftmaxKernel};
use rute_tests::gpu::{jit, Rng};

fn load(jit: &Jit, k: &Kernel, target: Target) -> JitFunction {
    let ptx = emit(k, target).unwrap_or_else(|e| panic!("{} for {target}: {e}", k.name));
    jit.load(&ptx)
        .and_then(|m| m.function(&k.name))
        .unwrap_or_else(|e| panic!("{} for {target}: {e}", k.name))
}

/// A device buffer of `len` elements with every bit set.
fn poisoned<T: AnyBitPattern + Copy>(jit: &Jit, len: usize, ones: T) -> CudaSlice<T> {
    jit.upload(&vec![ones; len]).unwrap()
}

#[test]
#[cfg_attr(not(feature = "gpu"), ignore)]
fn softmax_and_layernorm_match_the_cpu() {
    let jit = jit();
    for target in [Target::Sm80, Target::Sm90a] {
        for (threads, rows, cols) in [(256u32, 33usize, 3001usize), (96, 7, 1), (32, 5, 70)] {
            let what = format!("{target} {threads} threads, {rows} x {cols}");
            let mut rng = Rng::new((rows * cols) as u64);
            let x: Vec<f32> = rng.vec(rows * cols).iter().map(|v| 6.0 * v).collect();
            let dx = jit.upload(&x).unwrap();

            let f = jit
                .compile(&SoftmaxKernel::build(threads).unwrap(), target)
                .unwrap();
            let mut dy = poisoned(&jit, rows * cols, f32::from_bits(u32::MAX));
            let grid = Launch::new((rows as u32, 1, 1), (threads, 1, 1));
            SoftmaxKernel::launch(f.with(&grid), &dx, &mut dy, rows as u32, cols as u32)
                .unwrap_or_else(|e| panic!("softmax {what}: {e}"));
            let got = jit.download(&dy).unwrap();
            for (i, (g, w)) in got.iter().zip(softmax::reference(&x, cols)).enumerate() {
                assert!(
                    (g - w).abs() <= 4e-6 * w,
                    "softmax {what} at {i}: {g} vs {w}"
                );
            }

            let gamma = rng.vec(cols);
            let beta = rng.vec(cols);
            let (dg, db) = (jit.upload(&gamma).unwrap(), jit.upload(&beta).unwrap());
            let f = jit
                .compile(&LayernormKernel::build(threads).unwrap(), target)
                .unwrap();
            let mut dy = poisoned(&jit, rows * cols, f32::from_bits(u32::MAX));
            let grid = Launch::new((rows as u32, 1, 1), (threads, 1, 1));
            LayernormKernel::launch(
                f.with(&grid),
                &dx,
                &dg,
                &db,
                &mut dy,
                rows as u32,
                cols as u32,
                1e-5,
            )
            .unwrap_or_else(|e| panic!("layernorm {what}: {e}"));
            let got = jit.download(&dy).unwrap();
            let want = layernorm::reference(&x, &gamma, &beta, cols, 1e-5);
            for (i, (g, w)) in got.iter().zip(want).enumerate() {
                assert!((g - w).abs() <= 1e-4, "layernorm {what} at {i}: {g} vs {w}");
            }
        }
    }
}

/// Per warp of a 128-thread block: warp sum, max and min of i32, u32 and f32 (and f16 in f32),
/// then the block's; row `r` of the output holds result `r` for each thread.
fn reductions_kernel() -> Kernel {
    build_kernel("reductions", |k| {
        let xi = k.param_ptr::<i32>("xi");
        let xf = k.param_ptr::<f32>("xf");
        let xh = k.param_ptr::<f16>("xh");
        let oi = k.param_ptr::<i32>("oi");
        let of = k.param_ptr::<f32>("of");
        let t = thread_idx_x();
        let (vi, vf, vh) = (xi.load_at(t), xf.load_at(t), xh.load_at(t));
        let vu = vi.cast::<u32>();
        let ints = [
            warp_sum(vi),
            warp_max(vi),
            warp_min(vi),
            warp_sum(vu).cast::<i32>(),
            warp_max(vu).cast::<i32>(),
            warp_min(vu).cast::<i32>(),
        ];
        for (r, v) in ints.into_iter().enumerate() {
            oi.store_at(t + 128u32 * r as u32, v);
        }
        let red = BlockReduce::<f32>::new(k, "red", 128);
        let redi = BlockReduce::<i32>::new(k, "redi", 128);
        let floats = [
            warp_sum(vf),
            warp_max(vf),
            warp_min(vf),
            warp_sum(vh).cast::<f32>(),
            red.sum(vf),
            red.max(vf),
            red.min(vf),
            redi.sum(vi).cast::<f32>(),
        ];
        for (r, v) in floats.into_iter().enumerate() {
            of.store_at(t + 128u32 * r as u32, v);
        }
    })
    .unwrap()
}

#[test]
#[cfg_attr(not(feature = "gpu"), ignore)]
fn reductions_match_the_cpu() {
    let jit = jit();
    let k = reductions_kernel();
    let mut rng = Rng::new(3);
    let xf = rng.vec(128);
    let xi: Vec<i32> = xf.iter().map(|v| (v * 1e6) as i32).collect();
    let xh: Vec<u16> = xf.iter().map(|v| f16::from_f32(*v).to_bits()).collect();
    for target in [Target::Sm80, Target::Sm90a] {
        let f = load(&jit, &k, target);
        let (dxi, dxf, dxh) = (
            jit.upload(&xi).unwrap(),
            jit.upload(&xf).unwrap(),
            jit.upload(&xh).unwrap(),
        );
        let mut oi = poisoned(&jit, 6 * 128, -1i32);
        let mut of = poisoned(&jit, 8 * 128, f32::from_bits(u32::MAX));
        // SAFETY: one block of 128 threads; thread `t` reads element `t` of each 128-element
        // input and writes elements `t + 128 j` of the outputs, which hold 6 and 8 rows of 128.
        unsafe {
            f.launch(
                &Launch::new((1, 1, 1), (128, 1, 1)),
                &[
                    jit.buffer(&dxi),
                    jit.buffer(&dxf),
                    jit.buffer(&dxh),
                    jit.buffer_mut(&mut oi),
                    jit.buffer_mut(&mut of),
                ],
            )
        }
        .unwrap_or_else(|e| panic!("reductions {target}: {e}"));
        let (gi, gf) = (jit.download(&oi).unwrap(), jit.download(&of).unwrap());
        for t in 0..128 {
            let w = (t / 32) * 32..(t / 32) * 32 + 32;
            let wi = &xi[w.clone()];
            let wu: Vec<u32> = wi.iter().map(|v| *v as u32).collect();
            let want_i = [
                wi.iter().fold(0i32, |a, b| a.wrapping_add(*b)),
                *wi.iter().max().unwrap(),
                *wi.iter().min().unwrap(),
                wu.iter().fold(0u32, |a, b| a.wrapping_add(*b)) as i32,
                *wu.iter().max().unwrap() as i32,
                *wu.iter().min().unwrap() as i32,
            ];
            for (r, want) in want_i.iter().enumerate() {
                assert_eq!(
                    gi[t + 128 * r],
                    *want,
                    "{target} int result {r}, thread {t}"
                );
            }
            let wf = &xf[w.clone()];
            let sum = |v: &[f32]| v.iter().map(|x| f64::from(*x)).sum::<f64>();
            let wh: Vec<f32> = xh[w].iter().map(|b| f16::from_bits(*b).to_f32()).collect();
            let want_f = [
                sum(wf),
                f64::from(wf.iter().fold(f32::MIN, |a, b| a.max(*b))),
                f64::from(wf.iter().fold(f32::MAX, |a, b| a.min(*b))),
                f64::from(f16::from_f64(sum(&wh)).to_f32()),
                sum(&xf),
                f64::from(xf.iter().fold(f32::MIN, |a, b| a.max(*b))),
                f64::from(xf.iter().fold(f32::MAX, |a, b| a.min(*b))),
                f64::from(xi.iter().fold(0i32, |a, b| a.wrapping_add(*b)) as f32),
            ];
            for (r, want) in want_f.iter().enumerate() {
                // Sums of 32 or 128 values of [-1, 1) in a tree: within 1e-5; f16 within its ulp.
                let tol = if r == 3 { 2e-2 } else { 1e-5 };
                let got = f64::from(gf[t + 128 * r]);
                assert!(
                    (got - want).abs() <= tol,
                    "{target} float result {r}, thread {t}: {got} vs {want}"
                );
            }
        }
    }
}

/// Masked loads and stores, 16-bit pairs, and 16-byte vectors of eight halves: thread `t` of
/// 64 reads `x[t]` where `t < n` (else -1), and transforms its eight halves of `h` through
/// pairs (swap, fma with a broadcast 2) and back.
fn masked_and_halves_kernel() -> Kernel {
    build_kernel("masked_halves", |k| {
        let x = k.param_ptr::<f32>("x");
        let y = k.param_ptr::<f32>("y");
        let h = k.param_ptr::<f16>("h");
        let n = k.param::<u32>("n");
        let t = thread_idx_x();
        let v = x.load_at_or(t, t.lt(n), -1.0f32);
        y.store_at(t, v);
        y.store_at_if(t + 64u32, t.ge(n), 7.0f32);
        let row = h.offset(t * 8u32);
        let e: [Var<f16>; 8] = row.load_vec::<8>();
        let two = Var::<F16x2>::splat(f16::from_f32(2.0));
        let mut out = e;
        for p in 0..4 {
            let pair =
                Var::<F16x2>::pack(e[2 * p + 1], e[2 * p]).mul_add(two, Var::splat(f16::ONE));
            let [lo, hi] = pair.unpack();
            out[2 * p] = lo;
            out[2 * p + 1] = hi;
        }
        row.store_vec(out);
    })
    .unwrap()
}

#[test]
#[cfg_attr(not(feature = "gpu"), ignore)]
fn masked_loads_pairs_and_eight_half_vectors_match_the_cpu() {
    let jit = jit();
    let k = masked_and_halves_kernel();
    let n = 45u32;
    let x: Vec<f32> = (0..64).map(|i| i as f32 + 0.5).collect();
    let h: Vec<u16> = (0..64 * 8)
        .map(|i| f16::from_f32((i % 97) as f32 / 8.0).to_bits())
        .collect();
    for target in [Target::Sm80, Target::Sm90a] {
        let f = load(&jit, &k, target);
        // Only the first n floats exist: a masked load reads nothing past them.
        let dx = jit.upload(&x[..n as usize]).unwrap();
        let mut dy = poisoned(&jit, 128, f32::from_bits(u32::MAX));
        let mut dh = jit.upload(&h).unwrap();
        // SAFETY: one block of 64 threads; the loads of `x` are masked below `n` (its length),
        // thread `t` writes elements `t` and `t + 64` of the 128-element `y` and its own eight
        // halves of the 512-element `h`.
        unsafe {
            f.launch(
                &Launch::new((1, 1, 1), (64, 1, 1)),
                &[
                    jit.buffer(&dx),
                    jit.buffer_mut(&mut dy),
                    jit.buffer_mut(&mut dh),
                    KernelArg::U32(n),
                ],
            )
        }
        .unwrap_or_else(|e| panic!("masked_halves {target}: {e}"));
        let (gy, gh) = (jit.download(&dy).unwrap(), jit.download(&dh).unwrap());
        for t in 0..64usize {
            let want = if (t as u32) < n { x[t] } else { -1.0 };
            assert_eq!(gy[t], want, "{target} load_or at {t}");
            let stored = gy[t + 64];
            if (t as u32) >= n {
                assert_eq!(stored, 7.0, "{target} store_if at {t}");
            } else {
                assert_eq!(stored.to_bits(), u32::MAX, "{target} store_if wrote at {t}");
            }
            for p in 0..4 {
                let e = |j: usize| f16::from_bits(h[t * 8 + j]);
                let fma = |v: f16| f16::from_f64(v.to_f64() * 2.0 + 1.0);
                let (lo, hi) = (fma(e(2 * p + 1)), fma(e(2 * p)));
                assert_eq!(gh[t * 8 + 2 * p], lo.to_bits(), "{target} half {t}/{p} lo");
                assert_eq!(
                    gh[t * 8 + 2 * p + 1],
                    hi.to_bits(),
                    "{target} half {t}/{p} hi"
                );
            }
        }
    }
}
