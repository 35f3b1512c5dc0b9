//! "Share of R's gain": an existing run gains the section when its
//! experiment file names a `[report] gain_reference` and `afterburner
//! report` redraws it; a reference that is no variant, or the baseline, is
//! refused with the file's line.

use crate::support::{only_run_dir, read_json, Sandbox};

/// Three optimization levels of the hotpath fixture: -O1's share of
/// -O2's gain over -O0, in time and in (callgrind's exact) instructions.
const LEVELS: &str = r#"
[target]
name = "hotpath"
source = { path = "src" }
build = "make"
binaries = { hotpath = "hotpath" }

[[variant]]
name = "O0"
cflags = "-O0"

[[variant]]
name = "O1"
cflags = "-O1"

[[variant]]
name = "O2"
cflags = "-O2"

[[workload]]
name = "loop"
role = "bench"
run = "{bin.hotpath} 300000"

[bench]
repetitions = 4
warmup = 0
metrics = ["wall", "instructions"]
instruction_repetitions = 2
seed = 5
"#;

/// The mean of `metric` for `variant` on `loop`, from results.json.
fn mean(results: &serde_json::Value, metric: &str, variant: &str) -> f64 {
    results["measurements"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["metric"]["name"] == metric && m["variant"] == variant)
        .and_then(|m| m["summary"]["mean"].as_f64())
        .unwrap_or_else(|| panic!("no {metric} of {variant} in {results:#}"))
}

#[test]
fn report_draws_the_share_of_a_reference_named_after_the_bench() {
    let sandbox = Sandbox::with_fixture("hotpath");
    sandbox.write("afterburner.toml", LEVELS);
    sandbox.afterburner(&["run"]).assert_ok();
    let run_dir = only_run_dir(&sandbox);
    let report = std::fs::read_to_string(run_dir.join("report.md")).unwrap();
    assert!(!report.contains("## Share of"), "{report}");
    assert!(read_json(&run_dir.join("results.json"))
        .get("gain_shares")
        .is_none());

    sandbox.write(
        "afterburner.toml",
        &format!("{LEVELS}\n[report]\ngain_reference = \"O2\"\n"),
    );
    let redrawn = sandbox.afterburner(&["report"]);
    redrawn.assert_ok();
    let results = read_json(&run_dir.join("results.json"));
    let shares = &results["gain_shares"][0];
    assert_eq!(shares["reference"], "O2", "{results:#}");
    let entry = |metric: &str| {
        shares["shares"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["metric"] == metric && s["variant"] == "O1")
            .unwrap_or_else(|| panic!("no share of {metric} in {shares:#}"))
    };
    // Time heads the workload, the work is beside it.
    let metrics: Vec<&str> = shares["shares"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["metric"].as_str().unwrap())
        .collect();
    assert_eq!(metrics, ["wall", "instructions"], "{shares:#}");
    assert_eq!(entry("wall")["primary"], true);
    let instructions = entry("instructions");
    let share = instructions["share"].as_f64().unwrap();
    let expected = (mean(&results, "instructions", "O0") - mean(&results, "instructions", "O1"))
        / (mean(&results, "instructions", "O0") - mean(&results, "instructions", "O2"));
    assert!((share - expected).abs() < 1e-9, "{share} vs {expected}");
    // -O2 executes far fewer instructions than -O0: its gain is
    // established and the interval finite, around the estimate.
    assert_eq!(instructions["bounded"], true, "{instructions:#}");
    let (low, high) = (
        instructions["ci_low"].as_f64().unwrap(),
        instructions["ci_high"].as_f64().unwrap(),
    );
    assert!(low <= share && share <= high, "{instructions:#}");

    let report = std::fs::read_to_string(run_dir.join("report.md")).unwrap();
    let section: String = report
        .split("## Share of `O2`'s gain")
        .nth(1)
        .unwrap_or_else(|| panic!("no section in\n{report}"))
        .split("\n## ")
        .next()
        .unwrap()
        .to_owned();
    assert!(section.contains("### Workload `loop`"), "{section}");
    assert!(section.contains("| `O1` | wall | "), "{section}");
    assert!(section.contains("| `O1` | instructions | "), "{section}");
    assert!(section.contains("Fieller"), "{section}");
    assert!(
        redrawn.stdout().contains("share of `O2`'s gain over `O0`"),
        "{}",
        redrawn.stdout()
    );
}

