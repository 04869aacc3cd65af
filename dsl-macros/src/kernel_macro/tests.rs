//! The passes on source text: what is rewritten, what stays Rust, what is refused. The
//! integration tests (`tests/kernel_macro.rs`) check the IR of real kernels; these check the
//! boundaries of the rewriting that IR cannot show.

use proc_macro2::TokenStream;

/// The expansion as text, or the error messages.
fn expand(src: &str) -> Result<String, Vec<String>> {
    let item: TokenStream = src.parse().expect("test source is Rust tokens");
    super::run(TokenStream::new(), item)
        .map(|t| t.to_string())
        .map_err(|e| e.into_iter().map(|e| e.to_string()).collect())
}

fn expanded(src: &str) -> String {
    match expand(src) {
        Ok(s) => s,
        Err(e) => panic!("{src}: {e:?}"),
    }
}

fn refused(src: &str) -> Vec<String> {
    match expand(src) {
        Ok(s) => panic!("{src} expanded to {s}"),
        Err(e) => e,
    }
}

fn count(haystack: &str, needle: &str) -> usize {
    haystack.matches(needle).count()
}

#[test]
fn ranges_are_rewritten_and_other_iterators_stay_rust_loops() {
    let out = expanded(
        "fn k(n: Var<u32>, #[host] v: Vec<u32>) {
            for i in 0..n {}
            for i in (1..=n).step_by(2) {}
            for i in 0..4 {}
            for x in v.iter() {}
            for i in (0..n).rev() {}
        }",
    );
    assert_eq!(count(&out, "Iterate :: for_each_"), 2, "{out}");
    assert_eq!(count(&out, "range_inclusive"), 1, "{out}");
    assert_eq!(count(&out, "for i in 0 .. 4"), 1, "{out}");
    assert_eq!(count(&out, "for x in v . iter ()"), 1, "{out}");
    assert_eq!(count(&out, "for i in (0 .. n) . rev ()"), 1, "{out}");
}

#[test]
fn if_forms_pick_their_entry_point() {
    let out = expanded(
        "fn k(p: Var<bool>, x: Var<u32>) {
            if p { f(); }
            if p { f(); } else { g(); }
            let y = if p { x } else { x };
            if let Some(z) = o { f(); }
            match x { _ => if p { f(); } else { g(); } }
        }",
    );
    assert_eq!(count(&out, "Cond :: if_ ("), 1, "{out}");
    assert_eq!(count(&out, "Cond :: if_else"), 2, "{out}");
    assert_eq!(count(&out, "if_value"), 1, "{out}");
    assert_eq!(count(&out, "if let Some (z)"), 1, "{out}");
}

#[test]
fn rewritten_statements_keep_their_semicolons() {
    // Without the added `;` the loop call would run into the `let` and not parse back.
    let out = expanded("fn k(n: Var<u32>) { for i in 0..n { f(i); } let a = 1; while a < 2 {} }");
    let file: syn::File = syn::parse_str(&out).expect("the expansion is Rust");
    // The function, then its typed signature: a struct and two impls.
    assert_eq!(file.items.len(), 4);
    assert!(matches!(&file.items[0], syn::Item::Fn(f) if f.sig.ident == "k"));
    assert!(matches!(&file.items[1], syn::Item::Struct(s) if s.ident == "KKernel"));
}

#[test]
fn a_kernel_taking_self_has_no_signature_type() {
    let out = expanded("fn fill(&self, out: GlobalPtr<u32>) {}");
    assert!(!out.contains("struct"), "{out}");
    assert_eq!(
        super::signature::signature_name(&syn::parse_str("r#my_kernel_2").unwrap()).to_string(),
        "MyKernel2Kernel"
    );
}

#[test]
fn macros_and_nested_items_are_not_touched() {
    let out = expanded(
        "fn k(p: Var<bool>) {
            println!(\"{}\", if q { 1 } else { 2 });
            fn helper(c: bool) -> u32 { if c { return 1; } 2 }
        }",
    );
    assert_eq!(count(&out, "if q { 1 } else { 2 }"), 1, "{out}");
    assert_eq!(count(&out, "if c { return 1 ; }"), 1, "{out}");
}

#[test]
fn returns_and_jumps_inside_user_closures_and_host_loops_are_theirs() {
    expanded(
        "fn k(p: Var<bool>, #[host] v: Vec<u32>) {
            if p {
                // (an `if` in the closure is rewritten too, so it could not hold the `return`)
                let f = |x: u32| { match x { 0 => return 1, _ => {} } x };
                let _ = f(1);
            }
            for x in v.iter() { match x { 1 => continue, 2 => break, _ => {} } }
            'outer: for a in v.iter() { for b in v.iter() { match b { 0 => break 'outer, _ => {} } } }
            'block: { match v.len() { 0 => break 'block, _ => {} } }
            return;
        }",
    );
}

