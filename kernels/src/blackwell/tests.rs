//! The program's IR against the tutorial: who waits and who arrives on each barrier, the counts, the
//! CTA masks, the bytes, and the phases each role's waits start at; the planted bugs break it.

use dsl_core::ir::op::CtaGroup;
use dsl_core::ir::Scope;

use super::protocol::{barrier_uses, BarrierAction, BarrierUse};
use super::*;

/// A use of barrier `barrier` (slot, block) by `role`.
fn u(
    role: &str,
    barrier: &str,
    slot: Option<i64>,
    cta: Option<i64>,
    action: BarrierAction,
) -> BarrierUse {
    BarrierUse {
        role: role.to_string(),
        barrier: barrier.to_string(),
        slot,
        cta,
        action,
    }
}

/// The tutorial's protocol for `plan`'s configuration, use by use in program order (and the
/// producer's tail, which the tutorial leaves out): what the kernel must show.
fn tutorial_protocol(plan: &BlackwellPlan) -> Vec<BarrierUse> {
    use BarrierAction::*;
    let cfg = &plan.cfg;
    let (nc, depth) = (cfg.consumers.count() as i64, i64::from(cfg.depth));
    let pair = cfg.cta_group == CtaGroup::Two;
    // A pair's even block's barriers, reached through mapa; one block's own.
    let even = pair.then_some(0);
    let (group, mask) = (cfg.cta_group, pair.then_some(0b11));
    let tma_group = pair.then_some(CtaGroup::Two);
    let counts = cfg.barrier_counts();
    let mut out = Vec::new();
    for (name, slots, count) in [
        ("tma2mma", depth, counts.tma2mma),
        ("mma2tma", depth, counts.mma2tma),
        ("mma2ld", nc, counts.mma2ld),
        ("ld2mma", nc, counts.ld2mma),
    ] {
        for s in 0..slots {
            let count = i64::from(count);
            out.push(u("setup", name, Some(s), None, Init { count }));
        }
    }
    let producer = "TMA producer";
    // The producer's wait on a stage's release, its state starting at phase 1.
    let released = u(
        producer,
        "mma2tma",
        None,
        None,
        Wait {
            initial_parity: Some(1),
        },
    );
    out.push(released.clone());
    let load = |map: &str| TmaLoad {
        map: map.to_string(),
        group: tma_group,
    };
    for _ in 0..nc {
        for _ in &plan.tma_a.boxes {
            out.push(u(producer, "tma2mma", None, even, load("a_map")));
        }
    }
    for _ in &plan.tma_b.boxes {
        out.push(u(producer, "tma2mma", None, even, load("b_map")));
    }
    let bytes = i64::from(cfg.cta_group.count() * cfg.stage_bytes());
    out.push(u(producer, "tma2mma", None, even, ArriveExpectTx { bytes }));
    // Beyond the tutorial, as CUTLASS's `load_tail`: after its last loads the producer waits
    // until every stage is released, so that no commit lands on a block that has exited.
    for _ in 0..depth {
        out.push(released.clone());
    }
    for c in 0..nc {
        let role = format!("MMA consumer {c}");
        out.push(u(
            &role,
            "ld2mma",
            Some(c),
            None,
            Wait {
                initial_parity: Some(1),
            },
        ));
        out.push(u(
            &role,
            "tma2mma",
            None,
            None,
            Wait {
                initial_parity: Some(0),
            },
        ));
        out.push(u(&role, "mma2tma", None, None, Commit { group, mask }));
        out.push(u(&role, "mma2ld", Some(c), None, Commit { group, mask }));
    }
    for c in 0..nc {
        let role = format!("writeback {c}");
        out.push(u(
            &role,
            "mma2ld",
            Some(c),
            None,
            Wait {
                initial_parity: Some(0),
            },
        ));
        let scope = if pair { Scope::Cluster } else { Scope::Cta };
        out.push(u(&role, "ld2mma", Some(c), even, Arrive { scope }));
    }
    out
}

/// The kernel's barrier uses, ordered as [`tutorial_protocol`] lists them (roles in the tutorial's
/// order, each role's uses in program order).
fn kernel_protocol(plan: &BlackwellPlan) -> Vec<BarrierUse> {
    let k = kernel_of(plan).unwrap();
    let mut uses = barrier_uses(&k);
    let rank = |r: &str| match r {
        "setup" => 0,
        "TMA producer" => 1,
        r if r.starts_with("MMA") => 2,
        r if r.starts_with("writeback") => 3,
        _ => 4,
    };
    uses.sort_by_key(|x| (rank(&x.role), x.role.clone()));
    uses
}