#[test]
fn a_gain_reference_that_is_the_baseline_or_no_variant_is_refused_with_its_line() {
    let sandbox = Sandbox::with_fixture("hotpath");
    for (name, message) in [
        ("O0", "gain_reference = \"O0\" is the baseline"),
        ("pgo", "gain_reference = \"pgo\" names no variant"),
    ] {
        let text = format!("{LEVELS}\n[report]\ngain_reference = \"{name}\"\n");
        let line = text.lines().count();
        sandbox.write("afterburner.toml", &text);
        sandbox
            .afterburner(&["report"])
            .assert_fails_with(&format!("afterburner.toml:{line}: {message}"))
            .assert_fails_with("hint: ");
    }
}

/// hotpath's `pgo` and a second `pgo` with two recordings, measured
/// against the plain build in a `[[report.gain]]` of their own; `-O0`
/// beside them, which that group does not name.
const RECORDED: &str = r#"
[target]
name = "hotpath"
source = { path = "src" }
build = "make"
binaries = { hotpath = "hotpath" }

[[variant]]
name = "plain"

[[variant]]
name = "pgo"
optimize = ["pgo"]

[[variant]]
name = "again"
optimize = ["pgo"]
recordings = 2

[[variant]]
name = "O0"
cflags = "-O0"

[[workload]]
name = "loop"
role = "both"
run = "{bin.hotpath} 300000"

[bench]
repetitions = 2
warmup = 0
metrics = ["instructions"]
instruction_repetitions = 2
seed = 5

[[report.gain]]
base = "plain"
reference = "pgo"
variants = ["again"]
"#;

/// Each recording trains its own profile (not `pgo`'s, which it would
/// otherwise share) and gets its own share; the group gives their mean
/// and interval across them, and measures nothing it does not name.
#[test]
fn recordings_train_alone_and_a_gain_group_reports_across_them() {
    if !crate::support::tools_or_skip(&["gcc", "make", "valgrind"]) {
        return;
    }
    let sandbox = Sandbox::with_fixture("hotpath");
    sandbox.write("afterburner.toml", RECORDED);
    sandbox.afterburner(&["run"]).assert_ok();
    let run_dir = only_run_dir(&sandbox);
    let results = read_json(&run_dir.join("results.json"));
    for (i, name) in ["again.1", "again.2"].iter().enumerate() {
        let v = results["variants"]
            .as_array()
            .unwrap()
            .iter()
            .find(|v| v["name"] == *name)
            .unwrap_or_else(|| panic!("no {name} in {results:#}"));
        assert_eq!(v["recording"]["of"], "again", "{v:#}");
        assert_eq!(v["recording"]["index"], i + 1, "{v:#}");
        assert!(v["profiles"][0]["shared_from"].is_null(), "{v:#}");
    }
    let group = &results["gain_shares"][0];
    assert_eq!(
        (&group["base"], &group["reference"]),
        (&"plain".into(), &"pgo".into())
    );
    let measured: Vec<&str> = group["shares"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["variant"].as_str().unwrap())
        .collect();
    assert_eq!(measured, ["again.1", "again.2"], "{group:#}");
    let across = &group["across_recordings"][0];
    assert_eq!(across["variant"], "again", "{group:#}");
    let each: Vec<f64> = across["shares"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_f64().unwrap())
        .collect();
    assert_eq!(each.len(), 2, "{across:#}");
    // The same training makes the same profile: every recording keeps
    // about all of `pgo`'s cut in instructions.
    for share in &each {
        assert!((0.9..1.1).contains(share), "{across:#}");
    }
    let mean = across["share"].as_f64().unwrap();
    assert!(
        (mean - f64::midpoint(each[0], each[1])).abs() < 1e-12,
        "{across:#}"
    );
    let report = std::fs::read_to_string(run_dir.join("report.md")).unwrap();
    assert!(report.contains("### Across recordings"), "{report}");
    assert!(
        report.contains("| `loop` | `again` | instructions |"),
        "{report}"
    );
}
