//! The kernel under construction, kept in a thread-local so that operators on device values can
//! emit instructions without a builder argument. [`build_kernel`] sets it and clears it (also when
//! the closure panics); building a second kernel on the same thread meanwhile is a typed error.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::marker::PhantomData;
use std::sync::atomic::{AtomicU32, Ordering};

use super::error::BuildError;
use crate::ir::{Kernel, Location, Op, Reg, SpecialReg, Stmt, Type};

/// Kernel ids start at 1; 0 marks values made with no kernel under construction.
static NEXT_KERNEL: AtomicU32 = AtomicU32::new(1);

thread_local! {
    static CTX: RefCell<Option<Builder>> = const { RefCell::new(None) };
}

/// State of the kernel under construction.
pub(crate) struct Builder {
    /// Identifies the kernel; every register-backed device value records it.
    pub id: u32,
    pub kernel: Kernel,
    /// Instructions hoisted to the kernel's entry (parameter loads, shared addresses, thread ids).
    pub prologue: Vec<Stmt>,
    /// Open blocks, innermost last; `blocks[0]` is the body.
    pub blocks: Vec<Vec<Stmt>>,
    /// Errors recorded by operators (which cannot return them); `build_kernel` returns the first.
    pub errors: Vec<BuildError>,
    /// Special registers already read in the prologue.
    pub specials: HashMap<SpecialReg, Reg>,
    /// Names of parameters and shared allocations.
    pub names: HashSet<String>,
    /// The Rust location instructions emitted now carry (see [`super::location`]).
    pub loc: Option<Location>,
}

impl Builder {
    /// `stmt` with the current location, if it is an instruction without one.
    pub fn stamp(&self, mut stmt: Stmt) -> Stmt {
        if let Stmt::Op(i) = &mut stmt {
            if i.loc.is_none() {
                i.loc = self.loc;
            }
        }
        stmt
    }

    /// Emits `stmt` at the kernel's entry, stamped with the current location.
    pub fn hoist(&mut self, stmt: Stmt) {
        let stmt = self.stamp(stmt);
        self.prologue.push(stmt);
    }

    pub fn emit(&mut self, stmt: Stmt) {
        let stmt = self.stamp(stmt);
        match self.blocks.last_mut() {
            Some(b) => b.push(stmt),
            None => unreachable!("a kernel builder always has its body block open"),
        }
    }

    pub fn error(&mut self, make: impl FnOnce(String) -> BuildError) {
        let e = make(self.kernel.name.clone());
        self.errors.push(e);
    }

    /// Whether code is being emitted inside device control flow.
    pub fn in_device_block(&self) -> bool {
        self.blocks.len() > 1
    }

    pub fn claim_name(&mut self, name: &str) -> bool {
        let valid = name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid {
            self.error(|kernel| BuildError::BadName {
                kernel,
                message: format!("`{name}` is not a valid PTX identifier (letters, digits, `_`)"),
            });
            return false;
        }
        if !self.names.insert(name.to_string()) {
            self.error(|kernel| BuildError::BadName {
                kernel,
                message: format!("the name `{name}` is used twice"),
            });
            return false;
        }
        true
    }
}

/// Runs `f` on the kernel under construction; `None` when no kernel is being built on this
/// thread. `f` must not call back into user code (the context is borrowed meanwhile).
pub(crate) fn with<R>(f: impl FnOnce(&mut Builder) -> R) -> Option<R> {
    CTX.with(|c| c.borrow_mut().as_mut().map(f))
}

/// Records a build error in the kernel under construction (nothing when no kernel is being
/// built): library code that cannot return an error (a constructor, an operator) reports a bad
/// argument this way, and [`build_kernel`] returns the first one recorded. `make` receives the
/// kernel's name.
pub fn record_error(make: impl FnOnce(String) -> BuildError) {
    with(|b| b.error(make));
}

/// Emits one instruction into the innermost open block (nothing when no kernel is being built).
pub fn emit(op: impl Into<Op>) {
    let op = op.into();
    with(|b| b.emit(Stmt::op(op)));
}

/// A new register of type `ty` in the kernel under construction, with the kernel's id
/// (`None` when no kernel is being built).
pub(crate) fn new_reg(ty: Type) -> Option<(Reg, u32)> {
    with(|b| (b.kernel.new_reg(ty), b.id))
}

/// Opens a block, runs `f` (user code) with it open, and returns the block's statements.
pub(crate) fn in_block<R>(f: impl FnOnce() -> R) -> (R, Vec<Stmt>) {
    with(|b| b.blocks.push(Vec::new()));
    let r = f();
    let stmts = with(|b| {
        if b.blocks.len() > 1 {
            b.blocks.pop().unwrap_or_default()
        } else {
            Vec::new()
        }
    })
    .unwrap_or_default();
    (r, stmts)
}

/// Clears the context when dropped, so that a panicking kernel closure leaves the thread clean.
struct ClearOnDrop;

impl Drop for ClearOnDrop {
    fn drop(&mut self) {
        CTX.with(|c| c.borrow_mut().take());
    }
}

/// The handle a kernel closure receives: declares parameters, shared memory and launch hints.
/// Device values and control flow do not need it (they use the thread-local context), so it can
/// be captured by shared reference in any number of closures.
pub struct KernelBuilder {
    pub(crate) _not_send: PhantomData<*const ()>,
}

/// Builds a kernel called `name` by running `body`, which emits instructions through the builder
/// API ([`KernelBuilder`], [`crate::kernel::Var`] operators, control-flow functions).
///
/// Post-conditions: on `Ok`, every op of the kernel passed [`crate::ir::OpInfo::check`], every device value
/// used belonged to this kernel, and the thread has no kernel under construction (also after a
/// panic in `body`). Errors: [`BuildError::NestedKernel`] when called inside another
/// `build_kernel` on this thread (the outer kernel is unaffected), and the first error any
/// operation recorded.
pub fn build_kernel(name: &str, body: impl FnOnce(&KernelBuilder)) -> Result<Kernel, BuildError> {
    let outer = CTX.with(|c| c.borrow().as_ref().map(|b| b.kernel.name.clone()));
    if let Some(outer) = outer {
        return Err(BuildError::NestedKernel {
            outer,
            inner: name.to_string(),
        });
    }
    let id = NEXT_KERNEL.fetch_add(1, Ordering::Relaxed);
    let builder = Builder {
        id,
        kernel: Kernel::new(name),
        prologue: Vec::new(),
        blocks: vec![Vec::new()],
        errors: Vec::new(),
        specials: HashMap::new(),
        names: HashSet::new(),
        loc: None,
    };
    CTX.with(|c| *c.borrow_mut() = Some(builder));
    let guard = ClearOnDrop;
    // The entry name is checked like the others but does not reserve the name for parameters.
    with(|b| {
        b.claim_name(name);
        b.names.remove(name);
    });
    body(&KernelBuilder {
        _not_send: PhantomData,
    });
    let builder = CTX.with(|c| c.borrow_mut().take());
    drop(guard);
    match builder {
        Some(b) => finish(b),
        None => unreachable!("the context of a kernel under construction vanished"),
    }
}

fn finish(mut b: Builder) -> Result<Kernel, BuildError> {
    if let Some(e) = b.errors.into_iter().next() {
        return Err(e);
    }
    let body = b.blocks.pop().unwrap_or_default();
    let mut stmts = b.prologue;
    stmts.extend(body);
    b.kernel.body = stmts;
    b.kernel.check().map_err(|source| BuildError::Ir {
        kernel: b.kernel.name.clone(),
        source,
    })?;
    Ok(b.kernel)
}
