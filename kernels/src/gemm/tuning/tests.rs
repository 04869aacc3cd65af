//! The tuning file's text, and the runtime's preference for a record, without a GPU.

use super::*;
use crate::gemm::{Accum, Origin};
use crate::hopper::HopperGemm;

fn record(device: &str, shape: (usize, usize, usize), schedule: &str) -> TuningRecord {
    TuningRecord {
        device: device.into(),
        dtype: GemmDtype::Bf16,
        class: ShapeClass::of(shape.0, shape.1, shape.2),
        program: "hopper_ws".into(),
        schedule: schedule.into(),
        shape,
        micros: 10.5,
        default_micros: None,
    }
}

fn problem(m: usize, n: usize, k: usize) -> Problem {
    Problem {
        m,
        n,
        k,
        dtype: GemmDtype::Bf16,
        acc: Accum::F32,
        kernel: KernelChoice::Auto,
        config: None,
    }
}

#[test]
fn shape_classes_round_up_to_powers_of_two() {
    let c = ShapeClass::of(200, 6144, 8192);
    assert_eq!((c.m, c.n, c.k), (256, 8192, 8192));
    assert_eq!(c.to_string(), "m256 n8192 k8192");
    assert_eq!("m256 n8192 k8192".parse(), Ok(c));
    assert_eq!(ShapeClass::of(129, 4097, 1), ShapeClass::of(256, 8192, 1));
    for bad in [
        "m200 n8192 k8192",
        "m256 n8192",
        "n256 m8192 k1",
        "m256 n8192 k8192 x",
    ] {
        assert!(bad.parse::<ShapeClass>().is_err(), "{bad}");
    }
}

/// Written and read back, a file is the same; each line that is not a record says which and
/// why.
#[test]
fn the_file_round_trips_and_names_its_bad_lines() {
    let mut file = TuningFile::default();
    file.record(record("NVIDIA H200", (200, 6144, 8192), "128x128x64s6_n"));
    file.record(TuningRecord {
        default_micros: Some(12.25),
        dtype: GemmDtype::F16,
        ..record(
            "NVIDIA H100 80GB HBM3",
            (81920, 256, 256),
            "64x256x64s8_f1_e128_r4_p_l0_vfnf",
        )
    });
    let text = file.to_text();
    assert_eq!(TuningFile::parse(&text).unwrap(), file);
    assert!(text.contains(
        "NVIDIA H200 | bf16 | m256 n8192 k8192 | hopper_ws | 128x128x64s6_n | 200x6144x8192 | \
         10.5 us | -"
    ));
    // A record for the same device, dtype and class replaces the old one.
    file.record(record("NVIDIA H200", (256, 8000, 5000), "128x64x64s8_n"));
    assert_eq!(file.records().len(), 2);
    let r = file
        .lookup("NVIDIA H200", GemmDtype::Bf16, (200, 6144, 8192))
        .unwrap();
    assert_eq!(r.schedule, "128x64x64s8_n");
    assert!(file
        .lookup("NVIDIA H200", GemmDtype::F16, (200, 6144, 8192))
        .is_none());
    for (bad, why) in [
        (
            "NVIDIA H200 | bf16 | m256 n8192 k8192 | hopper_ws | x",
            "8 fields",
        ),
        (
            "NVIDIA H200 | f32 | m256 n8192 k8192 | hopper_ws | x | 200x6144x8192 | 1 us | -",
            "f16 or bf16",
        ),
        (
            "NVIDIA H200 | bf16 | m512 n8192 k8192 | hopper_ws | x | 200x6144x8192 | 1 us | -",
            "is of class m256 n8192 k8192",
        ),
        (
            "NVIDIA H200 | bf16 | m256 n8192 k8192 | hopper_ws | x | 200x6144x8192 | fast | -",
            "microseconds",
        ),
        (
            "NVIDIA H200 | bf16 | m256 n8192 k8192 | hopper_ws | x | 0x6144x8192 | 1 us | -",
            "MxNxK",
        ),
    ] {
        let e = TuningFile::parse(&format!("# a comment\n\n{bad}\n")).unwrap_err();
        let e = e.to_string();
        assert!(e.starts_with("text:3: ") && e.contains(why), "{e}");
    }
}

