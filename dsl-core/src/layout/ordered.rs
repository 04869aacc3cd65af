//! make_ordered_layout and tile_to_shape.

use super::arith::{compact_left, product, Fail, Res};
use super::construct::append_to_rank;
use super::product::blocked_product;
use super::{IntTuple, Layout, LayoutError};

/// CuTe's `product_like(shape, order)` flattened: for each leaf of `order`, the size of the
/// sub-shape it stands for. Also checks CuTe's `weakly_congruent(order, shape)`.
fn ref_shape(shape: &IntTuple, order: &IntTuple, out: &mut Vec<i64>) -> Res<()> {
    match (order, shape) {
        (IntTuple::Int(_), _) => {
            out.push(product(shape)?);
            Ok(())
        }
        (IntTuple::Tuple(os), IntTuple::Tuple(ss)) if os.len() == ss.len() => os
            .iter()
            .zip(ss)
            .try_for_each(|(o, s)| ref_shape(s, o, out)),
        _ => Err(Fail::Rule(format!(
            "the order {order} is not weakly congruent to the shape {shape}"
        ))),
    }
}

/// For each order `o` asked, the product of the sub-shape sizes whose order is smaller than `o`:
/// the (size, order) pairs sorted by order, with their prefix products (`None` past `i64`).
struct SmallerOrders {
    orders: Vec<i64>,
    prefix: Vec<Option<i64>>,
}

impl SmallerOrders {
    fn new(mut refs: Vec<(i64, i64)>) -> SmallerOrders {
        refs.sort_unstable_by_key(|&(_, o)| o);
        let mut prefix = Vec::with_capacity(refs.len() + 1);
        prefix.push(Some(1i64));
        for (k, &(size, _)) in refs.iter().enumerate() {
            prefix.push(prefix[k].and_then(|p| p.checked_mul(size)));
        }
        SmallerOrders {
            orders: refs.into_iter().map(|(_, o)| o).collect(),
            prefix,
        }
    }

    fn below(&self, o: i64) -> Res<i64> {
        self.prefix[self.orders.partition_point(|&ro| ro < o)].ok_or(Fail::Overflow)
    }
}

/// CuTe's `detail::compact_order`: each leaf `o` of the order starts its (column-major) strides
/// at the product of the sub-shapes whose order is smaller than `o`.
fn compact_order(shape: &IntTuple, order: &IntTuple, smaller: &SmallerOrders) -> Res<IntTuple> {
    match (order, shape) {
        (IntTuple::Int(o), _) => compact_left(shape, smaller.below(*o)?),
        (IntTuple::Tuple(os), IntTuple::Tuple(ss)) => Ok(IntTuple::Tuple(
            os.iter()
                .zip(ss)
                .map(|(o, s)| compact_order(s, o, smaller))
                .collect::<Res<_>>()?,
        )),
        _ => Err(Fail::Rule(format!(
            "the order {order} is not weakly congruent to the shape {shape}"
        ))),
    }
}

fn ordered_impl(shape: &IntTuple, order: &IntTuple) -> Res<Layout> {
    if let Some(e) = shape.flatten_ints().into_iter().find(|&e| e < 1) {
        return Err(Fail::Rule(format!("the shape has extent {e}, below 1")));
    }
    let mut sizes = Vec::new();
    ref_shape(shape, order, &mut sizes)?;
    let refs: Vec<(i64, i64)> = sizes.into_iter().zip(order.flatten_ints()).collect();
    let stride = compact_order(shape, order, &SmallerOrders::new(refs))?;
    Layout::checked(shape.clone(), stride)
}

/// CuTe's `make_ordered_layout(shape, order)`: the compact layout of `shape` whose modes are laid
/// out in increasing `order` (the smallest order is contiguous; within a mode, column-major).
///
/// `order` must be weakly congruent to `shape` (an int order covers a whole sub-shape). As for
/// CuTe's static `_1`, an extent-1 mode gets stride 0. Equal orders give equal starting strides,
/// as in C++.
///
/// ```
/// use dsl_core::layout::{make_ordered_layout, IntTuple};
/// let l = make_ordered_layout(&IntTuple::ints(&[2, 2, 2, 2]), &IntTuple::ints(&[0, 2, 3, 1]));
/// assert_eq!(l.unwrap().to_string(), "(2,2,2,2):(1,4,8,2)");
/// ```
pub fn make_ordered_layout(shape: &IntTuple, order: &IntTuple) -> Result<Layout, LayoutError> {
    ordered_impl(shape, order).map_err(|f| f.at("make_ordered_layout", format!("{shape}, {order}")))
}

