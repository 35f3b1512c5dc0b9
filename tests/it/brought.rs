//! Profiles brought from elsewhere (`profile =` on a variant): each kind
//! builds and the report shows how much of it matched; another program's
//! profile is refused; a corrupt file among good ones is skipped; an
//! archive that reaches outside its directory is refused.

use std::process::Command;

use crate::support::{
    files_with, pgo_experiment, tools_or_skip, trained_profile, Experiment, Sandbox, Variant,
    Workload,
};

/// The match figures of the `pgo` variant's profile in a run's results.
fn profile_figures(sandbox: &Sandbox) -> serde_json::Value {
    figures_of(sandbox, "pgo")
}

/// The match figures of `variant`'s profile in a run's results.
fn figures_of(sandbox: &Sandbox, variant: &str) -> serde_json::Value {
    let results = sandbox.results();
    let found = results["variants"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["name"] == variant)
        .unwrap()
        .clone();
    found["profiles"][0].clone()
}

/// Figures of a sampled profile of this very program: matched by symbol,
/// every hot function found.
fn assert_all_hot_found(figures: &serde_json::Value) {
    assert_eq!(figures["source"], "brought", "{figures}");
    assert_eq!(figures["method"], "symbols", "{figures}");
    let hot = figures["hot"].as_u64().unwrap();
    assert!(hot > 0, "{figures}");
    assert_eq!(figures["hot_found"].as_u64(), Some(hot), "{figures}");
}

/// `pgo_experiment` with AutoFDO in place of PGO.
fn autofdo_experiment(fixture: &str, compiler: &str, args: &str, lines: &str) -> Experiment {
    pgo_experiment(fixture, compiler, args, "")
        .variant(Variant::new("pgo").optimize(&["autofdo"]).line(lines))
}

#[test]
fn clang_profiles_brought_build_and_a_corrupt_one_is_skipped() {
    if !tools_or_skip(&["clang", "llvm-profdata-14"]) {
        return;
    }
    let (_trained, dir) = trained_profile("hotpath", "clang", "300000");
    let merged = files_with(&dir, "profdata").pop().unwrap();
    let raw = files_with(&dir.join("raw"), "profraw").pop().unwrap();
    let sandbox = Sandbox::with_fixture("hotpath");
    // A raw profile cut short, as a copy interrupted on its way.
    let bytes = std::fs::read(&raw).unwrap();
    std::fs::write(sandbox.path().join("cut.profraw"), &bytes[..100]).unwrap();
    let profile = format!(
        "profile = [{{ path = \"{}\", weight = 2 }}, \"{}\", \"cut.profraw\"]",
        merged.display(),
        raw.display()
    );
    sandbox.write_experiment(&pgo_experiment("hotpath", "clang", "100000", &profile));
    let run = sandbox.afterburner(&["run"]);
    run.assert_ok();
    assert!(
        run.stderr().contains("cut.profraw is left out"),
        "{}",
        run.stderr()
    );
    let figures = profile_figures(&sandbox);
    assert_eq!(figures["source"], "brought", "{figures}");
    assert_eq!(figures["method"], "names", "{figures}");
    let hot = figures["hot"].as_u64().unwrap();
    assert!(hot > 0, "{figures}");
    assert_eq!(figures["hot_found"].as_u64(), Some(hot), "{figures}");
    assert!(
        run.stdout().contains("pgo: clang-pgo (brought):"),
        "{}",
        run.stdout()
    );
    // Training never ran here: the profile is the brought one.
    assert!(!sandbox
        .variant_dir("pgo")
        .join("logs/train-loop.err")
        .exists());
}

#[test]
fn a_clang_profile_of_another_program_is_refused() {
    if !tools_or_skip(&["clang", "llvm-profdata-14"]) {
        return;
    }
    let (_trained, dir) = trained_profile("hotpath", "clang", "300000");
    let merged = files_with(&dir, "profdata").pop().unwrap();
    let sandbox = Sandbox::with_experiment(
        "divide",
        &pgo_experiment(
            "divide",
            "clang",
            "100000",
            &format!("profile = \"{}\"", merged.display()),
        ),
    );
    sandbox
        .afterburner(&["train"])
        .assert_fails_with("is not for this program")
        .assert_fails_with("0 of 2 hot ones");
}

