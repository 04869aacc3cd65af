//! The kernel's instructions for every schedule of the sweep: the protocol the design names,
//! nothing before the grid dependency's wait, and the trace only in the traced build.

use super::schedule::{Cluster, Consumers, StoreWidth};
use super::*;

/// The contract of a programmatic launch (`HopperLaunch::programmatic`): the kernel may start
/// while the previous one still runs, so no instruction before `griddepcontrol.wait` touches
/// global memory (the tensor maps are parameters; their prefetch reads no tensor).
#[test]
fn nothing_touches_global_memory_before_the_grid_dependency_wait() {
    let global = [
        "ld.global",
        "st.global",
        "atom.global",
        "red.global",
        "cp.async.bulk",
        "ld.acquire",
        "st.relaxed",
    ];
    for spec in HopperSchedule::SWEEP {
        let cfg: HopperSchedule = spec.parse().unwrap();
        let k = hopper_kernel(cfg, GemmDtype::Bf16).unwrap();
        let ptx = codegen_ptx::emit(&k, Target::Sm90a).unwrap();
        let wait = ptx
            .find("griddepcontrol.wait;")
            .unwrap_or_else(|| panic!("{spec}: no griddepcontrol.wait"));
        let before = &ptx[..wait];
        for access in global {
            assert!(!before.contains(access), "{spec}: {access} before the wait");
        }
        // The loads are there, after it.
        assert!(ptx[wait..].contains("cp.async.bulk.tensor"), "{spec}");
        assert!(
            ptx[wait..].contains("griddepcontrol.launch_dependents;"),
            "{spec}"
        );
        assert!(
            launch(&cfg, 4096, 4096, 4096, 132, 60 << 20).programmatic,
            "{spec}"
        );
    }
}

/// Only the diagnostic build stamps the phases: once each, `%globaltimer` and `%clock64`
/// side by side, into the workspace.
#[test]
fn only_the_traced_build_stamps_its_phases() {
    for spec in ["64x256x64s6_f1_e128_r4_p_l256_vnnf", "128x256x64s3"] {
        let cfg: HopperSchedule = spec.parse().unwrap();
        let emit = |k: Kernel| codegen_ptx::emit(&k, Target::Sm90a).unwrap();
        let plain = emit(hopper_kernel(cfg, GemmDtype::Bf16).unwrap());
        let traced = emit(traced_kernel(cfg, GemmDtype::Bf16).unwrap());
        assert!(!plain.contains("%globaltimer") && !plain.contains("%clock64"));
        assert_eq!(
            traced.matches("%globaltimer").count(),
            trace::Phase::ALL.len()
        );
        assert_eq!(traced.matches("%clock64").count(), trace::Phase::ALL.len());
        assert!(traced.contains(&format!("{}_traced", entry_name(&cfg, GemmDtype::Bf16))));
        // It assembles without spills, as the build it traces does.
        let report = codegen_ptx::ptxas::assemble(&traced, Target::Sm90a).unwrap();
        assert_eq!(report.spill_store_bytes, 0, "{spec}: {}", report.log);
    }
}