/// Every barrier use of the kernel is the tutorial's, in order, and the bytes the arrival announces
/// are the bytes of the loads that complete on the barrier, times the blocks whose loads do.
fn check_against_the_tutorial(plan: &BlackwellPlan) -> Result<(), String> {
    let got = kernel_protocol(plan);
    let want = tutorial_protocol(plan);
    if got != want {
        let diff: Vec<String> = want
            .iter()
            .zip(&got)
            .filter(|(w, g)| w != g)
            .map(|(w, g)| format!("  want {w:?}\n   got {g:?}"))
            .collect();
        return Err(format!(
            "{}: {} uses, the tutorial's {}:\n{}",
            plan.cfg,
            got.len(),
            want.len(),
            diff.join("\n")
        ));
    }
    let landing: i64 = got
        .iter()
        .filter_map(|x| match &x.action {
            BarrierAction::TmaLoad { map, .. } if map == "a_map" => {
                Some(i64::from(plan.tma_a.bytes()) / plan.tma_a.boxes.len() as i64)
            }
            BarrierAction::TmaLoad { .. } => {
                Some(i64::from(plan.tma_b.bytes()) / plan.tma_b.boxes.len() as i64)
            }
            _ => None,
        })
        .sum::<i64>()
        * i64::from(plan.cfg.cta_group.count());
    let announced = got.iter().find_map(|x| match x.action {
        BarrierAction::ArriveExpectTx { bytes } => Some(bytes),
        _ => None,
    });
    if announced != Some(landing) {
        return Err(format!(
            "{}: the arrival announces {announced:?} bytes, the loads bring {landing}",
            plan.cfg
        ));
    }
    Ok(())
}

fn configs() -> Vec<BlackwellConfig> {
    let mut out: Vec<BlackwellConfig> = Step::ALL
        .iter()
        .map(|s| s.config(s.tutorial_depth()))
        .collect();
    // Deeper rings, narrower B, the orthogonal combinations the tutorial does not list.
    out.push(BlackwellConfig::step7(5));
    out.push(BlackwellConfig {
        tile_n: 64,
        ..BlackwellConfig::step8(3)
    });
    out.push(BlackwellConfig {
        cta_group: CtaGroup::One,
        ..BlackwellConfig::step9(2)
    });
    out.push(BlackwellConfig {
        epilogue_columns: 32,
        ..BlackwellConfig::step8(2)
    });
    out
}

#[test]
fn every_configuration_speaks_the_tutorials_protocol() {
    for cfg in configs() {
        for dtype in [GemmDtype::F16, GemmDtype::Bf16] {
            let plan = BlackwellPlan::new(cfg, dtype).unwrap();
            check_against_the_tutorial(&plan).unwrap_or_else(|e| panic!("{e}"));
        }
    }
}

/// The tutorial's numbers, literally: counts 1, 1, 1, 128 (step 7); ld2mma 256 with two blocks
/// (steps 8, 9); mma2tma 2 in step 9; commits to both blocks (mask 3) with a pair; 32 KiB,
/// 64 KiB and 96 KiB announced per stage.
#[test]
fn the_tutorials_numbers() {
    let inits = |cfg: BlackwellConfig| -> Vec<(String, i64)> {
        let plan = BlackwellPlan::new(cfg, GemmDtype::F16).unwrap();
        let mut v: Vec<(String, i64)> = kernel_protocol(&plan)
            .into_iter()
            .filter_map(|x| match x.action {
                BarrierAction::Init { count } if x.slot == Some(0) => Some((x.barrier, count)),
                _ => None,
            })
            .collect();
        v.dedup();
        v
    };
    let named = |v: &[(&str, i64)]| -> Vec<(String, i64)> {
        v.iter().map(|(n, c)| (n.to_string(), *c)).collect()
    };
    assert_eq!(
        inits(BlackwellConfig::step7(2)),
        named(&[
            ("tma2mma", 1),
            ("mma2tma", 1),
            ("mma2ld", 1),
            ("ld2mma", 128)
        ])
    );
    assert_eq!(
        inits(BlackwellConfig::step8(4)),
        named(&[
            ("tma2mma", 1),
            ("mma2tma", 1),
            ("mma2ld", 1),
            ("ld2mma", 256)
        ])
    );
    assert_eq!(
        inits(BlackwellConfig::step9(4)),
        named(&[
            ("tma2mma", 1),
            ("mma2tma", 2),
            ("mma2ld", 1),
            ("ld2mma", 256)
        ])
    );
    for (cfg, bytes, mask) in [
        (BlackwellConfig::step7(2), 32768, None),
        (BlackwellConfig::step8(4), 65536, Some(3)),
        (BlackwellConfig::step9(4), 98304, Some(3)),
    ] {
        let plan = BlackwellPlan::new(cfg, GemmDtype::F16).unwrap();
        let p = kernel_protocol(&plan);
        assert!(p
            .iter()
            .any(|x| x.action == BarrierAction::ArriveExpectTx { bytes }));
        let masks: Vec<Option<i64>> = p
            .iter()
            .filter_map(|x| match x.action {
                BarrierAction::Commit { mask, .. } => Some(mask),
                _ => None,
            })
            .collect();
        assert!(
            !masks.is_empty() && masks.iter().all(|m| *m == mask),
            "{cfg}: {masks:?}"
        );
    }
}