#[test]
fn a_gcc_profile_archive_brought_builds_and_another_programs_is_refused() {
    if !tools_or_skip(&["gcc", "gcov-dump", "tar"]) {
        return;
    }
    let (trained, dir) = trained_profile("divide", "gcc", "3000000");
    let archive = trained.path().join("divide-profile.tar.gz");
    let status = Command::new("tar")
        .arg("-C")
        .arg(&dir)
        .args(["--exclude=raw", "-czf"])
        .arg(&archive)
        .arg(".")
        .status()
        .unwrap();
    assert!(status.success());
    // The same counters as a plain tree, beside the archive (weight 2).
    let tree = trained.path().join("tree");
    std::fs::create_dir_all(&tree).unwrap();
    for gcda in files_with(&dir, "gcda")
        .iter()
        .filter(|f| f.parent() == Some(&dir))
    {
        std::fs::copy(gcda, tree.join(gcda.file_name().unwrap())).unwrap();
    }
    let sandbox = Sandbox::with_experiment(
        "divide",
        &pgo_experiment(
            "divide",
            "gcc",
            "1000000",
            &format!(
                "profile = [{{ path = \"{}\", weight = 2 }}, \"{}\"]",
                archive.display(),
                tree.display()
            ),
        ),
    );
    let run = sandbox.afterburner(&["run"]);
    run.assert_ok();
    assert!(
        run.stderr().contains("2 brought file(s) merged"),
        "{}",
        run.stderr()
    );
    let figures = profile_figures(&sandbox);
    assert_eq!(figures["method"], "translation-units", "{figures}");
    assert!(figures["hot"].as_u64().unwrap() > 0, "{figures}");
    assert_eq!(figures["hot_found"], figures["hot"], "{figures}");

    let other = Sandbox::with_experiment(
        "hotpath",
        &pgo_experiment(
            "hotpath",
            "gcc",
            "100000",
            &format!("profile = \"{}\"", archive.display()),
        ),
    );
    other
        .afterburner(&["train"])
        .assert_fails_with("is not for this program");
}

#[test]
fn an_archive_reaching_out_of_its_directory_is_refused() {
    if !tools_or_skip(&["gcc", "tar"]) {
        return;
    }
    let sandbox = Sandbox::with_fixture("divide");
    let root = sandbox.path();
    std::fs::create_dir_all(root.join("pack")).unwrap();
    std::fs::write(root.join("pack/divide.gcda"), b"adcg").unwrap();
    std::os::unix::fs::symlink("/etc/passwd", root.join("pack/link.gcda")).unwrap();
    let cases = [
        (
            "dotdot.tar",
            vec!["--transform=s,^,../,", "divide.gcda"],
            "points outside",
        ),
        (
            "absolute.tar",
            vec!["-P", "--transform=s,^,/tmp/,", "divide.gcda"],
            "points outside",
        ),
        ("link.tar", vec!["link.gcda"], "is a link"),
    ];
    for (name, args, why) in cases {
        let status = Command::new("tar")
            .current_dir(root.join("pack"))
            .arg("-cf")
            .arg(root.join(name))
            .args(&args)
            .status()
            .unwrap();
        assert!(status.success());
        sandbox.write_experiment(&pgo_experiment(
            "divide",
            "gcc",
            "1000",
            &format!("profile = \"{name}\""),
        ));
        sandbox.afterburner(&["train"]).assert_fails_with(why);
        assert!(!root.join("divide.gcda").exists(), "{name} wrote outside");
        assert!(
            !std::path::Path::new("/tmp/divide.gcda").exists(),
            "{name} wrote to /tmp"
        );
    }
}

#[test]
fn a_brought_kind_the_optimization_does_not_read_is_an_error_at_its_line() {
    let sandbox = Sandbox::with_fixture("divide");
    std::fs::write(
        sandbox.path().join("prod.profdata"),
        [0xff, b'l', b'p', b'r', b'o', b'f', b'i', 0x81, 0, 0, 0, 0],
    )
    .unwrap();
    sandbox.write_experiment(&pgo_experiment(
        "divide",
        "gcc",
        "1000",
        "profile = \"prod.profdata\"",
    ));
    sandbox
        .afterburner(&["build"])
        .assert_fails_with("afterburner.toml:15")
        .assert_fails_with(
            "is a clang indexed profile (.profdata), and `pgo` with gcc reads a .gcda tree",
        );
}

#[test]
fn a_perf_recording_brought_builds_clang_autofdo() {
    if !tools_or_skip(&["clang", "create_llvm_prof"]) || !crate::support::perf_timer_or_skip() {
        return;
    }
    let autofdo = |lines: &str| autofdo_experiment("hotpath", "clang", "100000000", lines);
    let recorded = Sandbox::with_experiment("hotpath", &autofdo("sample_event = \"cpu-clock\""));
    recorded.afterburner(&["train"]).assert_ok();
    let perf = files_with(
        &recorded.variant_dir("pgo").join("profile/autofdo/raw"),
        "perfdata",
    )
    .pop()
    .unwrap();
    // Named as perf names it: the kind comes from its first bytes.
    let sandbox = Sandbox::with_fixture("hotpath");
    std::fs::copy(&perf, sandbox.path().join("prod.perf.data")).unwrap();
    sandbox.write_experiment(&autofdo("profile = \"prod.perf.data\""));
    let run = sandbox.afterburner(&["train"]);
    run.assert_ok();
    // Recorded from another build of hotpath (another sandbox's paths in
    // its debug information): its build-id differs, and that is said.
    assert!(
        run.stderr().contains("sampled another build of `hotpath`"),
        "{}",
        run.stderr()
    );
    let figures: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(
            sandbox
                .variant_dir("pgo")
                .join("profile/autofdo/match.json"),
        )
        .unwrap(),
    )
    .unwrap();
    assert_all_hot_found(&figures);
    assert!(
        run.stderr().contains("1 brought file(s) merged"),
        "{}",
        run.stderr()
    );
    let merged = files_with(&sandbox.variant_dir("pgo").join("profile/autofdo"), "afdo");
    assert!(
        merged.iter().any(|m| m
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("merged-")),
        "{merged:?}"
    );
}