/// Every sweep configuration generates and emits for sm_90a with the instructions the design
/// names (multicast only in clusters), and is refused for the other targets.
#[test]
fn every_sweep_configuration_emits_its_protocol() {
    for spec in HopperSchedule::SWEEP {
        let cfg: HopperSchedule = spec.parse().unwrap();
        let pingpong = matches!(cfg.consumers, Consumers::PingPong(_));
        for dtype in [GemmDtype::F16, GemmDtype::Bf16] {
            let k = hopper_kernel(cfg, dtype).unwrap_or_else(|e| panic!("{spec}: {e}"));
            let ptx = codegen_ptx::emit(&k, Target::Sm90a).unwrap();
            if let Ok(dir) = std::env::var("RUTE_DUMP_PTX") {
                std::fs::write(format!("{dir}/{}.ptx", k.name), &ptx).unwrap();
            }
            // Stream-K: the partials from the registers, 16 bytes at a time, the flags
            // released and acquired at gpu scope; ping-pong walks whole tiles, its main
            // loops taking turns on named barriers instead.
            let stream_k = [
                "st.global.v4.f32",
                "ld.global.v4.f32",
                "fence.acq_rel.gpu",
                "st.relaxed.gpu.global.u32",
                "ld.acquire.gpu.global.u32",
            ];
            for needle in stream_k {
                // The queue's count releases its takes (one fence.acq_rel.gpu) too.
                let queue = cfg.queue().is_some() && needle == "fence.acq_rel.gpu";
                assert_eq!(
                    ptx.contains(needle),
                    !pingpong || queue,
                    "{spec} {dtype}: {needle}"
                );
            }
            // Tiles from a queue: taken from the counter, handed over in shared memory.
            assert_eq!(
                ptx.contains("atom.global.add.u32") && ptx.contains("ld.shared.u32"),
                cfg.queue().is_some(),
                "{spec} {dtype}: the tile queue"
            );
            assert_eq!(
                ptx.contains("bar.arrive 3, 256") && ptx.contains("bar.sync 4, 256"),
                pingpong,
                "{spec} {dtype}"
            );
            // One staging tile: each consumer waits for it on its own barrier (5 or 6), the
            // other arrives there.
            for hand_over in [
                "bar.sync 5, 256",
                "bar.arrive 5, 256",
                "bar.sync 6, 256",
                "bar.arrive 6, 256",
            ] {
                assert_eq!(
                    ptx.contains(hand_over),
                    cfg.shared_staging(),
                    "{spec} {dtype}: {hand_over}"
                );
            }
            for needle in [
                "wgmma.mma_async",
                "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes",
                "mbarrier.try_wait.parity",
                &format!("setmaxnreg.dec.sync.aligned.u32 {}", cfg.registers().0),
                &format!("setmaxnreg.inc.sync.aligned.u32 {}", cfg.registers().1),
                // A programmatic launch: the setup overlaps the previous kernel.
                "griddepcontrol.wait",
                "griddepcontrol.launch_dependents",
            ] {
                assert!(ptx.contains(needle), "{spec} {dtype}: no {needle}");
            }
            // D through shared memory and a TMA store, or (`_u`) from the registers, the
            // quads exchanging their pairs for stores wider than one.
            let staged = cfg.sub_tile().is_some();
            assert_eq!(
                ptx.contains("cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group"),
                staged,
                "{spec} {dtype}"
            );
            if !staged {
                // D's evict-first hint makes them streaming stores.
                let cs = if cfg.l2.hints.d.is_some() { ".cs" } else { "" };
                let store = match cfg.store() {
                    Store::Direct(StoreWidth::B4) => format!("st.global{cs}.u32"),
                    Store::Direct(StoreWidth::B8) => format!("st.global{cs}.v2.u32"),
                    _ => format!("st.global{cs}.v4.u32"),
                };
                assert!(ptx.contains(&store), "{spec} {dtype}: no {store}");
                assert_eq!(
                    ptx.contains("shfl.sync.bfly.b32"),
                    cfg.store() != Store::Direct(StoreWidth::B4),
                    "{spec} {dtype}"
                );
            }
            // Two staging tiles: each sub-tile waits on the store before last, not the
            // last (one staging tile with `_o` also waits on its store's reads, at 0).
            assert_eq!(
                ptx.contains("cp.async.bulk.wait_group.read 1;"),
                cfg.staging_buffers() == 2,
                "{spec} {dtype}"
            );
            assert_eq!(
                ptx.contains("cp.async.bulk.wait_group.read 0;"),
                staged && (cfg.staging_buffers() == 1 || cfg.shared_staging()),
                "{spec} {dtype}"
            );
            // Swapped, the staging tile is transposed: 16-bit stores, not stmatrix.
            assert_eq!(
                ptx.contains("stmatrix.sync.aligned"),
                staged && !cfg.swapped(),
                "{spec} {dtype}"
            );
            assert_eq!(
                ptx.contains(".multicast::cluster"),
                cfg.cluster != Cluster::One,
                "{spec}"
            );
            // Eviction hints ride on the copies `_v` names, as CuTe's policy words.
            let [a, b, d] = cfg.l2.hints.each();
            assert_eq!(
                ptx.contains("bytes.L2::cache_hint") || ptx.contains("cluster.L2::cache_hint"),
                a.is_some() || b.is_some(),
                "{spec}"
            );
            assert_eq!(
                ptx.contains("bulk_group.L2::cache_hint"),
                staged && d.is_some(),
                "{spec}"
            );
            // (D's stores from the registers take no policy word.)
            for h in [a, b, d.filter(|_| staged)].into_iter().flatten() {
                let word = format!("0x{:016X};", h.policy());
                assert!(ptx.contains(&word), "{spec}: no {word}");
            }
            assert!(codegen_ptx::emit(&k, Target::Sm100a).is_err());
        }
    }
}
