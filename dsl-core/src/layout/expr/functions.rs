//! The calculator's functions: CuTe's names, each checking its arguments' kinds and handing the work
//! to the layout algebra. An argument of the wrong kind is a parse error at that argument; an
//! operation's own error comes back wrapped in [`LayoutError::InCall`] naming the call.

use super::checked;
use super::parser::{shape_tiler, Item, Parser};
use super::Value;
use crate::layout::{
    blocked_product, coalesce, coalesce_with, complement, composition, composition_tiler, downcast,
    filter, filter_zeros, flat_divide, flat_product, left_inverse, logical_divide, logical_product,
    make_ordered_layout, raked_product, recast_layout, right_inverse, tile_to_shape, tiled_divide,
    tiled_product, upcast, zipped_divide, zipped_product, ComposedLayout, IntTuple, Layout,
    LayoutError, Tiler,
};

/// A function: its name, how many arguments it takes, and how they read.
pub(super) struct Spec {
    name: &'static str,
    min: usize,
    max: usize,
    usage: &'static str,
}

const fn spec(name: &'static str, min: usize, max: usize, usage: &'static str) -> Spec {
    Spec {
        name,
        min,
        max,
        usage,
    }
}

const MANY: usize = usize::MAX;

const SPECS: &[Spec] = &[
    spec("size", 1, 1, "size(L)"),
    spec("cosize", 1, 1, "cosize(L)"),
    spec("rank", 1, 1, "rank(L)"),
    spec("depth", 1, 1, "depth(L)"),
    spec("coalesce", 1, 2, "coalesce(L) or coalesce(L, profile)"),
    spec("filter", 1, 1, "filter(L)"),
    spec("filter_zeros", 1, 1, "filter_zeros(L)"),
    spec("composition", 2, 2, "composition(A, B)"),
    spec(
        "complement",
        1,
        2,
        "complement(L) or complement(L, cotarget)",
    ),
    spec("right_inverse", 1, 1, "right_inverse(L)"),
    spec("left_inverse", 1, 1, "left_inverse(L)"),
    spec("logical_divide", 2, 2, "logical_divide(A, tiler)"),
    spec("zipped_divide", 2, 2, "zipped_divide(A, tiler)"),
    spec("tiled_divide", 2, 2, "tiled_divide(A, tiler)"),
    spec("flat_divide", 2, 2, "flat_divide(A, tiler)"),
    spec("logical_product", 2, 2, "logical_product(A, B)"),
    spec("zipped_product", 2, 2, "zipped_product(A, B)"),
    spec("tiled_product", 2, 2, "tiled_product(A, B)"),
    spec("flat_product", 2, 2, "flat_product(A, B)"),
    spec("blocked_product", 2, 2, "blocked_product(A, B)"),
    spec("raked_product", 2, 2, "raked_product(A, B)"),
    spec(
        "tile_to_shape",
        2,
        3,
        "tile_to_shape(L, shape) or tile_to_shape(L, shape, order)",
    ),
    spec(
        "make_ordered_layout",
        2,
        2,
        "make_ordered_layout(shape, order)",
    ),
    spec(
        "make_layout",
        1,
        MANY,
        "make_layout(shape), make_layout(shape, stride) or make_layout(L0, L1, ...)",
    ),
    spec(
        "recast_layout",
        3,
        3,
        "recast_layout(L, old_bits, new_bits)",
    ),
    spec("upcast", 2, 2, "upcast(L, n)"),
    spec("downcast", 2, 2, "downcast(L, n)"),
    spec("get", 2, MANY, "get(L, i, ...)"),
    spec("layout", 2, MANY, "layout(L, i, ...)"),
    spec("select", 2, MANY, "select(L, i, j, ...)"),
    spec("flatten", 1, 1, "flatten(L)"),
    spec("crd2idx", 3, 3, "crd2idx(crd, shape, stride)"),
    spec("idx2crd", 2, 2, "idx2crd(idx, shape)"),
    spec("eval", 2, MANY, "eval(L, i) or eval(L, i, j, ...)"),
];

