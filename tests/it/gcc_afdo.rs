//! gcc AutoFDO: the profile afterburner writes in gcc 12's format is read
//! by gcc without a complaint, and it reaches the hot function's blocks.

use std::process::Command;

use crate::support::{compile_with_profile, only_run_dir, read_json, served_gcc_or_skip, Sandbox};

/// The writer's file, from a hand-written LLVM text profile of onehot's
/// hot `checksum` (its loop body on line offset 3), read by gcc itself: no
/// diagnostic, and the loop's block annotated with the profile's count. A
/// regression test for Debian's `create_gcov`, whose files gcc 12 refuses
/// ("AutoFDO profile version 1 does not match 2", "Not expected TAG").
#[test]
fn gcc_reads_the_written_profile_and_annotates_the_hot_loop() {
    if !served_gcc_or_skip() {
        return;
    }
    let sandbox = Sandbox::with_fixture("onehot");
    let text = "checksum:20100:100\n 0: 100\n 1: 100\n 2: 10000\n 3: 10000\n 4: 100\nmain:50:1\n 0: 1\n 20: 40 checksum:40\n";
    let reader = afterburner::toolchain::autofdo::check_gcc().unwrap();
    let bytes = afterburner::toolchain::formats::gcov_afdo::convert(text, reader).unwrap();
    let profile = sandbox.write("onehot.gcov", "");
    std::fs::write(&profile, bytes).unwrap();
    let src = sandbox.path().join("src");
    let counts = compile_with_profile(&src, "onehot.c", &profile);
    // The loop's blocks carry the profile's 10000 (gcc's propagation may
    // add the entry's 100 to the header).
    assert!(
        counts
            .get("checksum")
            .is_some_and(|c| (10_000..=10_100).contains(c)),
        "{counts:?}"
    );
    assert!(counts.get("fill").is_none_or(|c| *c == 0), "{counts:?}");
}

const EXPERIMENT: &str = r#"
[target]
name = "hotpath"
source = { path = "src" }
build = "make"
binaries = { hotpath = "hotpath" }

[[variant]]
name = "baseline"

[[variant]]
name = "afdo"
optimize = ["autofdo"]
sample_event = "cpu-clock"

[[workload]]
name = "loop"
run = "{bin.hotpath} 1000000"
train_run = "{bin.hotpath} 200000000"
figures = [{ name = "checksum", regex = "checksum ([0-9]+)" }]

[bench]
repetitions = 2
warmup = 0
metrics = ["wall"]
seed = 42
"#;

/// The whole path with gcc on timer samples (no PMU needed): perf record,
/// `create_llvm_prof`'s text, afterburner's gcc-format profile, and a final
/// build with `-fauto-profile=` whose code differs from the baseline's and
/// prints the same checksum. gcc reads the merged profile without a word,
/// and it puts the samples on the hot function, `main`'s loop.
#[test]
fn gcc_autofdo_on_timer_samples_builds_with_a_profile_gcc_reads() {
    if !served_gcc_or_skip() {
        return;
    }
    if !crate::support::perf_timer_or_skip() {
        return;
    }
    let sandbox = Sandbox::with_fixture("hotpath");
    sandbox.write("afterburner.toml", EXPERIMENT);
    sandbox.afterburner(&["run"]).assert_ok();
    let profile = sandbox
        .path()
        .join(".afterburner/variants/afdo/profile/gcc-autofdo");
    let merged: Vec<_> = std::fs::read_dir(&profile)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".gcov"))
        .collect();
    assert_eq!(merged.len(), 1, "{merged:?}");
    let results = read_json(&only_run_dir(&sandbox).join("results.json"));
    let cflags = results["variants"][1]["cflags"].as_str().unwrap();
    assert!(
        cflags.contains("-fauto-profile=") && cflags.contains("-gdwarf-4"),
        "{cflags}"
    );
    let checksum = crate::support::comparison(&results, "loop", "checksum", "afdo");
    assert_eq!(checksum["ratio"], 1.0, "{checksum:#}");

    let counts = compile_with_profile(&sandbox.path().join("src"), "hotpath.c", &merged[0]);
    assert!(counts.get("main").is_some_and(|c| *c > 0), "{counts:?}");

    let text = |variant: &str| {
        let binary = sandbox
            .path()
            .join(format!(".afterburner/variants/{variant}/build/hotpath"));
        let out = Command::new("objcopy")
            .args(["-O", "binary", "--only-section=.text"])
            .arg(&binary)
            .arg("/dev/stdout")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        out.stdout
    };
    assert_ne!(
        text("baseline"),
        text("afdo"),
        "the profile changed no code"
    );
}

