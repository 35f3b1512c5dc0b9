//! `afterburner check`, the CI gate, on real runs: the divide fixture with
//! its loop made 10% longer (a `[params]` knob) fails the gate against the
//! run before it and an A/A passes; its JUnit XML reads back with an XML
//! parser; `--keep-gain` on a real gcc PGO build fails and passes around
//! the gain it measured. The headline is the instruction count (`[bench]
//! primary = "instructions"`): exact under callgrind, so the verdicts hold
//! on a busy machine.

use std::path::Path;

use crate::support::{comparison, mean_instructions, only_run_dir, read_json, read_junit, Sandbox};

/// The divide fixture's loop `{n}` times, plain and with shift-adds: two
/// variants, one knob.
fn divide(n: u64) -> String {
    format!(
        r#"
[target]
name = "divide"
source = {{ path = "src" }}
build = "make"
binaries = {{ divide = "divide" }}

[params]
n = {n}

[[variant]]
name = "divides"

[[variant]]
name = "adds"
cflags = "-DADDS"

[[workload]]
name = "loop"
role = "bench"
run = "{{bin.divide}} {{params.n}} 7"

[bench]
repetitions = 6
warmup = 0
metrics = ["wall", "instructions"]
instruction_repetitions = 1
primary = "instructions"
seed = 3
"#
    )
}

/// Bench the divide fixture with `n` steps in `sandbox`; the run's directory.
fn bench_divide(sandbox: &Sandbox, n: u64) -> std::path::PathBuf {
    sandbox.write("afterburner.toml", &divide(n));
    sandbox.afterburner(&["run"]).assert_ok();
    only_run_dir(sandbox)
}

#[test]
fn a_run_ten_percent_slower_fails_the_gate_and_an_a_a_passes() {
    let sandbox = Sandbox::with_fixture("divide");
    let first = bench_divide(&sandbox, 1_000_000);
    let slower = bench_divide(&sandbox, 1_100_000);
    assert_ne!(first, slower);
    for variant in ["divides", "adds"] {
        let ratio = mean_instructions(&slower, variant) / mean_instructions(&first, variant);
        assert!((1.08..1.11).contains(&ratio), "{variant}: {ratio}");
    }

    // Against the last run in history.db: both variants fail, with figures.
    let run = sandbox.afterburner(&["check", "--junit", "junit.xml", "--markdown", "check.md"]);
    run.assert_status(1);
    assert!(
        run.stdout().contains("FAILED: 2 of 2 cases"),
        "{}",
        run.stdout()
    );
    let junit = read_junit(&sandbox.path().join("junit.xml"));
    assert_eq!(junit.totals["tests"], "2", "{junit:#?}");
    assert_eq!(junit.totals["failures"], "2", "{junit:#?}");
    assert_eq!(junit.cases.len(), 2);
    for case in &junit.cases {
        assert_eq!(case.classname, "divide.loop", "{case:#?}");
        assert!(case.name.ends_with(" instructions"), "{case:#?}");
        let (message, text) = case.failure.as_ref().expect("a failure");
        assert!(message.contains("more than the 2% threshold"), "{message}");
        assert!(message.contains("slower by"), "{message}");
        assert!(text.contains("Regression rule:"), "{text}");
        assert!(text.contains("Exact metric (callgrind"), "{text}");
        assert!(
            case.suite.starts_with("regression against run "),
            "{case:#?}"
        );
    }
    let summary = std::fs::read_to_string(sandbox.path().join("check.md")).unwrap();
    assert!(
        summary.starts_with("## afterburner check: ❌ FAILED"),
        "{summary}"
    );
    assert!(
        summary.contains("| ❌ fail | loop | divides | instructions"),
        "{summary}"
    );

    // A threshold above the slowdown lets it through.
    sandbox
        .afterburner(&["check", "--threshold", "12%"])
        .assert_status(0);

    // A/A: the same knob again, against the run before it, passes; the
    // step summary goes where GitHub Actions says.
    let again = bench_divide(&sandbox, 1_100_000);
    let step_summary = sandbox.path().join("step-summary.md");
    std::fs::write(&step_summary, "earlier step\n").unwrap();
    let run = sandbox.afterburner_with_env(
        &["check", "--junit", "aa.xml"],
        &[("GITHUB_STEP_SUMMARY", &step_summary)],
    );
    run.assert_status(0);
    let junit = read_junit(&sandbox.path().join("aa.xml"));
    assert_eq!(junit.totals["failures"], "0", "{junit:#?}");
    assert_eq!(junit.cases.len(), 2);
    let summary = std::fs::read_to_string(&step_summary).unwrap();
    assert!(
        summary.starts_with("earlier step\n## afterburner check: ✅ passed: 2 cases"),
        "{summary}"
    );

    // Named explicitly, the first run is still 10% faster than this one.
    let first_results = first.join("results.json");
    let run = sandbox.afterburner(&[
        "check",
        "--run",
        again.to_str().unwrap(),
        "--against",
        first_results.to_str().unwrap(),
    ]);
    run.assert_status(1);
}

