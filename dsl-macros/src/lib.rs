//! # dsl-macros
//!
//! rute's procedural macros. Each one reads a notation at compile time, reports mistakes as compile
//! errors pointing at the offending token, and expands to plain calls into `dsl-core`, so everything a
//! macro writes a user could write by hand: [`layout!`], [`macro@kernel`], [`tiled_copy!`] and
//! [`tiled_mma!`], each in its own module.
//!
//! The expansions name `::dsl_core` by its absolute path: a crate using these macros must depend on
//! `dsl-core` itself.
//!
//! ```
//! use dsl_core::layout::{ComposedLayout, Layout};
//! use dsl_macros::layout;
//!
//! // An 8x32 row-major tile, checked when this example compiles.
//! let tile: Layout = layout!((8,32):(32,1));
//! assert_eq!(tile, "(8,32):(32,1)".parse().unwrap());
//! assert_eq!(tile.eval(1).unwrap(), 32);
//!
//! // Rust constants stand for integers; their values are checked where the layout is built.
//! const BM: i64 = 128;
//! const BK: i64 = 32;
//! let smem = layout!((BM,BK):(BK,1));
//! assert_eq!(smem.to_string(), "(128,32):(32,1)");
//!
//! // A swizzled layout: i -> Sw<3,3,3>(0 + tile(i)).
//! let atom: ComposedLayout = layout!(Sw<3,3,3> o 0 o (8,64):(64,1));
//! assert_eq!(atom.swizzle.apply(atom.layout.eval(1).unwrap()), 72);
//! ```
//!
//! A layout that is not congruent does not compile:
//!
//! ```compile_fail
//! let bad = dsl_macros::layout!((4,8):(1));
//! ```

mod kernel_macro;
mod layout_macro;
mod tiled_macro;

use proc_macro::TokenStream;

/// A CuTe layout written in CuTe's notation, checked at compile time.
///
/// Expands to a [`dsl_core::layout::Layout`], or to a [`dsl_core::layout::ComposedLayout`] when a
/// swizzle comes first. The notation is the one `"...".parse::<Layout>()` reads:
///
/// | form | meaning |
/// |------|---------|
/// | `layout!(8:1)` | a rank-1 layout |
/// | `layout!((8,32):(32,1))` | shape `(8,32)`, stride `(32,1)` |
/// | `layout!(((2,4),8):((1,2),8))` | nested modes; the stride has the shape's nesting |
/// | `layout!((4,2):(-1,4))` | negative strides |
/// | `layout!((4,8))`, `layout!((4,8):_)` | CuTe's default stride: compact column-major, `(1,4)` |
/// | `layout!(Sw<3,3,3> o (8,32):(32,1))` | `i -> Sw<3,3,3>(L(i))`; `Swizzle<3,3,3>` also reads |
/// | `layout!(Sw<3,3,3> o 16 o (8,32):(32,1))` | `i -> Sw<3,3,3>(16 + L(i))`; the offset defaults to 0 |
/// | `layout!((BM,BK):(BK,1))`, `layout!(({2*BM},8))` | Rust constants or `{expr}` for any integer |
///
/// # Compile-time checks
///
/// The stride must be congruent to the shape (the same nesting, one stride per mode), every literal
/// extent must be at least 1, and a literal swizzle must satisfy CuTe's rule `|S| >= B`. Each error
/// points at the offending token and says what to write instead.
///
/// # Constants: checked at run time
///
/// A constant's name or a braced `{expr}` may stand for any integer (of any primitive integer type).
/// The structure is still checked at compile time, but the values are only known where the macro
/// expands, so the layout is built there through `Layout::new` (and `Swizzle::new`): an extent below
/// 1, a bad swizzle, or a value that does not fit in `i64` **panics** with a message naming the
/// layout as written, e.g. `layout!((BM,BK):(BK,1)): shape (0,32) has extent 0: ...`. A layout made
/// only of literals cannot fail at run time. To negate a constant write `{-BK}`.
///
/// # Dependencies
///
/// The expansion names `::dsl_core::layout::...`: the calling crate must depend on `dsl-core`.
///
/// ```
/// use dsl_macros::layout;
/// const N: usize = 4;
/// let l = layout!(((2,N),8):((1,2),{2 * N as i64}));
/// assert_eq!(l.to_string(), "((2,4),8):((1,2),8)");
/// ```
#[proc_macro]
pub fn layout(input: TokenStream) -> TokenStream {
    layout_macro::layout(input.into()).into()
}

