//! The JIT's PTX signature reader on the PTX that `codegen_ptx::emit` writes for every registered
//! kernel and target: it must find each kernel with exactly the parameters of its IR, in order,
//! with the sizes the driver gives them, so that the launch's argument check (which reads the
//! same text) agrees with the kernel. Pure: no GPU.

use codegen_ptx::jit::{ptx_signatures, KernelArg, PtxClass, PtxParam, PtxParamKind, PtxScalar};
use dsl_core::ir::{ParamKind, Type};
use kernels::registry::KERNELS;
use rute_tests::ptx::ptx_of;

/// What the PTX must declare for one IR parameter: its class and width, or a tensor map.
fn expected(kind: &ParamKind) -> Option<PtxScalar> {
    let scalar = |class, bits| Some(PtxScalar { class, bits });
    match kind {
        // Global pointers are plain `.u64` scalars in rute's PTX.
        ParamKind::GlobalPtr { .. } => scalar(PtxClass::Unsigned, 64),
        ParamKind::TensorMap => None,
        ParamKind::Scalar(t) => {
            let class = match t {
                Type::U8 | Type::U16 | Type::U32 | Type::U64 => PtxClass::Unsigned,
                Type::S8 | Type::S16 | Type::S32 | Type::S64 => PtxClass::Signed,
                Type::F32 | Type::F64 => PtxClass::Float,
                _ => PtxClass::Bits,
            };
            scalar(class, t.bits())
        }
    }
}

/// An argument of the kind a caller passes for `p` (a raw pointer stands for a buffer here).
fn an_argument_for(kind: &ParamKind) -> Option<KernelArg<'static>> {
    Some(match kind {
        // SAFETY: never launched.
        ParamKind::GlobalPtr { .. } => unsafe { KernelArg::raw_pointer(0x7000_0000) },
        ParamKind::Scalar(Type::U32) => KernelArg::U32(1),
        ParamKind::Scalar(Type::S32) => KernelArg::I32(1),
        ParamKind::Scalar(Type::F32) => KernelArg::F32(1.0),
        ParamKind::Scalar(Type::U64) => KernelArg::U64(1),
        _ => return None,
    })
}

#[test]
fn every_registered_kernel_reads_back_with_its_ir_parameters() {
    let mut checked = Vec::new();
    for k in KERNELS {
        for &target in k.targets {
            let kernel = (k.build)(target).unwrap_or_else(|e| panic!("{}: {e}", k.name));
            let ptx = ptx_of(k, target);
            let entries =
                ptx_signatures(&ptx).unwrap_or_else(|e| panic!("{} {target}: {e}", k.name));
            assert_eq!(entries.len(), 1, "{} {target}", k.name);
            let entry = &entries[0];
            assert_eq!(entry.name, kernel.name, "{} {target}", k.name);
            assert_eq!(
                entry.params.len(),
                kernel.params.len(),
                "{} {target}: {:?}",
                k.name,
                entry.params
            );
            let mut end = 0;
            for (p, ir) in entry.params.iter().zip(&kernel.params) {
                let what = format!("{} {target} parameter `{}`", k.name, ir.name);
                assert_eq!(p.name, ir.name, "{what}");
                match expected(&ir.kind) {
                    Some(t) => {
                        assert_eq!(p.kind, PtxParamKind::Scalar(t), "{what}");
                        assert_eq!((p.size, p.align), (t.bytes(), t.bytes()), "{what}");
                    }
                    None => {
                        assert!(p.is_tensor_map(), "{what}: {p}");
                        assert_eq!((p.size, p.align), (128, 64), "{what}");
                    }
                }
                // Packed in order, each at its alignment.
                assert!(p.offset >= end && p.offset % p.align == 0, "{what}: {p:?}");
                assert!(p.offset - end < p.align, "{what}: gap before it");
                end = p.offset + p.size;
                if let Some(arg) = an_argument_for(&ir.kind) {
                    assert!(arg.fits(p), "{what}: {arg:?} does not fit {p}");
                }
            }
            checked.push(format!("{} {target}", k.name));
        }
    }
    assert!(
        checked.iter().any(|c| c.starts_with("tma_round_trip")),
        "{checked:?}"
    );
    println!(
        "{} kernel/target pairs: {}",
        checked.len(),
        checked.join(", ")
    );
}

/// The tensor-map kernel's two maps are what a `TensorMap` argument fills, and nothing else
/// fills them.
#[test]
fn tma_round_trip_takes_two_tensor_maps() {
    let k = KERNELS.iter().find(|k| k.name == "tma_round_trip").unwrap();
    let ptx = ptx_of(k, k.targets[0]);
    let params: Vec<PtxParam> = ptx_signatures(&ptx).unwrap().remove(0).params;
    let printed: Vec<String> = params.iter().map(ToString::to_string).collect();
    assert_eq!(
        printed,
        [
            ".param .align 64 .b8 src_map[128]",
            ".param .align 64 .b8 dst_map[128]"
        ]
    );
    assert_eq!(
        params.iter().map(|p| p.offset).collect::<Vec<_>>(),
        [0, 128]
    );
    // SAFETY: never launched.
    let pointer = unsafe { KernelArg::raw_pointer(0x7000_0000) };
    for p in &params {
        assert!(!pointer.fits(p) && !KernelArg::U64(0).fits(p));
    }
}