/// The names of the calculator's functions.
pub const FUNCTIONS: &[&str] = &[
    "size",
    "cosize",
    "rank",
    "depth",
    "coalesce",
    "filter",
    "filter_zeros",
    "composition",
    "complement",
    "right_inverse",
    "left_inverse",
    "logical_divide",
    "zipped_divide",
    "tiled_divide",
    "flat_divide",
    "logical_product",
    "zipped_product",
    "tiled_product",
    "flat_product",
    "blocked_product",
    "raked_product",
    "tile_to_shape",
    "make_ordered_layout",
    "make_layout",
    "recast_layout",
    "upcast",
    "downcast",
    "get",
    "layout",
    "select",
    "flatten",
    "crd2idx",
    "idx2crd",
    "eval",
];

pub(super) fn lookup(name: &str) -> Option<&'static Spec> {
    SPECS.iter().find(|s| s.name == name)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, &cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// The message for an unknown name, suggesting the nearest known one.
pub(super) fn unknown(name: &str) -> String {
    let nearest = SPECS
        .iter()
        .map(|s| (edit_distance(name, s.name), s.name))
        .min()
        .map(|(_, n)| n)
        .unwrap_or("size");
    format!("unknown function `{name}`; did you mean `{nearest}`?")
}

/// Arguments of one call, with the parser for error positions.
struct Call<'p, 'a> {
    p: &'p Parser<'a>,
    name: &'static str,
    pos: usize,
    args: &'p [Item],
}

impl Call<'_, '_> {
    fn printed(&self) -> String {
        let args: Vec<String> = self.args.iter().map(|a| a.value.to_string()).collect();
        format!("{}({})", self.name, args.join(", "))
    }

    /// Wrap an operation's error with the call.
    fn wrap(&self, e: LayoutError) -> LayoutError {
        LayoutError::InCall {
            input: self.p.src().to_string(),
            column: self.p.column(self.pos),
            call: self.printed(),
            error: Box::new(e),
        }
    }

    fn bad_arg(&self, i: usize, want: &str) -> LayoutError {
        let a = &self.args[i];
        self.p.error_at(
            a.pos,
            format!(
                "argument {} of `{}` must be {want}, not {} `{}`",
                i + 1,
                self.name,
                a.value.kind(),
                a.value
            ),
        )
    }

    fn layout(&self, i: usize) -> Result<Layout, LayoutError> {
        let a = &self.args[i];
        match &a.value {
            Value::Layout(l) => Ok(l.clone()),
            Value::Tuple(t) => Layout::col_major(t.clone())
                .and_then(|l| checked::check_layout(&l).map(|()| l))
                .map_err(|e| self.p.error_at(a.pos, e.to_string())),
            Value::Int(n) => {
                Layout::vector(*n, 1).map_err(|e| self.p.error_at(a.pos, e.to_string()))
            }
            _ => Err(self.bad_arg(i, "a layout")),
        }
    }

    fn shape(&self, i: usize) -> Result<IntTuple, LayoutError> {
        match &self.args[i].value {
            Value::Int(n) => Ok(IntTuple::Int(*n)),
            Value::Tuple(t) => Ok(t.clone()),
            _ => Err(self.bad_arg(i, "a shape (an integer or a tuple of integers)")),
        }
    }

    fn int(&self, i: usize) -> Result<i64, LayoutError> {
        match &self.args[i].value {
            Value::Int(n) => Ok(*n),
            _ => Err(self.bad_arg(i, "an integer")),
        }
    }

    fn index(&self, i: usize) -> Result<usize, LayoutError> {
        let n = self.int(i)?;
        usize::try_from(n).map_err(|_| {
            self.p.error_at(
                self.args[i].pos,
                format!("a mode index is at least 0, not {n}"),
            )
        })
    }

