//! `repetitions = "auto"`: rounds go on until every primary comparison is
//! decided or the budget ends, and the report says which and when.

use crate::support::{comparison, only_run_dir, read_json, Sandbox};

/// A workload whose figure is 100 (baseline) or 130 (`slow`) plus noise
/// from /dev/urandom (0 to 255, scaled to 0–9.96): no wall-time metric, so
/// the figure is the primary one.
const EXPERIMENT: &str = r#"
[target]
name = "sequential"
source = { path = "src" }
build = "make"
binaries = { hotpath = "hotpath" }

[[variant]]
name = "baseline"
env = { BASE = "100" }

[[variant]]
name = "slow"
env = { BASE = "130" }

[[workload]]
name = "t"
run = "sh -c 'echo t: $(( BASE + $(od -An -N1 -tu1 /dev/urandom) * 10 / 256 ))'"
figures = [{ name = "t", regex = "t: ([0-9]+)", unit = "ms" }]

[bench]
warmup = 0
metrics = ["user"]
"#;

#[test]
fn a_clear_difference_stops_at_the_first_look() {
    let sandbox = Sandbox::with_fixture("hotpath");
    sandbox.write(
        "afterburner.toml",
        &EXPERIMENT.replace(
            "warmup = 0",
            "warmup = 0\nrepetitions = \"auto\"\nmin = 10\nmax = 40",
        ),
    );
    let run = sandbox.afterburner(&["run"]);
    run.assert_ok();
    let out = format!("{}{}", run.stdout(), run.stderr());
    assert!(
        out.contains("look after 10 rounds: 1 of 1 primary comparisons decided"),
        "{out}"
    );
    assert!(
        out.contains("stopped after 10 rounds: every primary comparison decided"),
        "{out}"
    );
    let dir = only_run_dir(&sandbox);
    let raw = std::fs::read_to_string(dir.join("raw.jsonl")).unwrap();
    assert_eq!(raw.lines().count(), 20, "10 rounds of 2 variants");
    let meta = read_json(&dir.join("meta.json"));
    assert_eq!(meta["stopped"]["reason"], "decided");
    assert_eq!(meta["sequential"]["plan"]["looks"][0], 10);
    let results = read_json(&dir.join("results.json"));
    let c = comparison(&results, "t", "t", "slow");
    assert_eq!(c["verdict"], "slower", "{c}");
    let rule = c["rule"].as_str().unwrap();
    assert!(
        rule.contains("alpha spending") && rule.contains("after 10 rounds"),
        "{rule}"
    );
    // A plan that stopped has nothing to resume: refused, raw.jsonl intact.
    sandbox
        .afterburner(&["bench", "--resume"])
        .assert_fails_with("already stopped after 10 rounds");
    let after = std::fs::read_to_string(dir.join("raw.jsonl")).unwrap();
    assert_eq!(after, raw);
    let report = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(
        report.contains("Sequential plan") && report.contains("stopped after 10 rounds"),
        "{report}"
    );
}

/// An A/A pair with noise far wider than the margin never decides in 2 s
/// (at most 50 rounds of 20 ms runs; the values, 100 to 1120, come from a
/// counter and the order from a fixed seed, so no look can be a chance
/// false verdict that differs from one machine to the next): the budget
/// ends the plan (after at least `min` rounds), and the report says so.
#[test]
fn an_undecidable_pair_stops_at_the_budget() {
    let sandbox = Sandbox::with_fixture("hotpath");
    sandbox.write(
        "afterburner.toml",
        &EXPERIMENT
            .replace("BASE = \"130\"", "BASE = \"100\"")
            .replace(
                "echo t: $(( BASE + $(od -An -N1 -tu1 /dev/urandom) * 10 / 256 ))",
                "n=$(cat count 2>/dev/null || echo 0); echo $((n + 1)) > count; sleep 0.02; echo t: $(( BASE + n * 7919 % 1021 ))",
            )
            .replace(
                "warmup = 0",
                "warmup = 0\nseed = 1\nrepetitions = \"auto\"\nbudget = \"2s\"\nmin = 8\nmax = 5000",
            ),
    );
    let run = sandbox.afterburner(&["run"]);
    run.assert_ok();
    let dir = only_run_dir(&sandbox);
    let meta = read_json(&dir.join("meta.json"));
    assert_eq!(meta["stopped"]["reason"], "budget", "{meta}");
    let rounds = meta["stopped"]["rounds"].as_u64().unwrap();
    assert!((8..5000).contains(&rounds), "{rounds}");
    let raw = std::fs::read_to_string(dir.join("raw.jsonl")).unwrap();
    assert_eq!(raw.lines().count() as u64, 2 * rounds);
    let results = read_json(&dir.join("results.json"));
    let c = comparison(&results, "t", "t", "slow");
    assert_eq!(c["verdict"], "undecided", "{c}");
    assert_eq!(results["repetitions"].as_u64(), Some(rounds));
}