#[test]
fn a_bad_baseline_is_an_error_with_status_2() {
    let sandbox = Sandbox::with_fixture("divide");
    bench_divide(&sandbox, 200_000);
    // The only run: history holds nothing earlier to compare with.
    sandbox
        .afterburner(&["check"])
        .assert_status(2)
        .assert_fails_with("no earlier run of `divide` on this machine class");
    sandbox.write("garbage.json", "{ not json");
    sandbox
        .afterburner(&["check", "--against", "garbage.json"])
        .assert_status(2)
        .assert_fails_with("garbage.json is not an afterburner results.json");
    sandbox
        .afterburner(&["check", "--against", "missing.json"])
        .assert_status(2)
        .assert_fails_with("missing.json");
    // Another experiment's run (the hotpath fixture's stored results).
    let other = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/results/hotpath.json");
    sandbox
        .afterburner(&["check", "--against", other.to_str().unwrap()])
        .assert_status(2)
        .assert_fails_with("they cannot be compared");
    sandbox
        .afterburner(&["check", "--keep-gain", "pgo:5%"])
        .assert_status(2)
        .assert_fails_with("has no variant `pgo`");
    sandbox
        .afterburner(&["check", "--threshold", "2"])
        .assert_status(2)
        .assert_fails_with("with its % sign");
}

/// The hotpath fixture with gcc PGO, instructions heading the report.
const HOTPATH: &str = r#"
[target]
name = "hotpath"
source = { path = "src" }
build = "make"
binaries = { hotpath = "hotpath" }

[[variant]]
name = "baseline"

[[variant]]
name = "pgo"
optimize = ["pgo"]

[[workload]]
name = "loop"
run = "{bin.hotpath} 400000"
train_run = "{bin.hotpath} 100000"

[bench]
repetitions = 6
warmup = 0
metrics = ["wall", "instructions"]
instruction_repetitions = 2
primary = "instructions"
seed = 8
"#;