/// Turns a Rust function into a kernel generator: calling it runs the body on the host once and
/// returns the generated [`dsl_core::ir::Kernel`].
///
/// Static values (shapes, layouts, tile sizes, unrolled loops) are plain Rust evaluated while the
/// kernel is generated; dynamic values ([`dsl_core::kernel::Var`]) are PTX registers. The macro
/// rewrites the body's `if`, `for`, `while`, `=` and `let x = y;` into calls of traits in
/// [`dsl_core::kernel`] that are implemented for both, so one spelling works for host and device
/// values: a `bool` condition picks a branch now, a `Var<bool>` emits an `If`; a range with host
/// bounds unrolls, one with a `Var` bound emits a `For`. Comparisons (`<`, `<=`, `>`, `>=`, `==`,
/// `!=`) and `&&`/`||` are rewritten too: on host values they are Rust's, with a `Var` on either
/// side they are device predicates (`Var<bool>`); an unsuffixed literal takes the type of the
/// device value it meets (`x + 1`, `x < 4` with `x: Var<u32>`).
///
/// # The function
///
/// ```text
/// #[kernel]
/// fn name(#[host] cfg: C, k: &KernelBuilder, a: GlobalPtr<f32>, n: Var<u32>) { .. }
/// // generates
/// fn name(cfg: C) -> Result<Kernel, BuildError>
/// ```
///
/// - Parameters marked `#[host]` (and a `self` receiver) stay parameters of the generated
///   function: configuration read while generating.
/// - A parameter of type `&KernelBuilder` receives the builder handle, for shared memory and
///   launch hints. It is optional.
/// - Every other parameter is a kernel parameter, declared in order under its own name through
///   [`dsl_core::kernel::macro_support::KernelParam`]: `Var<T>` (a scalar), `GlobalPtr<T>` (a
///   buffer the kernel may write), `ConstPtr<T>` (one it only reads), `TensorMap` (may be stored
///   through), `ConstTensorMap` (loads only). A buffer parameter may carry `#[len(expr)]`, the
///   number of elements the kernel reaches through it, from integer literals, integer constants
///   and the kernel's scalar parameters with `+ - * /` (`#[len(rows * cols)]`).
/// - The PTX entry is named after the function. Generic and const-generic parameters are kept.
/// - The function returns nothing; or `Result<(), E>` with `E: From<BuildError>`, so that `?`
///   works at the top level of the body (on host errors, say of the layout algebra), and the
///   generated function returns `Result<Kernel, E>`.
///
/// # Example: vector add with a dynamic bound and a tail
///
/// ```
/// use dsl_core::ir::Stmt;
/// use dsl_core::kernel::*;
/// use dsl_macros::kernel;
///
/// /// c[i] = a[i] + b[i] for i < n; each thread handles `per_thread` consecutive elements.
/// #[kernel]
/// fn vector_add(
///     #[host] per_thread: u32,
///     k: &KernelBuilder,
///     a: GlobalPtr<f32>,
///     b: GlobalPtr<f32>,
///     c: GlobalPtr<f32>,
///     n: Var<u32>,
/// ) {
///     k.max_threads(256, 1, 1);
///     let first = (block_idx_x() * block_dim_x() + thread_idx_x()) * per_thread;
///     if first + per_thread <= n {
///         // The whole chunk is in bounds: a host loop, unrolled.
///         for j in 0..per_thread {
///             c.store_at(first + j, a.load_at(first + j) + b.load_at(first + j));
///         }
///     } else {
///         // The tail: a device loop up to n.
///         for i in first..n {
///             c.store_at(i, a.load_at(i) + b.load_at(i));
///         }
///     }
/// }
///
/// let kernel = vector_add(4).unwrap();
/// assert_eq!(kernel.name, "vector_add");
/// assert_eq!(kernel.params.len(), 4);
/// let branch = kernel.body.iter().find_map(|s| match s {
///     Stmt::If { then, else_, .. } => Some((then, else_)),
///     _ => None,
/// });
/// let (then, else_) = branch.expect("a device `if`");
/// assert!(!then.iter().any(|s| matches!(s, Stmt::For { .. })), "the host loop unrolled");
/// assert!(else_.iter().any(|s| matches!(s, Stmt::For { .. })), "the tail is a device loop");
/// ```
///
/// # The typed signature
///
/// Beside the function, `#[kernel]` generates its typed signature (unless the function takes
/// `self`, as items cannot be declared in an `impl`): a type named after the function in
/// CamelCase with `Kernel` appended (`vector_add` gives `VectorAddKernel`, with the function's
/// generic parameters), implementing [`dsl_core::kernel::signature::KernelSignature`], with
///
/// - `build(host inputs..)`: the function's kernel as a
///   [`dsl_core::kernel::TypedKernel`], tagged with the signature;
/// - `launch(to, args..)`: one argument per kernel parameter, in order and by type, lowered by a
///   launcher `to` (codegen-ptx's JIT: `TypedFunction::with`), each `#[len(..)]` checked against
///   its buffer before the launch. A wrong argument type or count is a compile error: a `Var<T>`
///   takes a `T`, a `ConstPtr<T>` a shared device buffer of `T`s, a `GlobalPtr<T>` a mutable one.
///
/// The safe launch needs the signature to implement the `unsafe` trait
/// [`dsl_core::kernel::TrustedKernel`], by which the kernel's author states that it stays inside
/// its buffers: `unsafe impl TrustedKernel for VectorAddKernel {}` with a `// SAFETY:` comment.
/// See [`dsl_core::kernel::signature`]. The expansion's `build` holds one `unsafe` block (it tags
/// the kernel with its signature) under `#[allow(unsafe_code)]`, so a crate that denies unsafe
/// code builds it; one that forbids it (`#![forbid(unsafe_code)]`) cannot use `#[kernel]`.
///
/// # What is rewritten
///
/// | written | becomes |
/// |---------|---------|
/// | `if c { A }` | `Cond::if_(c, \|arm\| match arm { Arm::Then => { A }, Arm::Else => {} })` |
/// | `if c { A } else { B }`, value unused | `Cond::if_else(c, \|arm\| match arm { Then => { A }, Else => { B } })` |
/// | `if c { a } else { b }`, value used | `if_value(c, \|arm\| ..)`: a `bool` gives the taken arm's value, a device predicate merges device values through a register |
/// | `else if` | the `Else` arm holds the rewritten inner `if` |
/// | `for p in a..b { .. }` | `Iterate::for_each_(range(a, b), \|p\| { .. })` |
/// | `for p in a..=b`, `(a..b).step_by(s)` | `macro_support::range_inclusive(a, b)`, `range(a, b).step_by(s)` |
/// | `while c { .. }` | `LoopCond::run_while(\|part\| match part { LoopPart::Cond => Some(c), LoopPart::Body => { ..; None } })` |
/// | `place = e` | `{ let v = e; Assign::assign_(&mut place, v) }`: a device value keeps its register |
/// | `a < b`, `a <= b`, `a > b`, `a >= b`, `a == b`, `a != b` | `(&&operators::Cmp(&a, &b)).op_lt()`, ...: a device predicate (`setp`) when either side is a `Var<T>` and the other a `Var<T>` or a `T`, Rust's operator (a `bool`) on host values |
/// | `a && b`, `a \|\| b` | `operators::and(a, \|\| b)`, `or(..)`: Rust's short circuit on `bool`s; with a device predicate on either side a `Var<bool>`, the right side generated inside a branch on the left (a load it guards is never made out of bounds) |
/// | `let x = y;` (`y` a path), `let mut x = e;` | `macro_support::Let::new(y).let_()`: a device value (`Var`, array of `Var`s, pointer) is copied into a new register — `x` does not alias `y`, and a constant becomes a register that loops may assign — anything else moves |
///
/// The branches and loop bodies become closures (one closure per `if` and per `while`, so both
/// arms may borrow the same variables mutably). A device `if` runs its closure once per arm, a
/// device loop once; host ones run them as Rust would.
///
/// Left as Rust: `if let`, `while let`, `match` (host-only pattern matching); `for` over anything
/// but a range expression — `for x in v.iter()`, `for l in layouts`, `(a..b).rev()`,
/// `(a..b).into_iter()` — which is a host loop where `break` and `continue` work; `for` over a
/// range whose two bounds are integer literals (`0..4`: certainly host, and Rust then infers the
/// index type from its use, `usize` for `v[i]`); compound assignment `x += e` (the operator
/// traits, which write a `Var`'s register too); `&&`/`||` whose operands hold a `let` (let
/// chains); the insides of macro invocations (`assert!(x < n)` is Rust's `<`), of nested items and
/// of `const` blocks. `!` needs no rewriting: it is `not` on a `Var<bool>` (and on integers, as in
/// Rust, the bitwise complement).
///
/// Assignment needs [`dsl_core::kernel::Assign`]: `Var`s, global and shared pointers (their
/// address register is written), and the host types marked [`dsl_core::kernel::HostValue`]
/// (implement it for your own host types); other types are refused with a sentence saying so.
///
/// # What is refused
///
/// Each of these is a compile error at its span that says what to write instead:
///
/// - `return` inside a rewritten `if`/`for`/`while` (the branch is a closure, and a device
///   branch cannot end the kernel early): move the rest into the `else` branch, or put the exit
///   into a `while` condition; `return`, `?`, `break` and `continue` in the right side of `&&` or
///   `||` (a closure too), and `?` inside an `if` used as a value;
/// - `?` anywhere when the function does not return `Result<(), E>`. With that return type, `?`
///   works anywhere else, also inside device `if`/`for`/`while` statements: each rewritten
///   statement passes the error on, and it leaves the function as Rust's `?` does;
/// - `break`/`continue` out of a rewritten loop, or across a rewritten `if`; labels on rewritten
///   loops; `loop { .. }` (write `while cond { .. }`);
/// - destructuring assignment (`(a, b) = (x, y)`): assign each variable on its own;
/// - `async`, `const` and `extern` functions, variadics, arguments to `#[kernel]` or `#[host]`;
/// - a kernel parameter that is not a plain name, or whose type is plainly a host type (`u32`,
///   `&T`, a tuple, an array, `impl Trait`, a bare type parameter); any other type must implement
///   [`dsl_core::kernel::macro_support::KernelParam`], whose error names it;
/// - (type errors with a sentence, from the traits) a comparison of device values of two types
///   (`Var<u32> < Var<i32>`, `Var<u32> >= 1.5`: convert with `.cast::<T>()`); `&&`/`||` with an
///   operand that is neither a `bool` nor a `Var<bool>`; an `if` used as a value on
///   a device predicate whose arms are not device values of one type; assignment of a type that
///   is neither a device value nor a `HostValue`.
///
/// # Limits of the closures
///
/// Because branches and loop bodies are closures that a device construct may run more than once,
/// code inside them cannot move a value out of a variable declared outside (borrow or clone it),
/// and a variable declared without a value cannot be initialised in them (give it a value
/// first). Device values cannot cross kernels: a `Var` captured from another kernel's generation
/// is reported by the builder (`BuildError::ForeignValue`), as the macro cannot see it.
#[proc_macro_attribute]
pub fn kernel(attr: TokenStream, item: TokenStream) -> TokenStream {
    kernel_macro::kernel(attr.into(), item.into()).into()
}