    fn tiler(&self, i: usize) -> Result<Tiler, LayoutError> {
        let a = &self.args[i];
        match &a.value {
            Value::Tiler(t) => Ok(t.clone()),
            Value::Layout(l) => Ok(Tiler::Layout(l.clone())),
            Value::Tuple(t) => shape_tiler(t).map_err(|e| self.p.error_at(a.pos, e.to_string())),
            Value::Int(_) => self.p.tiler_mode(a),
            _ => Err(self.bad_arg(i, "a layout or a tiler")),
        }
    }

    /// A layout result, bounded so later arithmetic on it cannot overflow.
    fn done(&self, r: Result<Layout, LayoutError>) -> Result<Value, LayoutError> {
        let l = r.map_err(|e| self.wrap(e))?;
        checked::check_layout(&l).map_err(|e| self.wrap(e))?;
        Ok(Value::Layout(l))
    }

    fn done_composed(&self, r: Result<ComposedLayout, LayoutError>) -> Result<Value, LayoutError> {
        let c = r.map_err(|e| self.wrap(e))?;
        checked::check_composed(&c).map_err(|e| self.wrap(e))?;
        Ok(Value::Composed(c))
    }

    fn composed(&self, i: usize) -> Option<&ComposedLayout> {
        match &self.args[i].value {
            Value::Composed(c) => Some(c),
            _ => None,
        }
    }

    /// Indices from argument `from` on.
    fn indices(&self, from: usize) -> Result<Vec<usize>, LayoutError> {
        (from..self.args.len()).map(|i| self.index(i)).collect()
    }

    /// A coordinate from arguments `from..`: one argument is an index or a coordinate tuple; several
    /// are the modes of a coordinate, as CuTe's `layout(i, j)`.
    fn coordinate(&self, from: usize) -> Result<IntTuple, LayoutError> {
        if self.args.len() == from + 1 {
            return self.shape(from);
        }
        Ok(IntTuple::Tuple(
            (from..self.args.len())
                .map(|i| self.shape(i))
                .collect::<Result<_, _>>()?,
        ))
    }
}

/// Call function `name` (its name at byte `pos`) with `args`.
pub(super) fn call(
    p: &Parser<'_>,
    name: &str,
    pos: usize,
    args: &[Item],
) -> Result<Value, LayoutError> {
    let spec = lookup(name).ok_or_else(|| p.error_at(pos, unknown(name)))?;
    if args.len() < spec.min || args.len() > spec.max {
        let takes = if spec.max == MANY {
            format!("at least {}", spec.min)
        } else if spec.min == spec.max {
            format!("{}", spec.min)
        } else {
            format!("{} to {}", spec.min, spec.max)
        };
        return Err(p.error_at(
            pos,
            format!(
                "`{name}` takes {takes} arguments ({}), not {}",
                spec.usage,
                args.len()
            ),
        ));
    }
    let c = Call {
        p,
        name: spec.name,
        pos,
        args,
    };
    dispatch(&c)
}

/// Evaluate `item` at the coordinate `args` (`L(i)`, `L(i,j)`), the parenthesis at byte `open`.
pub(super) fn apply(
    p: &Parser<'_>,
    item: &Item,
    args: &[Item],
    open: usize,
) -> Result<Value, LayoutError> {
    if args.is_empty() {
        return Err(p.error_at(open, "an evaluation needs an index or a coordinate"));
    }
    let mut all = Vec::with_capacity(args.len() + 1);
    all.push(item.clone());
    all.extend_from_slice(args);
    let c = Call {
        p,
        name: "eval",
        pos: item.pos,
        args: &all,
    };
    eval(&c)
}