/// `--keep-gain pgo:F%` against the gain this PGO build measured: a floor
/// at half the gain is kept, one 10 points above it is ruled out (the
/// rule is the interval's upper bound, which exact counts keep within a
/// fraction of a point of the estimate).
#[test]
fn keep_gain_fails_below_the_floor_and_passes_above_it() {
    let sandbox = Sandbox::with_fixture("hotpath");
    sandbox.write("afterburner.toml", HOTPATH);
    sandbox.afterburner(&["run"]).assert_ok();
    let results = read_json(&only_run_dir(&sandbox).join("results.json"));
    let c = comparison(&results, "loop", "instructions", "pgo");
    assert_eq!(c["primary"], true, "{c:#}");
    let gain = (1.0 - c["ratio"].as_f64().unwrap()) * 100.0;
    assert!(gain > 4.0, "PGO should cut instructions here: gain {gain}%");

    let kept = format!("pgo:{:.0}%", (gain / 2.0).floor());
    let run = sandbox.afterburner(&["check", "--keep-gain", &kept, "--junit", "kept.xml"]);
    run.assert_status(0);
    assert!(
        run.stdout().contains("only the --keep-gain rules"),
        "{}",
        run.stdout()
    );
    let junit = read_junit(&sandbox.path().join("kept.xml"));
    assert_eq!(junit.cases.len(), 1, "{junit:#?}");
    assert!(junit.cases[0].failure.is_none(), "{junit:#?}");
    assert!(junit.cases[0].suite.starts_with("keep gain: pgo ≥"));

    let lost = format!("pgo:{:.0}%", (gain + 10.0).ceil());
    let run = sandbox.afterburner(&[
        "check",
        "--keep-gain",
        &kept,
        "--keep-gain",
        &lost,
        "--junit",
        "lost.xml",
        "--markdown",
        "lost.md",
    ]);
    run.assert_status(1);
    let junit = read_junit(&sandbox.path().join("lost.xml"));
    assert_eq!(junit.totals["failures"], "1", "{junit:#?}");
    let failed: Vec<_> = junit.cases.iter().filter(|c| c.failure.is_some()).collect();
    let (message, text) = failed[0].failure.as_ref().unwrap();
    assert!(message.contains("is below the"), "{message}");
    assert!(text.contains("upper bound of that interval"), "{text}");
    let summary = std::fs::read_to_string(sandbox.path().join("lost.md")).unwrap();
    assert!(summary.contains("Keep-gain rule:"), "{summary}");
}

/// The divide fixture in a git repository of its own (the experiment file
/// and `src/` committed), wall time heading the report unless `exact`
/// (instructions, exact under callgrind: a verdict a busy machine keeps).
fn divide_repo(repetitions: u32, exact: bool) -> Sandbox {
    let sandbox = Sandbox::with_fixture("divide");
    let mut experiment =
        divide(3_000_000).replace("repetitions = 6", &format!("repetitions = {repetitions}"));
    if !exact {
        experiment = experiment.replace("primary = \"instructions\"\n", "");
    }
    sandbox.write("afterburner.toml", &experiment);
    sandbox.commit_all("before");
    sandbox
}

