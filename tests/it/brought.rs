//! Profiles brought from elsewhere (`profile =` on a variant): each kind
//! builds and the report shows how much of it matched; another program's
//! profile is refused; a corrupt file among good ones is skipped; an
//! archive that reaches outside its directory is refused.

use std::process::Command;

use crate::support::{
    files_with, only_run_dir, pgo_experiment, read_json, tools_or_skip, trained_profile, Sandbox,
};

/// The match figures of the `pgo` variant's profile in a run's results.
fn profile_figures(sandbox: &Sandbox) -> serde_json::Value {
    let results = read_json(&only_run_dir(sandbox).join("results.json"));
    let pgo = results["variants"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["name"] == "pgo")
        .unwrap()
        .clone();
    pgo["profiles"][0].clone()
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
    sandbox.write(
        "afterburner.toml",
        &pgo_experiment("hotpath", "clang", "100000", &profile),
    );
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
        .path()
        .join(".afterburner/variants/pgo/logs/train-loop.err")
        .exists());
}

#[test]
fn a_clang_profile_of_another_program_is_refused() {
    if !tools_or_skip(&["clang", "llvm-profdata-14"]) {
        return;
    }
    let (_trained, dir) = trained_profile("hotpath", "clang", "300000");
    let merged = files_with(&dir, "profdata").pop().unwrap();
    let sandbox = Sandbox::with_fixture("divide");
    sandbox.write(
        "afterburner.toml",
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
    let sandbox = Sandbox::with_fixture("divide");
    sandbox.write(
        "afterburner.toml",
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

    let other = Sandbox::with_fixture("hotpath");
    other.write(
        "afterburner.toml",
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
        sandbox.write(
            "afterburner.toml",
            &pgo_experiment("divide", "gcc", "1000", &format!("profile = \"{name}\"")),
        );
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
    sandbox.write(
        "afterburner.toml",
        &pgo_experiment("divide", "gcc", "1000", "profile = \"prod.profdata\""),
    );
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
    let autofdo = |lines: &str| {
        pgo_experiment("hotpath", "clang", "100000000", lines)
            .replace("optimize = [\"pgo\"]", "optimize = [\"autofdo\"]")
    };
    let recorded = Sandbox::with_fixture("hotpath");
    recorded.write("afterburner.toml", &autofdo("sample_event = \"cpu-clock\""));
    recorded.afterburner(&["train"]).assert_ok();
    let perf = files_with(
        &recorded
            .path()
            .join(".afterburner/variants/pgo/profile/autofdo/raw"),
        "perfdata",
    )
    .pop()
    .unwrap();
    // Named as perf names it: the kind comes from its first bytes.
    let sandbox = Sandbox::with_fixture("hotpath");
    std::fs::copy(&perf, sandbox.path().join("prod.perf.data")).unwrap();
    sandbox.write("afterburner.toml", &autofdo("profile = \"prod.perf.data\""));
    let run = sandbox.afterburner(&["train"]);
    run.assert_ok();
    assert!(
        run.stderr().contains("1 brought file(s) merged"),
        "{}",
        run.stderr()
    );
    let merged = files_with(
        &sandbox
            .path()
            .join(".afterburner/variants/pgo/profile/autofdo"),
        "afdo",
    );
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
        format!(
            r#"
[target]
name = "gohot"
source = {{ path = "src" }}
build = "go build -o gohot ."
binaries = {{ gohot = "gohot" }}
compiler = "go"

[[variant]]
name = "baseline"

[[variant]]
name = "pgo"
optimize = ["pgo"]
{lines}

[[workload]]
name = "loop"
run = "{{bin.gohot}} -n 200000"
train_run = "{{bin.gohot}} {train}"

[bench]
repetitions = 2
warmup = 0
metrics = ["wall"]
"#
        )
    };
    let trained = Sandbox::with_fixture("gohot");
    trained.write(
        "afterburner.toml",
        &go("-n 20000000 -cpuprofile {profile}", ""),
    );
    trained.afterburner(&["train"]).assert_ok();
    let raw = files_with(
        &trained
            .path()
            .join(".afterburner/variants/pgo/profile/go-pgo/raw"),
        "pprof",
    )
    .pop()
    .unwrap();
    let sandbox = Sandbox::with_fixture("gohot");
    std::fs::copy(&raw, sandbox.path().join("prod.pprof")).unwrap();
    sandbox.write("afterburner.toml", &go("-n 1", "profile = \"prod.pprof\""));
    let run = sandbox.afterburner(&["run"]);
    run.assert_ok();
    let results = read_json(&only_run_dir(&sandbox).join("results.json"));
    let goflags = results["variants"][1]["goflags"].as_str().unwrap();
    assert!(
        goflags.contains("-pgo=") && goflags.contains("merged-"),
        "{goflags}"
    );
    assert!(
        run.stdout().contains("not checked against the binaries"),
        "{}",
        run.stdout()
    );
}