/// Turns a helper function into device code that `#[kernel]` bodies (and other `#[device]`
/// functions) call: its body's `if`, `for`, `while`, `=` and `let` are rewritten exactly as a
/// kernel body's, so a program's roles (producer, consumer, epilogue) can be short functions.
/// The signature stays as written: parameters are whatever the caller passes (device values,
/// tensors, barriers, host configuration), and the function runs on the host while the kernel
/// is generated, emitting into the kernel being built.
///
/// A `#[device]` function that returns `Result<T, E>` may use `?` anywhere in its body, also
/// inside device `if`/`for`/`while` statements: the error leaves the function as with Rust's
/// `?` (each rewritten statement passes it on). `return` inside device control flow is refused
/// as in `#[kernel]`.
///
/// ```
/// use dsl_core::kernel::*;
/// use dsl_core::layout::LayoutError;
/// use dsl_macros::{device, kernel};
///
/// /// Adds `x` to every element below `n` of a block's slice: a device loop and a device `if`.
/// #[device]
/// fn add_all(p: GlobalPtr<f32>, n: Var<u32>, x: Var<f32>) -> Result<(), LayoutError> {
///     let base = block_idx_x() * block_dim_x();
///     for i in (thread_idx_x()..block_dim_x()).step_by(32u32) {
///         let at = base + i;
///         if at.lt(n) {
///             p.store_at(at, p.load_at(at) + x);
///             // `?` in device control flow: the layout error would leave `add_all`.
///             let _tile: dsl_core::layout::Layout = "(4,8):(8,1)".parse()?;
///         }
///     }
///     Ok(())
/// }
///
/// #[derive(Debug)]
/// enum MyError {
///     Layout(LayoutError),
///     Build(BuildError),
/// }
/// impl From<LayoutError> for MyError {
///     fn from(e: LayoutError) -> Self { MyError::Layout(e) }
/// }
/// impl From<BuildError> for MyError {
///     fn from(e: BuildError) -> Self { MyError::Build(e) }
/// }
///
/// #[kernel]
/// fn bump(p: GlobalPtr<f32>, n: Var<u32>) -> Result<(), MyError> {
///     add_all(p, n, Var::konst(1.0f32))?;
///     Ok(())
/// }
///
/// let k = bump().unwrap();
/// assert_eq!(k.params.len(), 2);
/// ```
#[proc_macro_attribute]
pub fn device(attr: TokenStream, item: TokenStream) -> TokenStream {
    kernel_macro::device(attr.into(), item.into()).into()
}

