//! `page_faults`: a command workload judged on its page faults, end to
//! end. The fixture touches $PAGES fresh pages: a variant that touches four
//! times as many faults about four times as often, and is judged slower.
//! A service's are counted over the load's window.

use crate::support::{comparison, only_run_dir, read_json, Sandbox};

const EXPERIMENT: &str = r#"
[target]
name = "pages"
source = { path = "src" }
build = "make"
binaries = { pages = "pages" }

[[variant]]
name = "baseline"
env = { PAGES = "2000" }

[[variant]]
name = "more"
env = { PAGES = "8000" }

[[workload]]
name = "touch"
run = "{bin.pages}"

[bench]
repetitions = 5
warmup = 0
metrics = ["wall", "page_faults"]
"#;

#[test]
fn a_command_touching_four_times_the_pages_is_judged_on_its_page_faults() {
    let sandbox = Sandbox::with_fixture("pages");
    sandbox.write("afterburner.toml", EXPERIMENT);
    sandbox.afterburner(&["run"]).assert_ok();
    let dir = only_run_dir(&sandbox);
    // Each run's count, from the kernel's accounting of the command: at
    // least a fault per page it touched, and not many more (start-up).
    let raw = std::fs::read_to_string(dir.join("raw.jsonl")).unwrap();
    let mut counted = 0;
    for line in raw.lines() {
        let run: serde_json::Value = serde_json::from_str(line).unwrap();
        let faults = run["figures"]["page_faults"].as_f64().expect(line);
        let pages = if run["variant"] == "more" {
            8000.0
        } else {
            2000.0
        };
        assert!(
            (pages..pages + 2000.0).contains(&faults),
            "{faults} faults for {pages} pages: {line}"
        );
        counted += 1;
    }
    assert_eq!(counted, 10, "{raw}");
    let results = read_json(&dir.join("results.json"));
    let metric = results["measurements"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["metric"]["name"] == "page_faults")
        .expect("page_faults is measured")["metric"]
        .clone();
    assert_eq!(metric["unit"], "faults");
    assert_eq!(metric["lower_is_better"], true);
    assert_eq!(metric["precision"], "noisy");
    let c = comparison(&results, "touch", "page_faults", "more");
    assert_eq!(c["verdict"], "slower", "{c:#}");
    let ratio = c["ratio"].as_f64().unwrap();
    assert!((2.5..4.5).contains(&ratio), "{ratio}");
}

/// A service's page faults over a load's window: Debian's redis-server
/// storing 50,000 new keys of 100-byte values (5 MB of values alone)
/// faults in thousands of fresh pages, counted in every timed run as `db.page_faults`, a
/// metric of the service: a total in faults, lower is better.
#[test]
fn a_services_page_faults_are_counted_over_the_loads_window() {
    if !crate::support::tools_or_skip(&["redis-server"]) {
        return;
    }
    let sandbox = Sandbox::with_fixture("slowserver");
    sandbox.write(
        "afterburner.toml",
        &format!(
            r#"
[target]
name = "redis"
source = {{ path = "src" }}
build = "make"
binaries = {{ redis = "slowserver" }}

[[target.service]]
name = "db"
start = "{{bin.redis}} --port {{port}} --bind 127.0.0.1 --save '' --appendonly no"
ready = "redis"

[[variant]]
name = "debian"
prebuilt = {{ redis = "/usr/bin/redis-server" }}

[[workload]]
name = "sets"
[workload.load]
driver = "redis"
request = "SET key:{{k}} {value}"
vars = {{ k = "seq:1:50000" }}
clients = 4
requests = 50000
warmup = "0s"

[bench]
repetitions = 2
warmup = 0
metrics = ["wall", "page_faults"]
"#,
            value = "v".repeat(100)
        ),
    );
    sandbox.afterburner(&["bench"]).assert_ok();
    let dir = only_run_dir(&sandbox);
    let raw = std::fs::read_to_string(dir.join("raw.jsonl")).unwrap();
    for line in raw.lines() {
        let run: serde_json::Value = serde_json::from_str(line).unwrap();
        if run["kind"] == "timing" {
            let faults = run["figures"]["db.page_faults"].as_f64().expect(line);
            // The values alone fill 1,220 pages of 4 KiB; the window
            // leaves out the start-up's.
            assert!((1000.0..100_000.0).contains(&faults), "{faults}: {line}");
        }
    }
    let results = read_json(&dir.join("results.json"));
    let metric = &results["measurements"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["metric"]["name"] == "db.page_faults")
        .unwrap_or_else(|| panic!("no db.page_faults in {results:#}"))["metric"];
    assert_eq!(metric["unit"], "faults");
    assert_eq!(metric["lower_is_better"], true);
    assert_eq!(metric["cumulative"], true);
}
