//! The seeds' experiment shapes: query sets (`each`).

use crate::support::{comparison, only_run_dir, read_json, Sandbox};

const QUERIES: &str = r#"
[target]
name = "hotpath"
source = { path = "src" }
build = "make"
binaries = { hotpath = "hotpath" }

[[variant]]
name = "baseline"

[[variant]]
name = "o1"
cflags = "-O1"

[[workload]]
name = "q"
each = "queries/*.txt"
run = "{bin.hotpath} {each.text}"
figures = [{ name = "echo", regex = "(\\d+)" }]

[bench]
repetitions = 2
warmup = 0
metrics = ["wall", "instructions"]
instruction_repetitions = 1
"#;

/// Seeds 002 and 003 run Q1–Q7 against each build: one workload per file,
/// the file's content in the command, reported as one table per metric.
#[test]
fn a_query_set_is_one_workload_per_file_and_one_table() {
    let sandbox = Sandbox::with_fixture("hotpath");
    std::fs::create_dir_all(sandbox.path().join("queries")).unwrap();
    sandbox.write("queries/q1.txt", "100000\n");
    sandbox.write("queries/q2.txt", "300000\n");
    sandbox.write("queries/notes.md", "not a query");
    sandbox.write("afterburner.toml", QUERIES);
    sandbox.afterburner(&["run"]).assert_ok();
    let run_dir = only_run_dir(&sandbox);
    let results = read_json(&run_dir.join("results.json"));
    assert_eq!(
        results["workload_sets"]["q"],
        serde_json::json!(["q-q1", "q-q2"])
    );
    // q2 runs three times the loop of q1: the file's text reached the command.
    let instructions = |w: &str| {
        results["measurements"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| {
                m["workload"] == w
                    && m["variant"] == "baseline"
                    && m["metric"]["name"] == "instructions"
            })
            .unwrap()["summary"]["mean"]
            .as_f64()
            .unwrap()
    };
    let ratio = instructions("q-q2") / instructions("q-q1");
    assert!((2.0..3.5).contains(&ratio), "q2/q1 = {ratio}");
    assert!(comparison(&results, "q-q1", "instructions", "o1")["ratio"].is_number());
    let report = std::fs::read_to_string(run_dir.join("report.md")).unwrap();
    assert!(report.contains("## Query set `q`"), "{report}");
    assert!(
        report.contains("| query | baseline | o1 | o1 / baseline |"),
        "{report}"
    );
    assert!(report.lines().any(|l| l.starts_with("| q2 |")), "{report}");
    // A figure the queries print is a table of its own.
    assert!(report.contains("echo, mean per query"), "{report}");
}

#[test]
fn a_query_set_that_matches_no_file_names_its_line() {
    let sandbox = Sandbox::with_fixture("hotpath");
    sandbox.write("afterburner.toml", &QUERIES.replace("*.txt", "*.sql"));
    std::fs::create_dir_all(sandbox.path().join("queries")).unwrap();
    sandbox
        .afterburner(&["build"])
        .assert_fails_with("afterburner.toml:17: each names no file");
}
