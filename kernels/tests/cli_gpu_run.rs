//! `scripts/gpu_run.sh`, which runs `rute gemm` and the GPU test binaries on the device machine,
//! on a fake staging directory: stand-in test binaries that report what libtest prints and a
//! stand-in `rute`. A missing test binary, a binary that ran no test and one that ignored tests
//! fail the run, each said so; a complete, passing set passes.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../scripts/gpu_run.sh");

/// An executable shell script at `path`.
fn script(path: &Path, body: &str) {
    fs::write(path, format!("#!/usr/bin/env bash\n{body}\n")).unwrap();
    fs::set_permissions(path, fs::Permissions::from_mode(0o755)).unwrap();
}

/// A test binary that prints libtest's summary line with these counts.
fn test_binary(dir: &Path, name: &str, passed: u32, ignored: u32) {
    script(
        &dir.join(".gpu/tests").join(name),
        &format!(
            "echo 'running {n} tests'\necho 'test result: ok. {passed} passed; 0 failed; {ignored} ignored; 0 measured; 0 filtered out; finished in 0.01s'",
            n = passed + ignored
        ),
    );
}

/// A staging directory, removed with its contents when dropped (also when a test fails).
struct Staging(PathBuf);

impl std::ops::Deref for Staging {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// The test binaries `gpu_run.sh` expects, one of each pattern.
const BINARIES: [&str; 4] = [
    "jit_gpu-1",
    "gpu_examples-2",
    "gpu_gemm-3",
    "gpu_gemm_runtime-4",
];

/// Every expected test binary, each passing `passed` tests.
fn every_binary_passes(dir: &Path, passed: u32) {
    for name in BINARIES {
        test_binary(dir, name, passed, 0);
    }
}

/// A staging directory with a stand-in `rute` that passes every check and refuses the run past
/// the device's memory.
fn staged(name: &str) -> Staging {
    let dir = std::env::temp_dir().join(format!("rute-gpu-run-{name}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(dir.join(".gpu/tests")).unwrap();
    fs::create_dir_all(dir.join(".gpu/bin")).unwrap();
    script(
        &dir.join(".gpu/bin/rute"),
        r#"case " $* " in *" --m 170000 "*)
    echo "error: 170000 x 170000 x 170000 (f16) needs 161.5 GiB (173400000000 bytes) of device memory (A, B, D and the reference or the timing's input sets), more than the 139.0 GiB (149250000000 bytes) available" >&2
    exit 1;;
esac
out=""; while [ $# -gt 0 ]; do [ "$1" = --out ] && out=$2; shift; done
echo "check: error 1.0e-4 (tolerance 2.0e-3), 0 unwritten: PASS"
echo "bench: rute 1.0000 ms 1.00 TFLOP/s | cuBLAS 1.0000 ms 1.00 TFLOP/s | ratio 1.000"
[ -z "$out" ] || echo "| table |" > "$out""#,
    );
    Staging(dir)
}

fn gpu_run(dir: &Path) -> Output {
    Command::new("bash")
        .arg(SCRIPT)
        .arg(dir.join("out"))
        .current_dir(dir)
        .env("SKIP_CORRECTNESS", "1")
        .env("SWEEP", "ref")
        .output()
        .expect("bash runs")
}

#[test]
fn a_complete_passing_set_passes() {
    let dir = staged("ok");
    every_binary_passes(&dir, 3);
    let o = gpu_run(&dir);
    assert!(o.status.success(), "{o:?}");
    assert!(
        !String::from_utf8_lossy(&o.stderr).contains("FAIL"),
        "{o:?}"
    );
}

#[test]
fn a_missing_binary_no_test_run_and_ignored_tests_fail_loudly() {
    let dir = staged("bad");
    test_binary(&dir, "jit_gpu-1", 3, 0);
    // Built without its tests, or with them all behind a feature it lacks.
    test_binary(&dir, "gpu_examples-2", 0, 0);
    test_binary(&dir, "gpu_gemm-3", 2, 1);
    // gpu_gemm_runtime-*: not staged.
    let o = gpu_run(&dir);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let err = String::from_utf8_lossy(&o.stderr);
    for needle in [
        "FAIL: gpu_examples-2 ran no test",
        "FAIL: gpu_gemm-3 ignored 1 test(s)",
        "FAIL: no test binary matches .gpu/tests/gpu_gemm_runtime-*",
    ] {
        assert!(err.contains(needle), "`{needle}` missing from {err}");
    }
    assert!(!err.contains("jit_gpu-1"), "{err}");
}

#[test]
fn a_rute_that_allocates_past_the_device_fails_the_run() {
    let dir = staged("no-memory-check");
    every_binary_passes(&dir, 1);
    // A rute that runs (and passes) whatever it is given.
    script(
        &dir.join(".gpu/bin/rute"),
        r#"echo "ran: naive f16 (f32 acc); 0 of 1 outputs unwritten: PASS""#,
    );
    let o = gpu_run(&dir);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("FAIL: rute gemm --m 170000 --n 170000 --k 170000 was not refused for device memory (exit status 0)"),
        "{err}"
    );
}

#[test]
fn a_missing_rute_fails_loudly() {
    let dir = staged("no-rute");
    every_binary_passes(&dir, 1);
    fs::remove_file(dir.join(".gpu/bin/rute")).unwrap();
    let o = gpu_run(&dir);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("FAIL: .gpu/bin/rute is missing"),
        "{o:?}"
    );
}
