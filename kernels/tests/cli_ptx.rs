//! `rute ptx` as a user runs it: the real binary, its arguments, stdout, stderr and exit status.

use std::process::{Command, Output};

use dsl_core::ir::Target;
use kernels::examples;

fn rute(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rute"))
        .args(args)
        .output()
        .expect("the rute binary runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).expect("utf-8 output")
}

#[test]
fn list_prints_each_kernel_and_its_targets() {
    let o = rute(&["ptx", "--list"]);
    assert!(o.status.success(), "{o:?}");
    assert_eq!(
        text(&o.stdout),
        "vector_add sm_80 sm_90a sm_100a\n\
         transpose sm_80 sm_90a sm_100a\n\
         reduce_sum sm_80 sm_90a sm_100a\n\
         softmax sm_80 sm_90a sm_100a\n\
         layernorm sm_80 sm_90a sm_100a\n\
         async_copy sm_80 sm_90a sm_100a\n\
         tma_round_trip sm_90a sm_100a\n\
         tma_pipeline sm_90a sm_100a\n\
         tma_stream sm_90a sm_100a\n\
         wgmma_tile sm_90a\n\
         gemm_naive sm_80 sm_90a sm_100a\n\
         hopper_ws_f16 sm_90a\n\
         hopper_ws_bf16 sm_90a\n\
         blackwell_ws_f16 sm_100a (configurations: step7, step8, step9)\n\
         blackwell_ws_bf16 sm_100a (configurations: step7, step8, step9)\n\
         multistage_f16 sm_80 sm_90a sm_100a\n\
         multistage_f16_f32acc sm_80 sm_90a sm_100a\n\
         multistage_bf16 sm_80 sm_90a sm_100a\n\
         multistage_f16_tuned sm_80 sm_90a sm_100a\n"
    );
    assert!(o.stderr.is_empty());
}

#[test]
fn prints_the_ptx_of_the_default_configuration() {
    let cases = [
        ("vector_add", examples::vector_add::<4>(), Target::Sm80),
        ("transpose", examples::transpose(8), Target::Sm90a),
        ("reduce_sum", examples::reduce_sum(256), Target::Sm100a),
        ("async_copy", examples::async_copy(128), Target::Sm80),
        (
            "tma_round_trip",
            examples::tma_round_trip(examples::tma_round_trip::BOX, false),
            Target::Sm90a,
        ),
    ];
    for (name, kernel, target) in cases {
        let want = codegen_ptx::emit(&kernel.unwrap(), target).unwrap();
        for args in [
            vec!["ptx", name, "--target", target.name()],
            vec!["ptx", "--target", target.name(), name],
        ] {
            let o = rute(&args);
            assert!(o.status.success(), "{args:?}: {o:?}");
            let got = text(&o.stdout);
            assert_eq!(got, want, "{args:?}");
            assert!(got.contains(&format!("\n.target {}\n", target.name())));
            assert!(got.contains(&format!(".visible .entry {name}(")));
        }
    }
    let o = rute(&["ptx", "transpose", "--target=sm_80"]);
    assert!(o.status.success(), "{o:?}");
    assert!(text(&o.stdout).contains(".target sm_80\n"));
}

/// `--config` prints a configured kernel under its own entry name, the same PTX the library
/// generates for it; a bad spelling or a kernel without configurations is a usage error.
#[test]
fn prints_the_ptx_of_a_configuration() {
    let spec = "64x64x128s6_t";
    let cfg: kernels::hopper::HopperConfig = spec.parse().unwrap();
    let kernel = kernels::hopper::hopper_kernel(cfg, kernels::gemm::GemmDtype::Bf16).unwrap();
    let want = codegen_ptx::emit(&kernel, Target::Sm90a).unwrap();
    let o = rute(&[
        "ptx",
        "hopper_ws_bf16",
        "--target",
        "sm_90a",
        "--config",
        spec,
    ]);
    assert!(o.status.success(), "{o:?}");
    let got = text(&o.stdout);
    assert_eq!(got, want);
    assert!(got.contains(".visible .entry hopper_ws_bf16_64x64x128s6_t("));
    assert_usage_error(
        &[
            "ptx",
            "hopper_ws_f16",
            "--target",
            "sm_90a",
            "--config",
            "96x64x64s4",
        ],
        &[
            "kernel `hopper_ws_f16`",
            "`96x64x64s4` is not a hopper_ws configuration",
            "tile M",
        ],
    );
    assert_usage_error(
        &["ptx", "vector_add", "--target", "sm_80", "--config", "x"],
        &[
            "`vector_add` takes no configuration",
            "hopper_ws_f16, hopper_ws_bf16",
        ],
    );
    assert_usage_error(&["ptx", "--list", "--config", spec], &["--list takes no"]);
}

/// `--config` with `--form` prints the kernel of that configuration in that form under the name a
/// profiler shows for it, the same PTX the library generates; a form spelled wrong, a form
/// without a configuration, a kernel generated in no forms and a form the schedule refuses are
/// usage errors naming what is wrong.
#[test]
fn prints_the_ptx_of_a_configuration_in_a_form() {
    use kernels::gemm::layout::FormParts;
    use kernels::gemm::GemmDtype;
    use kernels::hopper::{hopper_form_kernel, HopperSchedule};
    let (spec, form) = ("128x192x64s4_n", "fkk_bcol_gelu_tanh_bf16");
    let schedule: HopperSchedule = spec.parse().unwrap();
    let parts: FormParts = form.parse().unwrap();
    let kernel = hopper_form_kernel(schedule, GemmDtype::Bf16, Some(parts)).unwrap();
    let want = codegen_ptx::emit(&kernel, Target::Sm90a).unwrap();
    // `rute ptx KERNEL --target sm_90a --config CONFIG --form FORM`.
    let with = |kernel: &str, config: &str, form: &str| {
        format!("ptx {kernel} --target sm_90a --config {config} --form {form}")
            .split(' ')
            .map(String::from)
            .collect::<Vec<_>>()
    };
    let args = with("hopper_ws_bf16", spec, form);
    let o = rute(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(o.status.success(), "{o:?}");
    let got = text(&o.stdout);
    assert_eq!(got, want);
    assert!(got.contains(".visible .entry hopper_ws_bf16_128x192x64s4_n_fkk_bcol_gelu_tanh_bf16("));
    let usage = |args: Vec<String>, wanted: &[&str]| {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        assert_usage_error(&args, wanted);
    };
    usage(
        with("hopper_ws_f16", spec, "fkk_bcol_gelu_f16"),
        &["`gelu` is not a part of an epilogue", "`gelu_tanh`"],
    );
    usage(
        with("hopper_ws_f16", spec, "fkx_plain_f16"),
        &["`fkx_plain_f16` is not a form"],
    );
    usage(
        with("hopper_ws_f16", spec, "fkk_relu_f64"),
        &["ends with D's type"],
    );
    usage(
        with("hopper_ws_f16", "128x192x64s4_x_n", "fkk_glu_silu_f16"),
        &["the epilogue warps (_x)"],
    );
    assert_usage_error(
        &["ptx", "hopper_ws_f16", "--target", "sm_90a", "--form", form],
        &["--form takes a configuration too"],
    );
    let no_forms = "ptx blackwell_ws_f16 --target sm_100a --config step8 --form fkk_plain_f16";
    assert_usage_error(
        &no_forms.split(' ').collect::<Vec<_>>(),
        &["generated in no forms", "hopper_ws_f16, hopper_ws_bf16"],
    );
    assert_usage_error(&["ptx", "--list", "--form", form], &["--list takes no"]);
}

/// The Blackwell program's steps print for sm_100a under their names, the same PTX the library
/// generates; another target, or a spelling that is no configuration, is a usage error.
#[test]
fn prints_the_blackwell_steps_for_sm100a() {
    use kernels::blackwell::{blackwell_kernel, BlackwellConfig};
    use kernels::gemm::GemmDtype;
    for (spec, cfg) in [
        ("step7", BlackwellConfig::step7(2)),
        ("step8", BlackwellConfig::step8(4)),
        ("step9", BlackwellConfig::step9(4)),
        ("step7_d4", BlackwellConfig::step7(4)),
    ] {
        let want = codegen_ptx::emit(
            &blackwell_kernel(cfg, GemmDtype::F16).unwrap(),
            Target::Sm100a,
        )
        .unwrap();
        let o = rute(&[
            "ptx",
            "blackwell_ws_f16",
            "--target",
            "sm_100a",
            "--config",
            spec,
        ]);
        assert!(o.status.success(), "{o:?}");
        let got = text(&o.stdout);
        assert_eq!(got, want, "{spec}");
        assert!(got.contains(&format!(".visible .entry blackwell_ws_f16_{spec}(")));
    }
    let o = rute(&["ptx", "blackwell_ws_bf16", "--target", "sm_100a"]);
    assert!(o.status.success(), "{o:?}");
    assert!(text(&o.stdout).contains(".visible .entry blackwell_ws_bf16("));
    assert_usage_error(
        &[
            "ptx",
            "blackwell_ws_f16",
            "--target",
            "sm_90a",
            "--config",
            "step8",
        ],
        &["`blackwell_ws_f16` does not support sm_90a; it supports: sm_100a"],
    );
    assert_usage_error(
        &[
            "ptx",
            "blackwell_ws_f16",
            "--target",
            "sm_100a",
            "--config",
            "step8_c3",
        ],
        &["`step8_c3` is not a blackwell_ws configuration: `c3`: MMA consumers are 1 or 2"],
    );
}

/// Exit status 2, nothing on stdout, and an `error:` line on stderr containing every `needle`.
fn assert_usage_error(args: &[&str], needles: &[&str]) {
    let o = rute(args);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {o:?}");
    assert!(o.stdout.is_empty(), "{args:?}: {o:?}");
    let err = text(&o.stderr);
    assert!(err.starts_with("error: "), "{args:?}: {err}");
    for n in needles {
        assert!(err.contains(n), "{args:?}: `{n}` missing from {err}");
    }
}

#[test]
fn unknown_kernels_and_targets_name_the_choices() {
    let kernels = [
        "vector_add",
        "transpose",
        "reduce_sum",
        "async_copy",
        "tma_round_trip",
    ];
    let mut needles = vec!["unknown kernel `gemm_xl`"];
    needles.extend(kernels);
    assert_usage_error(&["ptx", "gemm_xl", "--target", "sm_80"], &needles);
    assert_usage_error(
        &["ptx", "vector_add", "--target", "sm_75"],
        &["--target takes sm_80, sm_90a or sm_100a, not `sm_75`"],
    );
    assert_usage_error(
        &["ptx", "tma_round_trip", "--target", "sm_80"],
        &["`tma_round_trip` does not support sm_80", "sm_90a, sm_100a"],
    );
}

#[test]
fn malformed_invocations_are_usage_errors() {
    assert_usage_error(&["ptx"], &["which kernel?", "vector_add", "tma_round_trip"]);
    assert_usage_error(
        &["ptx", "vector_add"],
        &["--target is required", "sm_80, sm_90a, sm_100a"],
    );
    assert_usage_error(
        &["ptx", "vector_add", "--target"],
        &["--target needs a value"],
    );
    assert_usage_error(
        &["ptx", "vector_add", "transpose", "--target", "sm_80"],
        &["one kernel at a time"],
    );
    assert_usage_error(&["ptx", "--list", "vector_add"], &["--list takes no"]);
    assert_usage_error(&["ptx", "--frobnicate"], &["unknown option `--frobnicate`"]);
}

#[test]
fn help_and_the_subcommand_table() {
    let o = rute(&["ptx", "--help"]);
    assert!(o.status.success(), "{o:?}");
    assert!(text(&o.stdout).contains("rute ptx --list"));
    let o = rute(&["--help"]);
    assert!(o.status.success(), "{o:?}");
    let out = text(&o.stdout);
    assert!(out.contains("  ptx ") && out.contains("  layout "), "{out}");
}
