//! The seeds' experiment shapes: query sets (`each`), untimed setup,
//! before and after steps.

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

/// Debian's redis-server as the service of two prebuilt variants: its
/// config written by an untimed `setup` into its state directory, a key
/// seeded by the workload's `before` step and removed by its `after`.
const STEPS: &str = r#"
[target]
name = "redis"
source = { path = "src" }
build = "make"
binaries = { redis = "slowserver" }

[[target.service]]
name = "db"
setup = "sh -c 'printf \"save \\\"\\\"\\nappendonly no\\n\" > {state}/redis.conf; echo once >> {state}/setups'"
start = "{bin.redis} {state}/redis.conf --port {port} --bind 127.0.0.1"
ready = "redis"

[[variant]]
name = "a"
prebuilt = { redis = "/usr/bin/redis-server" }

[[variant]]
name = "b"
prebuilt = { redis = "/usr/bin/redis-server" }

[[workload]]
name = "seeded"
before = "redis-cli -p {port} SET seeded yes"
run = "sh -c 'test \"$(redis-cli -p {port} GET seeded)\" = yes && echo found'"
after = "redis-cli -p {port} DEL seeded"

[bench]
repetitions = 3
warmup = 0
metrics = ["wall"]
"#;

#[test]
fn setup_runs_once_per_variant_and_before_and_after_wrap_each_run() {
    let _serial = crate::support::exclusive();
    let sandbox = Sandbox::with_fixture("slowserver");
    sandbox.write("afterburner.toml", STEPS);
    sandbox.afterburner(&["bench"]).assert_ok();
    let run_dir = only_run_dir(&sandbox);
    let raw = std::fs::read_to_string(run_dir.join("raw.jsonl")).unwrap();
    let runs: Vec<serde_json::Value> = raw
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(runs.len(), 6);
    // The key the `before` step set was there, every run: `after` removed it
    // and the next `before` set it again.
    assert!(runs.iter().all(|r| r["success"] == true), "{raw}");
    for variant in ["a", "b"] {
        let setups = run_dir.join("state").join(variant).join("db/setups");
        assert_eq!(
            std::fs::read_to_string(&setups).unwrap(),
            "once\n",
            "{}",
            setups.display()
        );
    }
    let logs: Vec<String> = std::fs::read_dir(run_dir.join("logs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        logs.iter().any(|l| l.ends_with("-db.setup.log")),
        "{logs:?}"
    );
    assert_eq!(
        logs.iter().filter(|l| l.ends_with(".before.log")).count(),
        6,
        "{logs:?}"
    );
    assert_eq!(
        logs.iter().filter(|l| l.ends_with(".after.log")).count(),
        6,
        "{logs:?}"
    );
}

#[test]
fn a_failing_setup_is_named_with_its_output_and_log() {
    let _serial = crate::support::exclusive();
    let sandbox = Sandbox::with_fixture("slowserver");
    let text = STEPS.replace(
        "setup = \"sh -c 'printf",
        "setup = \"sh -c 'echo no disk for the data >&2; exit 3; printf",
    );
    sandbox.write("afterburner.toml", &text);
    let run = sandbox.afterburner(&["bench"]);
    run.assert_fails_with("the setup of service `db` failed with exit code 3");
    let said = run.stderr();
    assert!(said.contains("no disk for the data"), "{said}");
    assert!(said.contains(".setup.log"), "{said}");
}