/// The paired gate: each variant built from the committed revision and
/// from the working tree, run in the same rounds. Twice the work in the
/// tree is never a pass at 3 repetitions (the paired t-test decides what
/// the rank test cannot); an unchanged tree passes on its exact
/// instruction counts.
#[test]
fn check_rev_builds_the_revision_beside_the_tree_and_catches_twice_the_work() {
    let sandbox = divide_repo(3, false);
    let source = sandbox.path().join("src/divide.c");
    let text = std::fs::read_to_string(&source).unwrap();
    std::fs::write(&source, text.replace("i < n;", "i < 2 * n;")).unwrap();
    let run = sandbox.afterburner(&["check", "--rev", "HEAD", "--junit", "rev.xml"]);
    let status = run.output.status.code();
    assert!(
        matches!(status, Some(1 | 3)),
        "a doubling passed or erred:\n{}",
        run.stdout()
    );
    let out = run.stdout();
    assert!(out.contains("paired regression against revision "), "{out}");
    assert!(
        out.contains("divides@") || out.contains("Paired regression rule"),
        "{out}"
    );
    if status == Some(1) {
        assert!(out.contains("slower by"), "{out}");
    }
    let junit = read_junit(&sandbox.path().join("rev.xml"));
    assert_eq!(junit.cases.len(), 2, "{junit:#?}");
    // Both builds ran in the one run, every variant twice.
    let results = read_json(&only_run_dir(&sandbox).join("results.json"));
    let names: Vec<&str> = results["variants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["name"].as_str().unwrap())
        .collect();
    assert_eq!(names.len(), 4, "{names:?}");
    assert!(names.iter().any(|n| n.starts_with("divides@")), "{names:?}");
    // The instruction counts show the doubling exactly.
    let ratio = mean_instructions(&only_run_dir(&sandbox), "divides")
        / mean_instructions(
            &only_run_dir(&sandbox),
            names.iter().find(|n| n.starts_with("divides@")).unwrap(),
        );
    assert!((1.9..2.1).contains(&ratio), "{ratio}");

    // Unchanged: the same instructions, a pass.
    let sandbox = divide_repo(3, true);
    let run = sandbox.afterburner(&["check", "--rev", "HEAD"]);
    run.assert_status(0);
    assert!(run.stdout().contains("same within"), "{}", run.stdout());
}

#[test]
fn check_rev_refuses_a_revision_git_does_not_know_and_a_plan_that_cannot_decide() {
    let sandbox = divide_repo(2, true);
    sandbox
        .afterburner(&["check", "--rev", "HEAD"])
        .assert_status(2)
        .assert_fails_with("can decide nothing from fewer than 3 rounds");
    let sandbox = divide_repo(3, true);
    sandbox
        .afterburner(&["check", "--rev", "no-such-branch"])
        .assert_status(2)
        .assert_fails_with("no revision `no-such-branch`");
}

/// `--budget`: rounds go on past the repetitions, looked at sequentially,
/// until each pair passes or fails; a doubled loop fails, and the rule
/// says the looks were paid for (alpha spending).
#[test]
fn check_rev_budget_looks_again_and_fails_a_doubling() {
    let sandbox = divide_repo(3, false);
    let source = sandbox.path().join("src/divide.c");
    let text = std::fs::read_to_string(&source).unwrap();
    std::fs::write(&source, text.replace("i < n;", "i < 2 * n;")).unwrap();
    let run = sandbox.afterburner(&["check", "--rev", "HEAD", "--budget", "2m"]);
    run.assert_status(1);
    let out = run.stdout();
    assert!(
        out.contains("Rounds went on until every pair was decided"),
        "{out}"
    );
    assert!(out.contains("alpha spending"), "{out}");
    let results = read_json(&only_run_dir(&sandbox).join("results.json"));
    assert!(
        results["sequential"]["plan"]["looks"].is_array(),
        "{results:#}"
    );
}

/// Against a stored run, time is judged by the spread between runs, which
/// one earlier run cannot give: inconclusive (exit 3), never judged by the
/// spread within each run.
#[test]
fn check_against_one_run_on_time_is_inconclusive() {
    let sandbox = Sandbox::with_fixture("divide");
    let experiment = divide(1_000_000).replace("primary = \"instructions\"\n", "");
    sandbox.write("afterburner.toml", &experiment);
    sandbox.afterburner(&["run"]).assert_ok();
    sandbox.afterburner(&["run"]).assert_ok();
    let run = sandbox.afterburner(&["check"]);
    run.assert_status(3);
    let out = run.stdout();
    assert!(
        out.contains("the spread between runs is unknown: 1 stored run"),
        "{out}"
    );
    assert!(out.contains("INCONCLUSIVE"), "{out}");
}

/// `--rev DIR`: a directory holding the baseline's source (another
/// checkout, an unpacked release) is built beside the tree; twice the work
/// fails on exact counts.
#[test]
fn check_rev_takes_a_directory_as_the_baseline() {
    let sandbox = divide_repo(3, true);
    let source = sandbox.path().join("src/divide.c");
    let text = std::fs::read_to_string(&source).unwrap();
    let baseline = sandbox.path().join("baseline");
    std::fs::create_dir(&baseline).unwrap();
    for file in std::fs::read_dir(sandbox.path().join("src"))
        .unwrap()
        .flatten()
    {
        std::fs::copy(file.path(), baseline.join(file.file_name())).unwrap();
    }
    std::fs::write(&source, text.replace("i < n;", "i < 2 * n;")).unwrap();
    let run = sandbox.afterburner(&["check", "--rev", "baseline"]);
    run.assert_status(1);
    let out = run.stdout();
    assert!(
        out.contains("paired regression against revision baseline"),
        "{out}"
    );
    assert!(out.contains("slower by"), "{out}");
}