/// CuTe's `make_tiled_copy` (or `make_tiled_copy_A/B/C`) in CuTe notation, checked at compile time.
///
/// Expands to a [`dsl_core::tiled::TiledCopy`]. The first argument is a copy atom as CuTe names it,
/// the second the value type, then named arguments in any order:
///
/// | form | builds |
/// |------|--------|
/// | `tiled_copy!(ATOM, T, thr = L, val = L)` | `make_tiled_copy(Copy_Atom<ATOM, T>, thr, val)` |
/// | `tiled_copy!(ATOM, T, mma = expr, operand = A)` | `make_tiled_copy_A(Copy_Atom<ATOM, T>, mma)` (`B`, `C` likewise) |
///
/// - `ATOM`: `UniversalCopy<u8>` .. `<u128>`, `SM80_CP_ASYNC_CACHEGLOBAL<u128>`,
///   `SM80_CP_ASYNC_CACHEALWAYS<u32|u64|u128>`, `SM75_U32x{1,2,4}_LDSM_N`, `SM75_U16x{2,4,8}_LDSM_T`,
///   `SM90_U32x{1,2,4}_STSM_N` (CuTe's `uint128_t` spelling reads too).
/// - `T`: `f16`, `bf16`, `f32`, `u8`, `u16`, `u32`, `u64` or `u128`.
/// - `thr`: the thread layout `(m,n) -> thread`, `val`: one thread's value layout `(m,n) -> value`,
///   both in [`layout!`]'s notation (constants and `{expr}` included).
/// - `mma`: any expression of type `TiledMma` or `&TiledMma`.
///
/// # Compile-time checks
///
/// The atom's name (a misspelling suggests the nearest names; an MMA atom says to use
/// [`tiled_mma!`]), the value type, and the pair, by building CuTe's `Copy_Atom` now (ldmatrix
/// refuses a 64-bit type, say). When `thr` and `val` are literals the tiled copy itself is built
/// now, so a thread or value count that the atom cannot tile is a compile error at that argument,
/// with dsl-core's reason. Unknown, missing, duplicate or conflicting arguments are errors too.
///
/// # Run time
///
/// The expansion calls the same `dsl_core` functions. What was built at compile time cannot fail
/// again (an `expect` says so). What depends on constants or on the `mma` value is checked where
/// the macro runs and **panics** with dsl-core's reason and the call as written, as [`layout!`]
/// does for constants (a constant that makes a layout invalid, like an extent of 0, panics with
/// `layout!`'s message naming that layout).
///
/// ```
/// use dsl_macros::{tiled_copy, tiled_mma};
/// use dsl_core::atom::{CopyAtom, CpAsyncCacheGlobal, LdsmN, ValType};
/// use dsl_core::tiled::{make_tiled_copy, make_tiled_copy_a};
///
/// // G2S: 128 threads, each copying 8 halves (16 bytes) per cp.async.
/// let g2s = tiled_copy!(SM80_CP_ASYNC_CACHEGLOBAL<u128>, f16, thr = (32,4):(4,1), val = (1,8));
/// assert_eq!((g2s.size(), g2s.tiler_mn.clone()), (128, vec![32, 32]));
/// let cp = CopyAtom::new(CpAsyncCacheGlobal { bits: 128 }, ValType::F16).unwrap();
/// let by_hand = make_tiled_copy(cp, &"(32,4):(4,1)".parse().unwrap(), &"(1,8)".parse().unwrap());
/// assert_eq!(g2s, by_hand.unwrap());
///
/// // S2R: ldmatrix feeding the A operand of a tiled MMA.
/// let mma = tiled_mma!(SM80_16x8x16_F16F16F16F16_TN, atoms = (2,2,1), tile = (32,32,16));
/// let s2r = tiled_copy!(SM75_U32x4_LDSM_N, f16, mma = mma, operand = A);
/// let ldsm = CopyAtom::new(LdsmN { n: 4 }, ValType::F16).unwrap();
/// assert_eq!(s2r, make_tiled_copy_a(ldsm, &mma).unwrap());
///
/// // Constants are read where the macro expands.
/// const THREADS_K: i64 = 4;
/// let g2s = tiled_copy!(SM80_CP_ASYNC_CACHEGLOBAL<u128>, f16,
///                       thr = (32,THREADS_K):(THREADS_K,1), val = (1,8));
/// assert_eq!(g2s.size(), 128);
/// ```
///
/// ldmatrix moves 16-bit values; a 64-bit type does not compile:
///
/// ```compile_fail
/// let s2r = dsl_macros::tiled_copy!(SM75_U32x4_LDSM_N, u64, thr = (32,1), val = (1,2));
/// ```
#[proc_macro]
pub fn tiled_copy(input: TokenStream) -> TokenStream {
    tiled_macro::tiled_copy(input.into()).into()
}