fn eval(c: &Call<'_, '_>) -> Result<Value, LayoutError> {
    match &c.args[0].value {
        Value::Swizzle(s) if c.args.len() == 2 => Ok(Value::Int(s.apply(c.int(1)?))),
        Value::Composed(comp) => {
            let crd = c.coordinate(1)?;
            checked::eval_composed(comp, &crd)
                .map(Value::Int)
                .map_err(|e| c.wrap(e))
        }
        Value::Layout(_) | Value::Tuple(_) | Value::Int(_) => {
            let l = c.layout(0)?;
            let crd = c.coordinate(1)?;
            checked::eval_layout(&l, &crd)
                .map(Value::Int)
                .map_err(|e| c.wrap(e))
        }
        _ => Err(c.bad_arg(0, "a layout or composed layout")),
    }
}

fn int_result(n: usize) -> Value {
    Value::Int(i64::try_from(n).unwrap_or(i64::MAX))
}

fn dispatch(c: &Call<'_, '_>) -> Result<Value, LayoutError> {
    let comp = c.composed(0);
    match c.name {
        "size" => Ok(Value::Int(match comp {
            Some(k) => k.size(),
            None => c.layout(0)?.size(),
        })),
        "cosize" => Ok(Value::Int(match comp {
            Some(k) => k.cosize(),
            None => c.layout(0)?.cosize(),
        })),
        "rank" => Ok(int_result(match comp {
            Some(k) => k.rank(),
            None => c.layout(0)?.rank(),
        })),
        "depth" => Ok(int_result(match comp {
            Some(k) => k.depth(),
            None => c.layout(0)?.depth(),
        })),
        "coalesce" => match (comp, c.args.len()) {
            (Some(k), 1) => c.done_composed(Ok(k.coalesce())),
            (Some(k), _) => c.done_composed(k.coalesce_with(&c.shape(1)?)),
            (None, 1) => c.done(Ok(coalesce(&c.layout(0)?))),
            (None, _) => c.done(coalesce_with(&c.layout(0)?, &c.shape(1)?)),
        },
        "filter" => match comp {
            Some(k) => c.done_composed(Ok(k.filter())),
            None => c.done(Ok(filter(&c.layout(0)?))),
        },
        "filter_zeros" => c.done(Ok(filter_zeros(&c.layout(0)?))),
        "composition" => composition_of(c),
        "complement" => {
            let l = match comp {
                Some(k) => k.layout.clone(),
                None => c.layout(0)?,
            };
            // C++ CuTe's default cotarget is cosize(L) (pycute's is 1).
            let cotarget = if c.args.len() == 2 {
                c.int(1)?
            } else {
                l.cosize()
            };
            c.done(complement(&l, cotarget))
        }
        "right_inverse" => c.done(right_inverse(&plain(c)?)),
        "left_inverse" => c.done(left_inverse(&plain(c)?)),
        "logical_divide" | "zipped_divide" | "tiled_divide" | "flat_divide" => {
            let t = c.tiler(1)?;
            match comp {
                Some(k) => c.done_composed(match c.name {
                    "logical_divide" => k.logical_divide(&t),
                    "zipped_divide" => k.zipped_divide(&t),
                    "tiled_divide" => k.tiled_divide(&t),
                    _ => k.flat_divide(&t),
                }),
                None => {
                    let a = c.layout(0)?;
                    c.done(match c.name {
                        "logical_divide" => logical_divide(&a, &t),
                        "zipped_divide" => zipped_divide(&a, &t),
                        "tiled_divide" => tiled_divide(&a, &t),
                        _ => flat_divide(&a, &t),
                    })
                }
            }
        }
        "logical_product" | "zipped_product" | "tiled_product" | "flat_product" => {
            let t = c.tiler(1)?;
            match comp {
                Some(k) => c.done_composed(match c.name {
                    "logical_product" => k.logical_product(&t),
                    "zipped_product" => k.zipped_product(&t),
                    "tiled_product" => k.tiled_product(&t),
                    _ => k.flat_product(&t),
                }),
                None => {
                    let a = c.layout(0)?;
                    c.done(match c.name {
                        "logical_product" => logical_product(&a, &t),
                        "zipped_product" => zipped_product(&a, &t),
                        "tiled_product" => tiled_product(&a, &t),
                        _ => flat_product(&a, &t),
                    })
                }
            }
        }
        "blocked_product" | "raked_product" => {
            let b = c.layout(1)?;
            let blocked = c.name == "blocked_product";
            match comp {
                Some(k) if blocked => c.done_composed(k.blocked_product(&b)),
                Some(k) => c.done_composed(k.raked_product(&b)),
                None if blocked => c.done(blocked_product(&c.layout(0)?, &b)),
                None => c.done(raked_product(&c.layout(0)?, &b)),
            }
        }
        "tile_to_shape" => {
            let shape = c.shape(1)?;
            let order = if c.args.len() == 3 {
                Some(c.shape(2)?)
            } else {
                None
            };
            match comp {
                Some(k) => c.done_composed(k.tile_to_shape(&shape, order.as_ref())),
                None => c.done(tile_to_shape(&c.layout(0)?, &shape, order.as_ref())),
            }
        }
        "make_ordered_layout" => c.done(make_ordered_layout(&c.shape(0)?, &c.shape(1)?)),
        "make_layout" => make_layout(c),
        "recast_layout" => {
            let bits = |i: usize| -> Result<u32, LayoutError> {
                let n = c.int(i)?;
                u32::try_from(n).map_err(|_| {
                    c.p.error_at(
                        c.args[i].pos,
                        format!("a width in bits is at least 0, not {n}"),
                    )
                })
            };
            c.done(recast_layout(&plain(c)?, bits(1)?, bits(2)?))
        }
        "upcast" => c.done(upcast(&plain(c)?, c.int(1)?)),
        "downcast" => c.done(downcast(&plain(c)?, c.int(1)?)),
        "get" | "layout" => get(c),
        "select" => {
            let idx = c.indices(1)?;
            let l = match comp {
                Some(k) => k.layout.clone(),
                None => c.layout(0)?,
            };
            // Modes chosen again count again: refuse a result past MAX_MODES before making it.
            let per_mode: Vec<usize> = l.shape().modes().iter().map(checked::leaves).collect();
            let count = idx
                .iter()
                .map(|&i| per_mode.get(i).copied().unwrap_or(0))
                .fold(0, usize::saturating_add);
            checked::check_count(count).map_err(|e| c.wrap(e))?;
            match comp {
                Some(k) => c.done_composed(k.select(&idx)),
                None => c.done(l.select(&idx)),
            }
        }
        "flatten" => match (&c.args[0].value, comp) {
            (_, Some(k)) => c.done_composed(Ok(k.flatten())),
            (Value::Tuple(t), _) if !c.args[0].bare => Ok(Value::Tuple(t.flatten())),
            _ => c.done(Ok(c.layout(0)?.flatten())),
        },
        "crd2idx" => {
            let (crd, shape, stride) = (c.shape(0)?, c.shape(1)?, c.shape(2)?);
            // Shape and stride must make a layout: congruent, every extent at least 1.
            Layout::new(shape.clone(), stride.clone()).map_err(|e| c.wrap(e))?;
            checked::crd2idx(&crd, &shape, &stride)
                .map(Value::Int)
                .map_err(|e| c.wrap(e))
        }
        "idx2crd" => {
            let idx = c.int(0)?;
            let shape = c.shape(1)?;
            // A shape is valid when its column-major layout is: extents >= 1, size within i64.
            Layout::col_major(shape.clone()).map_err(|e| c.wrap(e))?;
            Ok(match shape.idx2crd(idx).map_err(|e| c.wrap(e))? {
                IntTuple::Int(n) => Value::Int(n),
                t => Value::Tuple(t),
            })
        }
        "eval" => eval(c),
        other => Err(c.p.error_at(c.pos, unknown(other))),
    }
}