/// The planted bugs are what the tutorial's exercises describe, and this test's check sees them:
/// the producer's first wait for parity 0, the pair's arrival announcing one block's bytes.
#[test]
fn the_planted_bugs_break_the_protocol() {
    for cfg in [BlackwellConfig::step7(2), BlackwellConfig::step9(4)] {
        let bug = cfg.with_planted(PlantedBug::BothPhasesZero);
        let e = check_against_the_tutorial(&BlackwellPlan::new(bug, GemmDtype::F16).unwrap())
            .unwrap_err();
        assert!(
            e.contains("initial_parity: Some(0)") && e.contains("mma2tma"),
            "{e}"
        );
    }
    for cfg in [BlackwellConfig::step8(4), BlackwellConfig::step9(4)] {
        let bug = cfg.with_planted(PlantedBug::ExpectTxWithoutCtaGroup);
        let e = check_against_the_tutorial(&BlackwellPlan::new(bug, GemmDtype::F16).unwrap())
            .unwrap_err();
        assert!(e.contains("ArriveExpectTx"), "{e}");
    }
}

#[test]
fn only_sm100a_assembles_the_program() {
    let k = blackwell_kernel(BlackwellConfig::step7(2), GemmDtype::F16).unwrap();
    assert!(codegen_ptx::emit(&k, Target::Sm100a).is_ok());
    let e = codegen_ptx::emit(&k, Target::Sm90a)
        .unwrap_err()
        .to_string();
    assert!(e.contains("tcgen05"), "{e}");
}

/// The launch: as many clusters as run at once, no more than the cluster tiles; the tensor maps
/// of the plan's copies.
#[test]
fn launches_are_persistent_and_whole_clusters() {
    let plan = BlackwellPlan::new(BlackwellConfig::step8(4), GemmDtype::Bf16).unwrap();
    let l = plan.launch(1024, 768, 320, 148).unwrap();
    // 4 x 3 cluster tiles of 256 x 256: 12 clusters of 2 blocks.
    assert_eq!((l.grid, l.cluster), ((24, 1, 1), Some((2, 1, 1))));
    assert_eq!(l.dynamic_smem_bytes, plan.cfg.smem_bytes());
    let l = plan.launch(8192, 8192, 64, 148).unwrap();
    assert_eq!(l.grid, (148, 1, 1));
    assert!(matches!(
        &l.args[0],
        crate::gemm::GemmArg::TensorMap { descriptor, .. } if descriptor.box_dims == vec![64, 128]
    ));
    // Rows of 12 bytes cannot be mapped.
    assert!(plan.launch(128, 128, 6, 148).is_err());
    let one = BlackwellPlan::new(BlackwellConfig::step7(2), GemmDtype::F16).unwrap();
    assert_eq!(one.launch(100, 104, 96, 148).unwrap().cluster, None);
}

/// The pair's MMA sees `2 x 128` rows of A and of B, the odd block's at the same offsets as the
/// even block's (of its own shared memory): the view is the ring's tile with a stride-0 mode
/// for the block; consumer `c`'s rows start `c` tiles into a stage.
#[test]
fn the_pairs_view_puts_both_blocks_rows_at_the_same_offsets() {
    use dsl_core::layout::IntTuple;
    let plan = BlackwellPlan::new(BlackwellConfig::step9(4), GemmDtype::F16).unwrap();
    let at = |l: &dsl_core::layout::ComposedLayout, c: &[i64]| {
        l.layout
            .crd2idx(&IntTuple::ints(c))
            .map(|i| l.swizzle.apply(l.offset + i))
            .unwrap()
    };
    for c in 0..2i64 {
        let view = &plan.mma_a[c as usize];
        for (r, k, s) in [(0, 0, 0), (5, 17, 1), (127, 63, 3), (64, 32, 2)] {
            let ring = at(&plan.smem_a, &[r, k, c, s]);
            assert_eq!(at(view, &[r, k, s]), ring, "consumer {c} ({r}, {k}, {s})");
            assert_eq!(at(view, &[r + 128, k, s]), ring, "odd block, consumer {c}");
        }
    }
    for (r, k, s) in [(3, 9, 0), (100, 60, 3)] {
        let ring = at(&plan.smem_b, &[r, k, s]);
        assert_eq!(at(&plan.mma_b, &[r + 128, k, s]), ring);
    }
}