/// CuTe's `make_tiled_mma` in CuTe notation, checked at compile time.
///
/// Expands to a [`dsl_core::tiled::TiledMma`]:
/// `tiled_mma!(ATOM, atoms = L)` or `tiled_mma!(ATOM, atoms = L, tile = (M, N, K))`.
///
/// - `ATOM`: `SM80_16x8x16_F16F16F16F16_TN`, `SM80_16x8x16_F32F16F16F32_TN` or
///   `SM80_16x8x16_F32BF16BF16F32_TN` (the atom fixes the value types).
/// - `atoms`: CuTe's `AtomLayoutMNK`, how atoms tile (M, N, K), in [`layout!`]'s notation:
///   `(2,2,1)` is `(2,2,1):(1,2,4)`.
/// - `tile` (optional): CuTe's `PermutationMNK`, up to three entries; each is `_` (the atoms'
///   own extent), an integer `n` (the tiler `n:1`, which only sets the tile's size), or any layout
///   (a permutation, like `(8,2,2):(1,16,8)`). Left out, every entry is `_`.
///
/// # Compile-time checks
///
/// The atom's name (a misspelling suggests the nearest names; a copy atom says to use
/// [`tiled_copy!`]), the arguments, and, for every literal argument, the construction itself:
/// `atoms` is built first, then each tile entry, so a tile that is not a multiple of the atoms'
/// extent is a compile error at that entry, with dsl-core's reason. When everything is literal the
/// MMA's A, B and C thread-value layouts are computed too.
///
/// # Run time
///
/// As for [`tiled_copy!`]: built again with the same call; constants are checked there and a
/// refusal **panics** with dsl-core's reason.
///
/// ```
/// use dsl_macros::tiled_mma;
/// use dsl_core::atom::{MmaAtom, Sm80Mma};
/// use dsl_core::layout::Layout;
/// use dsl_core::tiled::make_tiled_mma;
///
/// let mma = tiled_mma!(SM80_16x8x16_F16F16F16F16_TN, atoms = (2,2,1), tile = (32,32,16));
/// assert_eq!((mma.size(), mma.tile_size_mnk()), (128, (32, 32, 16)));
/// let perm = ["32:1", "32:1", "16:1"].map(|s| Some(s.parse::<Layout>().unwrap()));
/// let atom = MmaAtom::new(Sm80Mma::F16F16F16F16);
/// assert_eq!(mma, make_tiled_mma(atom, &"(2,2,1)".parse().unwrap(), &perm).unwrap());
///
/// // `_` keeps the atoms' extent: 2 x 8 in N.
/// let mma = tiled_mma!(SM80_16x8x16_F32F16F16F32_TN, atoms = (2,2,1), tile = (64,_,16));
/// assert_eq!(mma.tile_size_mnk(), (64, 16, 16));
/// ```
///
/// A tile that the atoms cannot divide does not compile:
///
/// ```compile_fail
/// let mma = dsl_macros::tiled_mma!(SM80_16x8x16_F16F16F16F16_TN, atoms = (2,2,1), tile = (32,24,16));
/// ```
#[proc_macro]
pub fn tiled_mma(input: TokenStream) -> TokenStream {
    tiled_macro::tiled_mma(input.into()).into()
}
