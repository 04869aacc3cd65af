//! The PTX of the builder's math functions, 16-bit pairs, reductions and masked accesses: each
//! function for each float type emits the instructions its docs name (checked in the text), and
//! a kernel of all of them per type assembles with ptxas for every target (needs `RUTE_PTXAS`).

use codegen_ptx::emit;
use codegen_ptx::ptxas::assemble;
use dsl_core::ir::op::{LdCache, StCache};
use dsl_core::ir::{Kernel, Target};
use dsl_core::kernel::*;
use half::{bf16, f16};

const TARGETS: [Target; 3] = [Target::Sm80, Target::Sm90a, Target::Sm100a];

type Fn1<T> = fn(Var<T>) -> Var<T>;

/// Every one-input function of [`Float`], by name.
fn functions<T: Float>() -> Vec<(&'static str, Fn1<T>)> {
    vec![
        ("exp", |x| x.exp()),
        ("exp_fast", |x| x.exp_fast()),
        ("exp2", |x| x.exp2()),
        ("exp2_fast", |x| x.exp2_fast()),
        ("ln", |x| x.ln()),
        ("ln_fast", |x| x.ln_fast()),
        ("log2", |x| x.log2()),
        ("log2_fast", |x| x.log2_fast()),
        ("tanh", |x| x.tanh()),
        ("tanh_fast", |x| x.tanh_fast()),
        ("erf", |x| x.erf()),
        ("erf_fast", |x| x.erf_fast()),
        ("sin", |x| x.sin()),
        ("sin_fast", |x| x.sin_fast()),
        ("cos", |x| x.cos()),
        ("cos_fast", |x| x.cos_fast()),
        ("sqrt", |x| x.sqrt()),
        ("sqrt_fast", |x| x.sqrt_fast()),
        ("rsqrt", |x| x.rsqrt()),
        ("rsqrt_fast", |x| x.rsqrt_fast()),
        ("recip", |x| x.recip()),
        ("recip_fast", |x| x.recip_fast()),
        ("abs", |x| x.abs()),
        ("mul_add", |x| x.mul_add(x, x)),
        ("min", |x| x.min(x.abs())),
        ("max", |x| x.max(x.abs())),
    ]
}

