//! Builds are verified before they are measured: a project whose Makefile
//! assigns its own `CC` and `CFLAGS` (tests/fixtures/ownflags) ignores the
//! ones afterburner passes, and each variant that claims what the build
//! did not do is refused before any run, naming the ignored variable; the
//! same project with the variables passed through runs, and results.json
//! says what was verified.

use crate::support::{
    run_experiment, tools_or_skip, variant_info, Experiment, Sandbox, Variant, Workload,
};

/// The experiment of the fixture, built by `build`, with `variant` beside
/// the baseline.
fn experiment(build: &str, variants: &[Variant]) -> Experiment {
    let mut e = Experiment::new("ownflags").build(build).workload(
        Workload::new("loop")
            .run("{bin.ownflags} 2000")
            .role("both"),
    );
    for v in variants {
        e = e.variant(v.clone());
    }
    e
}

/// `make` alone: the Makefile's `CC = gcc` and `CFLAGS = -O2 -Wall` win.
fn refused(variant: Variant, needles: &[&str]) {
    let sandbox = Sandbox::with_experiment("ownflags", &experiment("make", &[variant]));
    let run = sandbox.afterburner(&["run"]);
    for needle in needles {
        run.assert_fails_with(needle);
    }
    run.assert_fails_with("hint: pass afterburner's variables through");
    let runs = sandbox.path().join(".afterburner/runs");
    assert!(
        !runs.exists() || std::fs::read_dir(&runs).unwrap().next().is_none(),
        "a run was made"
    );
}

#[test]
fn lto_and_o3_in_a_build_that_sets_its_own_cflags_are_refused() {
    refused(
        Variant::new("lto-o3").optimize(&["lto", "o3"]),
        &[
            "variant `lto-o3` (final build)",
            "-flto=auto (lto)",
            "-O3 (o3)",
            "sets `CFLAGS` itself",
        ],
    );
}

#[test]
fn pgo_in_a_build_that_sets_its_own_cflags_is_refused_before_training() {
    refused(
        Variant::new("pgo").optimize(&["pgo"]),
        &[
            "variant `pgo` (instrumented build)",
            "-fprofile-generate (pgo)",
            "`CFLAGS`",
        ],
    );
}

#[test]
fn clang_in_a_build_that_sets_its_own_cc_is_refused() {
    if !tools_or_skip(&["clang"]) {
        return;
    }
    refused(
        Variant::new("clang").compiler("clang"),
        &[
            "variant `clang` (final build)",
            "compiled by gcc",
            "sets `CC`",
        ],
    );
}

#[test]
fn the_same_build_passing_the_variables_through_runs_and_records_what_was_verified() {
    let mut variants = vec![
        Variant::new("lto-o3").optimize(&["lto", "o3"]),
        Variant::new("pgo").optimize(&["pgo"]),
    ];
    let clang = tools_or_skip(&["clang"]);
    if clang {
        variants.push(
            Variant::new("clang-lto")
                .compiler("clang")
                .optimize(&["lto"]),
        );
    }
    let build = r#"make CC="$CC" CFLAGS="$CFLAGS" LDFLAGS="$LDFLAGS""#;
    let (_sandbox, results) = run_experiment("ownflags", &experiment(build, &variants));
    let verified = &variant_info(&results, "lto-o3")["verified"];
    let switches = verified["switches"].as_array().unwrap();
    let said: Vec<&str> = switches
        .iter()
        .map(|s| s["switch"].as_str().unwrap())
        .collect();
    assert_eq!(said, ["-O3", "-flto=auto"], "{verified:#}");
    for s in switches {
        assert!(
            s["with"].as_u64().unwrap() >= 1 && s["without"] == 0,
            "{verified:#}"
        );
    }
    assert!(
        verified["compiler_seen"][0]
            .as_str()
            .unwrap()
            .starts_with("GCC:"),
        "{verified:#}"
    );
    let pgo = &variant_info(&results, "pgo")["verified"];
    assert!(
        pgo["switches"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["switch"] == "-fprofile-use"),
        "{pgo:#}"
    );
    if clang {
        let clang = &variant_info(&results, "clang-lto")["verified"];
        assert_eq!(clang["compiler"], "clang");
        assert_eq!(clang["switches"][0]["switch"], "-flto=thin", "{clang:#}");
        assert_eq!(clang["switches"][0]["without"], 0, "{clang:#}");
    }
    let baseline = &variant_info(&results, "baseline")["verified"];
    assert_eq!(
        baseline["switches"].as_array().unwrap().len(),
        0,
        "{baseline:#}"
    );
}