/// A gcc whose AutoFDO reader afterburner has not followed (here a gcc
/// that says it is 17 and reads version 4) is refused by its version
/// before anything is built, never handed a profile it may silently
/// misread.
#[test]
fn gcc_autofdo_refuses_a_gcc_version_it_does_not_write_for() {
    let sandbox = Sandbox::with_fixture("hotpath");
    sandbox.write("afterburner.toml", EXPERIMENT);
    let bin = sandbox.path().join("fakebin");
    std::fs::create_dir(&bin).unwrap();
    let real = String::from_utf8(
        Command::new("sh")
            .args(["-c", "command -v gcc"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let gcc = sandbox.write(
        "fakebin/gcc",
        &format!(
            "#!/bin/sh\n[ \"$1\" = -dumpversion ] && {{ echo 17; exit 0; }}\n[ \"$1\" = -print-autofdo-gcov-version ] && {{ echo 4; exit 0; }}\nexec {} \"$@\"\n",
            real.trim()
        ),
    );
    std::fs::set_permissions(&gcc, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    sandbox
        .afterburner_with_env(&["build"], &[("PATH", &path)])
        .assert_fails_with("variant `afdo`")
        .assert_fails_with("AutoFDO profiles of version 4")
        .assert_fails_with("hint:");
    assert!(
        !sandbox
            .path()
            .join(".afterburner/variants/afdo/build")
            .exists(),
        "something was built before the refusal"
    );
}

/// A profile sampled on one event is not reused for a variant that now
/// names another: the instrumented build is the same, the training is not
/// (seed 000's recipe on Redis moved from perf's default 4 kHz to 20 kHz
/// and kept the 4 kHz profile). Unchanged, the round is skipped.
#[test]
fn another_sample_event_trains_again() {
    if !served_gcc_or_skip() || !crate::support::perf_timer_or_skip() {
        return;
    }
    let sandbox = Sandbox::with_fixture("hotpath");
    let experiment = EXPERIMENT.replace("200000000", "20000000");
    sandbox.write("afterburner.toml", &experiment);
    let trained = |run: &crate::support::Run| !run.stderr().contains("profile up to date");
    let sampling = || {
        std::fs::read_to_string(
            sandbox
                .path()
                .join(".afterburner/variants/afdo/profile/gcc-autofdo/raw/sampling.txt"),
        )
        .unwrap()
    };
    assert!(trained(sandbox.afterburner(&["train"]).assert_ok()));
    assert!(sampling().starts_with("cpu-clock "), "{}", sampling());
    let again = sandbox.afterburner(&["train"]);
    assert!(!trained(again.assert_ok()), "{}", again.stderr());

    let period = "sample_event = \"cpu-clock/period=200000/\"";
    sandbox.write(
        "afterburner.toml",
        &experiment.replace("sample_event = \"cpu-clock\"", period),
    );
    let changed = sandbox.afterburner(&["train"]);
    assert!(trained(changed.assert_ok()), "{}", changed.stderr());
    assert!(
        sampling().starts_with("cpu-clock/period=200000/ "),
        "{}",
        sampling()
    );
}