/// `y[i] = f(x[i])` for the thread's `i`.
fn unary_kernel<T: Float>(name: &str, f: Fn1<T>) -> Kernel {
    build_kernel(name, |k| {
        let x = k.param_ptr::<T>("x");
        let y = k.param_ptr::<T>("y");
        let i = block_idx_x() * block_dim_x() + thread_idx_x();
        y.store_at(i, f(x.load_at(i)));
    })
    .unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// One kernel applying every function, each into its own output row.
fn all_functions_kernel<T: Float>(name: &str) -> Kernel {
    build_kernel(name, |k| {
        let x = k.param_ptr::<T>("x");
        let y = k.param_ptr::<T>("y");
        let n = k.param::<u32>("n");
        let i = thread_idx_x();
        let v = x.load_at(i);
        for (row, (_, f)) in functions::<T>().into_iter().enumerate() {
            y.store_at(n * row as u32 + i, f(v));
        }
    })
    .unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn ptx(k: &Kernel, target: Target) -> String {
    emit(k, target).unwrap_or_else(|e| panic!("{} for {target}: {e}", k.name))
}

/// The instructions a function must emit for element type `ty` (PTX's name), and those it
/// must not.
fn expected(function: &str, ty: &str) -> (Vec<String>, Vec<&'static str>) {
    let f32_only = ty == "f32";
    // 16-bit types go through f32, except the natives of f16 and f16x2.
    let native16 = matches!(ty, "f16" | "f16x2");
    let approx = |op: &str| {
        let native = f32_only || (native16 && matches!(op, "ex2" | "tanh"));
        format!("{op}.approx.{}", if native { ty } else { "f32" })
    };
    let mut want: Vec<String> = match function {
        "exp_fast" | "erf_fast" => vec!["ex2.approx.f32".into()],
        "exp2_fast" => vec![approx("ex2")],
        "ln_fast" | "log2_fast" => vec![approx("lg2")],
        "tanh_fast" => vec![approx("tanh")],
        "sin_fast" => vec![approx("sin")],
        "cos_fast" => vec![approx("cos")],
        "sqrt_fast" => vec![approx("sqrt")],
        "rsqrt_fast" => vec![approx("rsqrt")],
        "recip_fast" => vec![approx("rcp")],
        "sqrt" => vec!["sqrt.rn.f32".into()],
        "recip" => vec!["rcp.rn.f32".into()],
        "rsqrt" => vec!["sqrt.rn.f32".into(), "rcp.rn.f32".into()],
        "abs" => vec![format!("abs.{ty}")],
        "mul_add" => vec![format!("fma.rn.{ty}")],
        "min" => vec![format!("min.{ty}")],
        "max" => vec![format!("max.{ty}")],
        _ => vec!["fma.rn.f32".into()],
    };
    let exact = matches!(function, "abs" | "mul_add" | "min" | "max");
    let native = native16 && matches!(function, "exp2_fast" | "tanh_fast");
    if !f32_only && !exact && !native {
        // Computed in f32 and rounded back (pairs with one cvt.rn.f16x2.f32 / bf16x2).
        want.push(format!("cvt.rn.{ty}.f32"));
    }
    let forbid = if function.ends_with("_fast") || exact {
        vec![]
    } else {
        vec![".approx"]
    };
    (want, forbid)
}

fn check_functions<T: Float>(ty: &str) {
    for (name, f) in functions::<T>() {
        let k = unary_kernel::<T>(&format!("{name}_{ty}"), f);
        let text = ptx(&k, Target::Sm90a);
        let (want, forbid) = expected(name, ty);
        for w in &want {
            assert!(
                text.contains(w.as_str()),
                "{name} on {ty}: no `{w}` in\n{text}"
            );
        }
        for w in forbid {
            assert!(!text.contains(w), "{name} on {ty}: `{w}` in\n{text}");
        }
    }
}

#[test]
fn every_function_emits_its_instructions() {
    check_functions::<f32>("f32");
    check_functions::<f16>("f16");
    check_functions::<bf16>("bf16");
    check_functions::<F16x2>("f16x2");
    check_functions::<BF16x2>("bf16x2");
}

#[test]
fn every_function_assembles_for_every_type_and_target() {
    let kernels = [
        all_functions_kernel::<f32>("math_f32"),
        all_functions_kernel::<f16>("math_f16"),
        all_functions_kernel::<bf16>("math_bf16"),
        all_functions_kernel::<F16x2>("math_f16x2"),
        all_functions_kernel::<BF16x2>("math_bf16x2"),
    ];
    for k in &kernels {
        for target in TARGETS {
            let report = assemble(&ptx(k, target), target)
                .unwrap_or_else(|e| panic!("{} for {target}: {e}", k.name));
            assert_eq!(report.spill_store_bytes, 0, "{} for {target}", k.name);
        }
    }
}

/// Pairs: pack, unpack, splat, conversions, and 16-byte vectors of eight halves.
fn pairs_kernel() -> Kernel {
    build_kernel("pairs", |k| {
        let x = k.param_ptr::<F16x2>("x");
        let b = k.param_ptr::<BF16x2>("b");
        let h = k.param_ptr::<f16>("h");
        let s = k.param::<f16>("s");
        let i = thread_idx_x();
        let [lo, hi] = x.load_at(i).unpack();
        let swapped = Var::<F16x2>::pack(hi, lo);
        let fused = swapped.mul_add(Var::splat(s), Var::splat(f16::ONE));
        x.store_at(i, fused);
        let [fl, fh] = b.load_at(i).to_f32();
        b.store_at(i, Var::<BF16x2>::from_f32(fh, fl));
        let eight: [Var<f16>; 8] = h.offset(i * 8u32).load_vec::<8>();
        let doubled = eight.map(|v| v.mul_add(f16::from_f32(2.0), v));
        h.offset(i * 8u32).store_vec(doubled);
        // Read once and written once: streamed through the caches.
        let once: [Var<f16>; 8] = h
            .offset(i * 8u32 + 1024u32)
            .load_vec_cached::<8>(Some(LdCache::Cs));
        let one = h.offset(i + 2048u32).load_cached(Some(LdCache::Lu));
        h.offset(i * 8u32 + 1024u32)
            .store_vec_cached(once.map(|v| v + one), Some(StCache::Cs));
        let sh = k.shared_array::<bf16>("sh", 8 * 128, 16);
        let row: [Var<bf16>; 8] = sh.offset(i * 8u32).load_vec::<8>();
        sh.offset(i * 8u32).store_vec(row.map(|v| v.abs()));
    })
    .unwrap()
}

#[test]
fn pairs_and_eight_half_vectors() {
    let k = pairs_kernel();
    let text = ptx(&k, Target::Sm80);
    for w in [
        "mov.b32 {%h",
        "fma.rn.f16x2",
        "cvt.rn.bf16x2.f32",
        "cvt.f32.bf16",
        "ld.global.v4.b32",
        "st.global.v4.b32",
        "ld.global.cs.v4.b32",
        "ld.global.lu.b16",
        "st.global.cs.v4.b32",
        "ld.shared.v4.b32",
        "st.shared.v4.b32",
        "fma.rn.f16 ",
        "abs.bf16 ",
    ] {
        assert!(text.contains(w), "no `{w}` in\n{text}");
    }
    for target in TARGETS {
        assemble(&ptx(&k, target), target).unwrap_or_else(|e| panic!("pairs for {target}: {e}"));
    }
}

/// Reductions and masked accesses.
fn reductions_kernel() -> Kernel {
    build_kernel("reductions", |k| {
        let x = k.param_ptr::<f32>("x");
        let xi = k.param_ptr::<i32>("xi");
        let xh = k.param_ptr::<f16>("xh");
        let out = k.param_ptr::<f32>("out");
        let n = k.param::<u32>("n");
        let t = thread_idx_x();
        let red = BlockReduce::<f32>::new(k, "red", 256);
        let redi = BlockReduce::<u32>::new(k, "redi", 256);
        let v = x.load_at_or(t, t.lt(n), 0.0f32);
        let w = warp_sum(v) + warp_max(v) + warp_min(v);
        let wi = warp_sum(xi.load_at(t)) + warp_max(xi.load_at(t)) + warp_min(xi.load_at(t));
        let wh = warp_sum(xh.load_at_or(t, t.lt(n), f16::ZERO));
        let b = red.sum(w) + red.max(v) + red.min(v) + redi.sum(t).cast::<f32>();
        let total = b + wi.cast::<f32>() + wh.cast::<f32>();
        out.store_at_if(t, t.lt(n), total);
    })
    .unwrap()
}

#[test]
fn reductions_and_masked_accesses() {
    let k = reductions_kernel();
    let text = ptx(&k, Target::Sm80);
    for w in [
        "redux.sync.add.s32",
        "redux.sync.max.s32",
        "redux.sync.min.s32",
        "redux.sync.add.u32",
        "shfl.sync.bfly.b32",
        "bar.sync 0",
        "max.f32",
        "min.f32",
    ] {
        assert!(text.contains(w), "no `{w}` in\n{text}");
    }
    for target in TARGETS {
        let report = assemble(&ptx(&k, target), target)
            .unwrap_or_else(|e| panic!("reductions for {target}: {e}"));
        // Two arrays of 8 warps' values.
        assert_eq!(report.shared_bytes, 64, "{target}");
    }
}

#[test]
fn a_block_reduction_needs_whole_warps() {
    let e = build_kernel("bad", |k| {
        let _ = BlockReduce::<f32>::new(k, "red", 100);
    })
    .unwrap_err();
    assert!(e.to_string().contains("multiple of 32"), "{e}");
}