#[test]
fn jumps_across_rewritten_constructs_are_refused() {
    let errors = refused(
        "fn k(p: Var<bool>, #[host] v: Vec<u32>) {
            'b: { if p { break 'b; } }
            for x in v.iter() { for i in 0..n { match i { _ => break } } }
            'outer: for x in v.iter() { for i in 0..n { continue 'outer; } }
        }",
    );
    assert_eq!(errors.len(), 3, "{errors:?}");
    assert!(
        errors[0].starts_with("`break` inside an `if`"),
        "{errors:?}"
    );
    assert!(
        errors[1].starts_with("`break` in a `for` loop"),
        "{errors:?}"
    );
    assert!(
        errors[2].starts_with("`continue` in a `for` loop"),
        "{errors:?}"
    );
}

#[test]
fn every_refusal_is_reported_at_once() {
    let errors = refused(
        "async fn k(n: u32, (a, b): (u32, u32)) {
            loop {}
            if c { return; }
            x?;
            (a, b) = (b, a);
        }",
    );
    assert_eq!(errors.len(), 7, "{errors:?}");
}

#[test]
fn raw_identifiers_lose_their_prefix_in_the_ptx() {
    let out = expanded("fn r#type(r#in: Var<u32>) {}");
    assert!(out.contains("build_kernel (\"type\""), "{out}");
    assert!(out.contains("declare (__rute_builder , \"in\")"), "{out}");
}

#[test]
fn the_builder_handle_and_host_parameters_stay_out_of_the_kernel() {
    let out = expanded(
        "fn k(&self, #[host] tile: u32, kb: &KernelBuilder, a: GlobalPtr<f32>) { kb.comment(\"x\"); }",
    );
    assert!(out.contains("fn k (& self , tile : u32)"), "{out}");
    assert_eq!(count(&out, "KernelParam :: declare"), 1, "{out}");
    assert!(
        out.contains("let kb : & KernelBuilder = __rute_builder"),
        "{out}"
    );
}

#[test]
fn let_of_a_path_and_let_mut_go_through_let_and_other_lets_do_not() {
    let out = expanded(
        "fn k(x: Var<u32>) {
            let y = x;
            let mut z: Var<u32> = y;
            let w = x + 1u32;
            let mut m = x + 1u32;
            let (a, b) = t;
        }",
    );
    assert_eq!(count(&out, "Let :: new"), 3, "{out}");
}

#[test]
fn short_circuit_operators_are_rewritten_everywhere_but_in_let_chains() {
    let out = expanded(
        "fn k() {
            if a && b || c {}
            while (d || e) && f {}
            let z = g && h;
            let w = |x: bool| x || y;
            if let Some(v) = o && v {}
            m!(p && q);
        }",
    );
    assert_eq!(count(&out, "operators :: and"), 3, "{out}");
    assert_eq!(count(&out, "operators :: or"), 3, "{out}");
    assert_eq!(count(&out, "&& v"), 1, "a let chain stays Rust's: {out}");
    assert_eq!(
        count(&out, "p && q"),
        1,
        "macro insides are left alone: {out}"
    );
}

#[test]
fn comparisons_are_rewritten_with_their_operands_borrowed() {
    let out = expanded(
        "fn k(x: Var<u32>) {
            let a = x < 4;
            let b = 1 + 2 >= x as u32;
            if x == y {}
            const C: bool = 1 < 2;
            m!(x != y);
        }",
    );
    for method in ["op_lt", "op_ge", "op_eq"] {
        assert_eq!(count(&out, method), 1, "{method}: {out}");
    }
    assert_eq!(count(&out, "op_ne"), 0, "{out}");
    assert_eq!(count(&out, "Cmp (& x , & 4)"), 1, "{out}");
    assert_eq!(count(&out, "Cmp (& (1 + 2) , & (x as u32))"), 1, "{out}");
    assert_eq!(count(&out, "1 < 2"), 1, "a const item stays Rust's: {out}");
}

#[test]
fn jumps_out_of_the_right_side_of_a_short_circuit_are_refused() {
    let errors = refused("fn k(n: Var<u32>) { while n > 0 { let b = n > 1 || { break; }; } }");
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0].contains("right side of `&&` or `||`"),
        "{errors:?}"
    );
    let errors = refused("fn k() -> Result<(), E> { let b = a && f()?; Ok(()) }");
    assert!(
        errors[0].contains("the right side of `&&` or `||`"),
        "{errors:?}"
    );
}

#[test]
fn a_return_in_the_right_side_of_a_condition_is_refused() {
    let errors = refused("fn k() { if a && { return; } {} }");
    assert_eq!(errors.len(), 1, "{errors:?}");
}