/// Argument 0 as a layout, refusing a composed layout for operations CuTe defines only on layouts
/// here (inverses of a swizzle and recasts of a swizzle are not modelled).
fn plain(c: &Call<'_, '_>) -> Result<Layout, LayoutError> {
    if c.composed(0).is_some() {
        return Err(c.bad_arg(
            0,
            "a layout (this function is not defined here for composed layouts)",
        ));
    }
    c.layout(0)
}

fn composition_of(c: &Call<'_, '_>) -> Result<Value, LayoutError> {
    match &c.args[0].value {
        Value::Swizzle(s) => {
            // CuTe: composition(Swizzle, Layout) is the composed layout `S o 0 o L`, except that
            // the identity swizzle (B = 0) leaves the layout alone.
            let b = c.layout(1)?;
            if s.is_identity() {
                return c.done(Ok(b));
            }
            c.done_composed(Ok(ComposedLayout::new(*s, 0, b)))
        }
        Value::Composed(k) => match &c.args[1].value {
            Value::Layout(b) => c.done_composed(k.compose(b)),
            Value::Composed(_) | Value::Swizzle(_) => Err(c.bad_arg(1, "a layout or a tiler")),
            _ => c.done_composed(k.compose_tiler(&c.tiler(1)?)),
        },
        _ => {
            let a = c.layout(0)?;
            match &c.args[1].value {
                Value::Layout(b) => c.done(composition(&a, b)),
                Value::Int(_) => c.done(composition(&a, &c.layout(1)?)),
                Value::Composed(_) | Value::Swizzle(_) => Err(c.bad_arg(1, "a layout or a tiler")),
                _ => c.done(composition_tiler(&a, &c.tiler(1)?)),
            }
        }
    }
}

