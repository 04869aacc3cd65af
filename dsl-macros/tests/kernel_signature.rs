//! The typed signature `#[kernel]` generates beside each kernel function (`..Kernel`): its
//! `build` is the function's kernel, and its `launch` lowers one argument per parameter, in order,
//! through the launcher's `LaunchArg` impls and evaluates each `#[len(..)]` from the scalar
//! arguments. A launcher that records what it is given stands in for the GPU.

use dsl_core::ir::Kernel;
use dsl_core::kernel::signature::{ExtentCheck, KernelSignature, LaunchArg, Launcher};
use dsl_core::kernel::*;
use dsl_macros::kernel;

/// `d = a` over a `rows x cols` matrix in `tiles` pieces.
#[kernel]
fn copy_rows<const STEP: u32>(
    #[host] name: &str,
    #[len(rows * cols)] a: ConstPtr<f32>,
    m: TensorMap,
    #[len((rows + 1) * cols / STEP)] d: GlobalPtr<f32>,
    rows: Var<u32>,
    cols: Var<u32>,
    scale: Var<f32>,
) {
    let _ = (name, &m, scale, cols);
    if rows > 0 {
        d.store_at(0, a.load_at(0));
    }
}

/// A host buffer: its length in elements.
struct Buf(u64);

/// What the recording launcher was given.
#[derive(Debug, PartialEq)]
enum Lowered {
    Read(u64),
    Write(u64),
    Map,
    Scalar(String),
}

struct Recorder<K>(std::marker::PhantomData<K>);

impl<'a, K: KernelSignature> Launcher<'a> for Recorder<K> {
    type Kernel = K;
    type Arg = Lowered;
    type Output = (Vec<Lowered>, Vec<ExtentCheck>);
    fn run(self, args: Vec<Lowered>, extents: &[ExtentCheck]) -> Self::Output {
        (args, extents.to_vec())
    }
}

impl<'a, K: KernelSignature> LaunchArg<'a, ConstPtr<f32>, &'a Buf> for Recorder<K> {
    fn lower(&self, b: &'a Buf) -> Lowered {
        Lowered::Read(b.0)
    }
    fn elems(b: &&'a Buf) -> Option<u64> {
        Some(b.0)
    }
}

impl<'a, K: KernelSignature> LaunchArg<'a, GlobalPtr<f32>, &'a mut Buf> for Recorder<K> {
    fn lower(&self, b: &'a mut Buf) -> Lowered {
        Lowered::Write(b.0)
    }
    fn elems(b: &&'a mut Buf) -> Option<u64> {
        Some(b.0)
    }
}

impl<'a, K: KernelSignature> LaunchArg<'a, TensorMap, ()> for Recorder<K> {
    fn lower(&self, _: ()) -> Lowered {
        Lowered::Map
    }
}

impl<'a, K: KernelSignature, T: DeviceType + std::fmt::Debug + Into<f64>> LaunchArg<'a, Var<T>, T>
    for Recorder<K>
{
    fn lower(&self, v: T) -> Lowered {
        Lowered::Scalar(format!("{v:?}"))
    }
    fn value(v: &T) -> Option<u128> {
        let x: f64 = (*v).into();
        (x >= 0.0 && x.fract() == 0.0).then_some(x as u128)
    }
}

#[test]
fn build_is_the_functions_kernel_tagged_with_its_signature() {
    assert_eq!(CopyRowsKernel::<2>::NAME, "copy_rows");
    let typed = CopyRowsKernel::<2>::build("x").unwrap();
    let plain: Kernel = copy_rows::<2>("x").unwrap();
    assert_eq!(*typed, plain);
    assert_eq!(typed.into_kernel().params.len(), 6);
}

#[test]
fn launch_lowers_in_order_and_evaluates_lengths() {
    let (a, mut d) = (Buf(12), Buf(7));
    let to = Recorder::<CopyRowsKernel<2>>(std::marker::PhantomData);
    let (args, extents) = CopyRowsKernel::<2>::launch(to, &a, (), &mut d, 3, 4, 0.5);
    assert_eq!(
        args,
        [
            Lowered::Read(12),
            Lowered::Map,
            Lowered::Write(7),
            Lowered::Scalar("3".into()),
            Lowered::Scalar("4".into()),
            Lowered::Scalar("0.5".into()),
        ]
    );
    let got: Vec<_> = extents
        .iter()
        .map(|e| (e.param, e.len, e.need.get(), e.have))
        .collect();
    assert_eq!(
        got,
        [
            ("a", "rows * cols", Some(12), Some(12)),
            // (3 + 1) * 4 / STEP, STEP = 2: the const generic is an integer constant in scope.
            ("d", "(rows + 1) * cols / STEP", Some(8), Some(7)),
        ]
    );
    assert!(dsl_core::kernel::signature::check_extents(&extents).is_err());
}
