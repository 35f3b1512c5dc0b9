//! `afterburner plan`: a dry run. Before anything is built it lists the
//! variants and the work (builds to do, training runs, timed and counted
//! runs) and builds, fetches and writes nothing; after `build` it sees the
//! builds made; after a run it says every build is cached and estimates
//! from that run's records. A bad file is
//! refused as `run` refuses it, naming the line.

use crate::support::Sandbox;

const EXPERIMENT: &str = r#"
[target]
name = "hotpath"
source = { path = "src" }
build = "make"
binaries = { app = "hotpath" }

[[variant]]
name = "baseline"

[[variant]]
name = "pgo"
optimize = ["pgo"]

[[workload]]
name = "hot"
role = "both"
run = "{bin.app} 200000"

[bench]
repetitions = 4
warmup = 1
metrics = ["wall", "instructions"]
instruction_repetitions = 2
"#;

#[test]
fn a_plan_counts_the_work_builds_nothing_and_then_sees_the_cache() {
    let sandbox = Sandbox::with_fixture("hotpath");
    sandbox.write("afterburner.toml", EXPERIMENT);
    let before = sandbox.afterburner(&["plan"]);
    before.assert_ok();
    let out = before.stdout();
    for words in [
        "the file is valid",
        "baseline",
        "pgo",
        "training build (gcc-pgo)",
        // baseline's build, pgo's instrumented and final builds.
        "builds: 3 to do, 0 cached",
        "training runs: 1",
        "(1 warmup + 4 rounds) × 2 variant(s) × 1 workload(s) = 10 timed runs",
        "estimate: unknown: nothing has been built or run here yet",
    ] {
        assert!(out.contains(words), "no {words:?} in:\n{out}");
    }
    assert!(
        !sandbox.path().join(".afterburner").exists(),
        "plan wrote a work directory"
    );

    // `build` makes the baseline and pgo's training build; the final
    // build waits for training.
    sandbox.afterburner(&["build"]).assert_ok();
    let built = sandbox.afterburner(&["plan"]);
    built.assert_ok();
    let out = built.stdout();
    for words in ["builds: 1 to do, 2 cached", "training runs: 1"] {
        assert!(out.contains(words), "no {words:?} in:\n{out}");
    }

    sandbox.afterburner(&["run"]).assert_ok();
    let after = sandbox.afterburner(&["plan"]);
    after.assert_ok();
    let out = after.stdout();
    for words in [
        "builds: 0 to do, 3 cached",
        "training runs: 0",
        "estimate: about",
        "as in earlier runs",
    ] {
        assert!(out.contains(words), "no {words:?} in:\n{out}");
    }
}

#[test]
fn a_plan_of_a_bad_file_names_its_line() {
    let sandbox = Sandbox::with_fixture("hotpath");
    sandbox.write(
        "afterburner.toml",
        &EXPERIMENT.replace("optimize = [\"pgo\"]", "optimize = [\"pgoo\"]"),
    );
    sandbox
        .afterburner(&["plan"])
        .assert_fails_with("afterburner.toml:13");
}