/// Saved and loaded from disk (through a file beside it); a missing file has no records; a
/// field that would break the format is refused.
#[test]
fn the_file_is_saved_and_loaded() {
    let dir = std::env::temp_dir().join(format!("rute-tuning-{}", std::process::id()));
    let path = dir.join("sub").join("tuning.txt");
    assert_eq!(TuningFile::load(&path).unwrap(), TuningFile::default());
    let mut file = TuningFile::default();
    file.record(record(
        "NVIDIA H200",
        (128, 4096, 14336),
        "128x64x64s8_c1x2_f1_vlfn",
    ));
    file.save(&path).unwrap();
    assert_eq!(TuningFile::load(&path).unwrap(), file);
    let mut bad = TuningFile::default();
    bad.record(record("a | b", (1, 1, 1), "x"));
    assert!(matches!(
        bad.save(&path),
        Err(TuningError::Field {
            field: "device",
            ..
        })
    ));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The runtime prefers a record's schedule for its device, dtype and class; without one, or
/// where its schedule cannot run the problem, the program's default. The plan says which.
#[test]
fn a_record_comes_before_the_table() {
    let h200 = Device::h200();
    let mut file = TuningFile::default();
    file.record(record("NVIDIA H200", (4096, 4096, 4096), "128x128x64s6_n"));
    // A resident B of one 256-wide tile: it cannot run N = 320.
    file.record(record(
        "NVIDIA H200",
        (40000, 320, 256),
        "64x256x64s8_f1_e128_r4_p_l0_vfnf",
    ));
    // A record of another device, and one whose schedule no program takes: skipped.
    file.record(record("NVIDIA A100", (4096, 4096, 4096), "128x64x64s8_n"));
    file.record(record("NVIDIA H200", (8, 8, 8), "not-a-schedule"));
    let tuned = Tuned::new(&file, "/cache/rute/tuning.txt");
    assert_eq!(tuned.skipped().len(), 1);
    assert!(
        tuned.skipped()[0].contains("not-a-schedule"),
        "{:?}",
        tuned.skipped()
    );
    let lens = |m, n, k| BufferLens::for_shape(m, n, k).unwrap();
    let hopper = |p: &Plan| p.downcast_ref::<HopperGemm>().unwrap().clone();

    // The record's class: its schedule, from the record.
    let p = tuned
        .check(&problem(3000, 4096, 4096), lens(3000, 4096, 4096), &h200)
        .unwrap();
    assert_eq!(hopper(&p).schedule().to_string(), "128x128x64s6_n");
    assert!(matches!(hopper(&p).origin(), Origin::Record { .. }));
    assert!(
        p.describe()
            .ends_with("; schedule from a tuning record in /cache/rute/tuning.txt)"),
        "{}",
        p.describe()
    );
    // Another class, or another dtype: the table or the model.
    let p = tuned
        .check(&problem(8192, 8192, 8192), lens(8192, 8192, 8192), &h200)
        .unwrap();
    assert_eq!(hopper(&p).origin(), &Origin::Model);
    let f16 = Problem {
        dtype: GemmDtype::F16,
        ..problem(3000, 4096, 4096)
    };
    let p = tuned.check(&f16, lens(3000, 4096, 4096), &h200).unwrap();
    assert_eq!(hopper(&p).origin(), &Origin::Model);
    // Another device: its own records only.
    let h100 = Device {
        name: "NVIDIA H100".into(),
        ..Device::h200()
    };
    let p = tuned
        .check(&problem(3000, 4096, 4096), lens(3000, 4096, 4096), &h100)
        .unwrap();
    assert_eq!(hopper(&p).origin(), &Origin::Model);
    // A record whose schedule cannot run the problem: the default instead.
    let p = tuned
        .check(&problem(40000, 320, 256), lens(40000, 320, 256), &h200)
        .unwrap();
    assert!(matches!(hopper(&p).origin(), Origin::Table { .. }));
    // A schedule asked for comes before the record.
    let asked = Problem {
        config: Some(Config::parse(KernelChoice::Auto, "128x256x64s3").unwrap()),
        ..problem(3000, 4096, 4096)
    };
    let p = tuned.check(&asked, lens(3000, 4096, 4096), &h200).unwrap();
    assert_eq!(hopper(&p).schedule().to_string(), "128x256x64s3");
    assert_eq!(hopper(&p).origin(), &Origin::Given);
    // A program asked for that the record is not of: that program's default.
    let multistage = Problem {
        kernel: KernelChoice::named("multistage").unwrap(),
        ..problem(3000, 4096, 4096)
    };
    let p = tuned
        .check(&multistage, lens(3000, 4096, 4096), &h200)
        .unwrap();
    assert_eq!(p.program(), "multistage");
}