#[test]
fn a_go_cpu_profile_brought_builds() {
    if !crate::support::go_for_pgo_or_skip() {
        return;
    }
    let go = |train: &str, lines: &str| {
        Experiment::new("gohot")
            .build("go build -o gohot .")
            .compiler("go")
            .variant(Variant::new("pgo").optimize(&["pgo"]).line(lines))
            .workload(
                Workload::new("loop")
                    .run("{bin.gohot} -n 200000")
                    .train_run(&format!("{{bin.gohot}} {train}")),
            )
    };
    let trained = Sandbox::with_experiment("gohot", &go("-n 20000000 -cpuprofile {profile}", ""));
    trained.afterburner(&["train"]).assert_ok();
    let raw = files_with(
        &trained.variant_dir("pgo").join("profile/go-pgo/raw"),
        "pprof",
    )
    .pop()
    .unwrap();
    let sandbox = Sandbox::with_fixture("gohot");
    std::fs::copy(&raw, sandbox.path().join("prod.pprof")).unwrap();
    sandbox.write_experiment(&go("-n 1", "profile = \"prod.pprof\""));
    let run = sandbox.afterburner(&["run"]);
    run.assert_ok();
    let results = sandbox.results();
    let goflags = results["variants"][1]["goflags"].as_str().unwrap();
    assert!(
        goflags.contains("-pgo=") && goflags.contains("merged-"),
        "{goflags}"
    );
    assert_all_hot_found(&profile_figures(&sandbox));
    assert!(
        run.stdout().contains("pgo: go-pgo (brought):"),
        "{}",
        run.stdout()
    );
}

#[test]
fn a_gcc_autofdo_profile_brought_builds_and_another_programs_is_refused() {
    if !crate::support::served_gcc_or_skip() || !crate::support::perf_timer_or_skip() {
        return;
    }
    let trained = Sandbox::with_experiment(
        "onehot",
        &autofdo_experiment("onehot", "gcc", "300000", "sample_event = \"cpu-clock\""),
    );
    trained.afterburner(&["train"]).assert_ok();
    let merged = files_with(
        &trained.variant_dir("pgo").join("profile/gcc-autofdo"),
        "gcov",
    )
    .into_iter()
    .find(|f| {
        f.file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("merged-")
    })
    .unwrap();
    // Named .afdo; the kind comes from its first bytes all the same.
    let sandbox = Sandbox::with_fixture("onehot");
    std::fs::copy(&merged, sandbox.path().join("prod.afdo")).unwrap();
    sandbox.write_experiment(&autofdo_experiment(
        "onehot",
        "gcc",
        "1000",
        "profile = \"prod.afdo\"",
    ));
    let run = sandbox.afterburner(&["run"]);
    run.assert_ok();
    assert_all_hot_found(&profile_figures(&sandbox));
    assert!(
        run.stdout().contains("pgo: gcc-autofdo (brought):"),
        "{}",
        run.stdout()
    );
    // The build read it: gcc was given the merged profile.
    let results = sandbox.results();
    let cflags = results["variants"][1]["cflags"].as_str().unwrap();
    assert!(cflags.contains("-fauto-profile="), "{cflags}");

    // hotpath has a `main` but no `checksum`, where onehot's time goes.
    let other = Sandbox::with_fixture("hotpath");
    std::fs::copy(&merged, other.path().join("prod.afdo")).unwrap();
    other.write_experiment(&autofdo_experiment(
        "hotpath",
        "gcc",
        "1000",
        "profile = \"prod.afdo\"",
    ));
    other
        .afterburner(&["train"])
        .assert_fails_with("is not for this program");
}

#[test]
fn a_bolt_profile_brought_builds_and_the_binary_still_computes_the_same() {
    let bolt = |lines: &str| {
        Experiment::new("hotpath")
            .variant(Variant::new("bolt").optimize(&["bolt"]).line(lines))
            .workload(
                Workload::new("loop")
                    .run("{bin.hotpath} 100000")
                    .train_run("{bin.hotpath} 300000")
                    .checksum(),
            )
    };
    let trained = Sandbox::with_experiment("hotpath", &bolt("bolt_profile = \"instrumented\""));
    trained.afterburner(&["train"]).assert_ok();
    let fdata = trained
        .variant_dir("bolt")
        .join("profile/bolt/merged-hotpath.fdata");
    let sandbox = Sandbox::with_fixture("hotpath");
    std::fs::copy(&fdata, sandbox.path().join("prod.fdata")).unwrap();
    sandbox.write_experiment(&bolt("profile = \"prod.fdata\""));
    let run = sandbox.afterburner(&["run"]);
    run.assert_ok();
    assert_all_hot_found(&figures_of(&sandbox, "bolt"));
    let results = sandbox.results();
    let checksum = crate::support::comparison(&results, "loop", "checksum", "bolt");
    assert_eq!(checksum["ratio"], 1.0, "{checksum:#}");
}