fn tile_impl(block: &Layout, shape: &IntTuple, order: Option<&IntTuple>) -> Res<Layout> {
    let r = shape.rank();
    if block.rank() > r {
        return Err(Fail::Rule(format!(
            "the block has rank {}, more than the target shape's rank {r}",
            block.rank()
        )));
    }
    let padded = append_to_rank(block, r)?;
    let block_sizes: Vec<i64> = padded
        .shape()
        .modes()
        .iter()
        .map(product)
        .collect::<Res<_>>()?;
    let target_sizes: Vec<i64> = shape.modes().iter().map(product).collect::<Res<_>>()?;
    let mut reps = Vec::with_capacity(r);
    for (t, b) in target_sizes.iter().zip(&block_sizes) {
        if *t < 1 || t % b != 0 {
            return Err(Fail::Rule(format!(
                "the block extent {b} does not divide the target extent {t}"
            )));
        }
        reps.push(t / b);
    }
    let rep_shape = IntTuple::ints(&reps);
    let tiler = match order {
        None => {
            let stride = compact_left(&rep_shape, 1)?;
            Layout::checked(rep_shape, stride)?
        }
        Some(o) => make_ordered_layout(&rep_shape, o)?,
    };
    Ok(blocked_product(&padded, &tiler)?)
}

/// CuTe's `tile_to_shape(block, trg_shape, ord_shape)`: repeat `block` (a blocked product) until
/// its shape matches `shape` mode by mode.
///
/// Requires `rank(block) <= rank(shape)` and each mode's size of the (padded) block to divide the
/// target's. The repetitions are laid out by `make_ordered_layout(shape / block, order)`; `None`
/// means CuTe's default `GenColMajor`. Post-condition: mode `i` of the result has the size of mode
/// `i` of `shape`.
///
/// ```
/// use dsl_core::layout::{tile_to_shape, IntTuple, Layout};
/// let atom: Layout = "(8,8):(8,1)".parse().unwrap();
/// let l = tile_to_shape(&atom, &IntTuple::ints(&[16, 32]), None).unwrap();
/// assert_eq!(l.to_string(), "((8,2),(8,4)):((8,64),(1,128))");
/// ```
pub fn tile_to_shape(
    block: &Layout,
    shape: &IntTuple,
    order: Option<&IntTuple>,
) -> Result<Layout, LayoutError> {
    tile_impl(block, shape, order).map_err(|f| {
        let ord = order.map_or("GenColMajor".to_string(), |o| o.to_string());
        f.at("tile_to_shape", format!("{block}, {shape}, {ord}"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cute_doc_examples() {
        let l = make_ordered_layout(
            &IntTuple::ints(&[2, 2, 2, 2]),
            &IntTuple::ints(&[0, 2, 3, 1]),
        );
        assert_eq!(l.unwrap().to_string(), "(2,2,2,2):(1,4,8,2)");
        // C++ doc: make_ordered_layout((2,3,4,5), (2,67,42,50)) -> (2,3,4,5):(1,10,30,2) (its
        // dynamic 67 and 42 rank after every static order; here they are ordinary static orders,
        // so 42 < 50 < 67 ranks them differently).
        let l = make_ordered_layout(
            &IntTuple::ints(&[2, 3, 4, 5]),
            &IntTuple::ints(&[2, 67, 42, 50]),
        );
        assert_eq!(l.unwrap().to_string(), "(2,3,4,5):(1,40,2,8)");
        // C++ ranks the dynamic 67 and 42 as 52 and 53 (after the largest static order, 50):
        let l = make_ordered_layout(
            &IntTuple::ints(&[2, 3, 4, 5]),
            &IntTuple::ints(&[2, 52, 53, 50]),
        );
        assert_eq!(l.unwrap().to_string(), "(2,3,4,5):(1,10,30,2)");
    }

    #[test]
    fn nested_and_unit_modes() {
        let shape: IntTuple = "((2,3),4)".parse::<Layout>().unwrap().shape().clone();
        let l = make_ordered_layout(&shape, &IntTuple::ints(&[1, 0])).unwrap();
        assert_eq!(l.to_string(), "((2,3),4):((4,8),1)");
        let l = make_ordered_layout(&IntTuple::ints(&[1, 4]), &IntTuple::ints(&[0, 1])).unwrap();
        assert_eq!(l.to_string(), "(1,4):(0,1)");
        assert!(
            make_ordered_layout(&IntTuple::ints(&[2, 2]), &IntTuple::ints(&[0, 1, 2])).is_err()
        );
    }

    #[test]
    fn tile_to_shape_cases() {
        let atom: Layout = "(8,8):(8,1)".parse().unwrap();
        let row = tile_to_shape(
            &atom,
            &IntTuple::ints(&[16, 32]),
            Some(&IntTuple::ints(&[1, 0])),
        );
        assert_eq!(row.unwrap().to_string(), "((8,2),(8,4)):((8,256),(1,64))");
        assert!(tile_to_shape(&atom, &IntTuple::ints(&[12, 32]), None).is_err());
        assert!(tile_to_shape(&atom, &IntTuple::Int(64), None).is_err());
        // A block as large as the target: the repetition modes have extent 1 and stride 0.
        let one = tile_to_shape(&atom, &IntTuple::ints(&[8, 8]), None).unwrap();
        assert_eq!(one.to_string(), "((8,1),(8,1)):((8,0),(1,0))");
    }
}