fn make_layout(c: &Call<'_, '_>) -> Result<Value, LayoutError> {
    let any_layout = c.args.iter().any(|a| matches!(a.value, Value::Layout(_)));
    if !any_layout && c.args.len() <= 2 {
        let shape = c.shape(0)?;
        let l = if c.args.len() == 2 {
            Layout::new(shape, c.shape(1)?)
        } else {
            Layout::col_major(shape)
        };
        return c.done(l);
    }
    let modes = (0..c.args.len())
        .map(|i| c.layout(i))
        .collect::<Result<Vec<_>, _>>()?;
    c.done(Layout::try_from_modes(modes))
}

fn get(c: &Call<'_, '_>) -> Result<Value, LayoutError> {
    let idx = c.indices(1)?;
    match &c.args[0].value {
        Value::Composed(k) => {
            let mut cur = k.clone();
            for &i in &idx {
                cur = cur.mode(i).map_err(|e| c.wrap(e))?;
            }
            c.done_composed(Ok(cur))
        }
        Value::Tuple(t) if !c.args[0].bare => {
            let mut cur = t.clone();
            for &i in &idx {
                let modes = cur.modes();
                cur = modes.get(i).cloned().ok_or_else(|| {
                    c.wrap(LayoutError::ModeOutOfRange {
                        layout: cur.to_string(),
                        rank: modes.len(),
                        index: i,
                    })
                })?;
            }
            Ok(match cur {
                IntTuple::Int(n) => Value::Int(n),
                t => Value::Tuple(t),
            })
        }
        _ => {
            let mut cur = c.layout(0)?;
            for &i in &idx {
                cur = cur.mode(i).map_err(|e| c.wrap(e))?;
            }
            c.done(Ok(cur))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_public_list_is_the_dispatch_table() {
        let names: Vec<&str> = SPECS.iter().map(|s| s.name).collect();
        assert_eq!(names, FUNCTIONS);
        for s in SPECS {
            assert!(s.min <= s.max && s.min >= 1, "{}", s.name);
            assert!(s.usage.starts_with(s.name), "{}", s.name);
        }
    }

    #[test]
    fn nearest_names() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "abc"), 3);
        assert!(unknown("sise").contains("`size`"));
        assert!(unknown("rightinverse").contains("`right_inverse`"));
        assert!(unknown("zipped_devide").contains("`zipped_divide`"));
    }
}
