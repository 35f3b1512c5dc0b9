//! Batch workloads that print their own figures (sysbench's "transactions:
//! N (X per sec.)"): read with a regex, judged in their own direction.

use crate::support::{comparison, only_run_dir, read_json, Sandbox};

const FIGURES: &str = r#"
[target]
name = "figures"
source = { path = "src" }
build = "make"
binaries = { hotpath = "hotpath" }

[[variant]]
name = "baseline"

[[variant]]
name = "o3"
optimize = ["o3"]

[[workload]]
name = "tps"
run = "sh -c '{bin.hotpath} 1000 >/dev/null; echo \"transactions: 1200 (1,234.5 per sec.)\"'"
figures = [{ name = "tps", regex = "\\(([0-9.,]+) per sec", unit = "tx/s", better = "higher" }]

[bench]
repetitions = 4
warmup = 0
metrics = ["wall"]
"#;

#[test]
fn figures_are_read_from_output_and_compared_higher_is_better() {
    let sandbox = Sandbox::with_fixture("hotpath");
    sandbox.write("afterburner.toml", FIGURES);
    sandbox.afterburner(&["run"]).assert_ok();
    let results = read_json(&only_run_dir(&sandbox).join("results.json"));
    let tps: Vec<_> = results["measurements"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["metric"]["name"] == "tps")
        .collect();
    assert_eq!(tps.len(), 2);
    assert_eq!(
        tps[0]["samples"],
        serde_json::json!([1234.5, 1234.5, 1234.5, 1234.5])
    );
    assert_eq!(tps[0]["metric"]["lower_is_better"], false);
    let c = comparison(&results, "tps", "tps", "o3");
    assert_eq!(c["verdict"], "same");
    assert_eq!(c["ratio"], 1.0);
}

#[test]
fn a_figure_missing_from_the_output_is_an_error_naming_the_regex() {
    let sandbox = Sandbox::with_fixture("hotpath");
    sandbox.write(
        "afterburner.toml",
        &FIGURES.replace("per sec.)", "per minute)"),
    );
    sandbox
        .afterburner(&["run"])
        .assert_fails_with("figure `tps`")
        .assert_fails_with("found no number");
    let raw = std::fs::read_to_string(only_run_dir(&sandbox).join("raw.jsonl")).unwrap();
    assert_eq!(raw.lines().count(), 1, "the failed run is kept: {raw}");
    assert!(
        raw.contains("\"success\":false") && raw.contains("found no number"),
        "{raw}"
    );
}

#[test]
fn exports_write_csv_json_and_markdown_copies() {
    let sandbox = Sandbox::with_fixture("hotpath");
    sandbox.write("afterburner.toml", FIGURES);
    let args = [
        "run",
        "--export-csv",
        "out.csv",
        "--export-json",
        "out.json",
        "--export-markdown",
        "out.md",
    ];
    sandbox.afterburner(&args).assert_ok();
    let run_dir = only_run_dir(&sandbox);
    assert_eq!(
        read_json(&sandbox.path().join("out.json")),
        read_json(&run_dir.join("results.json"))
    );
    assert_eq!(
        std::fs::read_to_string(sandbox.path().join("out.md")).unwrap(),
        std::fs::read_to_string(run_dir.join("report.md")).unwrap()
    );
    let csv = std::fs::read_to_string(sandbox.path().join("out.csv")).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert!(
        lines[0].starts_with("workload,metric,unit,variant,n,mean"),
        "{csv}"
    );
    // wall and tps for baseline and o3.
    assert_eq!(lines.len(), 1 + 4, "{csv}");
    let o3_tps = lines
        .iter()
        .find(|l| l.starts_with("tps,tps,tx/s,o3,4,1234.5,"))
        .expect(&csv);
    assert!(o3_tps.contains(",1,1,1,1,same,"), "{o3_tps}");
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("tps,tps,tx/s,baseline,4,") && l.ends_with(",,,,,")),
        "{csv}"
    );
}

#[test]
fn compare_puts_two_runs_side_by_side() {
    let sandbox = Sandbox::with_fixture("hotpath");
    sandbox.write("afterburner.toml", FIGURES);
    sandbox.afterburner(&["run"]).assert_ok();
    let first = only_run_dir(&sandbox);
    // A second bench gets a new run id (the id has one-second resolution).
    std::thread::sleep(std::time::Duration::from_millis(1100));
    sandbox.afterburner(&["bench"]).assert_ok();
    let second = only_run_dir(&sandbox);
    assert_ne!(first, second);
    let (a, b) = (
        first.to_string_lossy().into_owned(),
        second.join("results.json").to_string_lossy().into_owned(),
    );
    let run = sandbox.afterburner(&["compare", &a, &b]);
    run.assert_ok();
    let table = run.stdout();
    assert!(
        table.contains("| `tps` | tps (tx/s) | `o3` | 1234.5 | 1234.5 | 1.000 |"),
        "{table}"
    );
    assert!(
        table.contains("| `tps` | wall (ms) | `baseline` |")
            || table.contains("| `tps` | wall (µs) | `baseline` |"),
        "{table}"
    );
    sandbox.write("junk.json", "{}");
    sandbox
        .afterburner(&["compare", &a, "junk.json"])
        .assert_fails_with("is not an afterburner results.json");
}

#[test]
fn history_lists_every_reported_run_and_redraws_one() {
    let sandbox = Sandbox::with_fixture("hotpath");
    sandbox.write("afterburner.toml", FIGURES);
    sandbox.afterburner(&["run"]).assert_ok();
    std::thread::sleep(std::time::Duration::from_millis(1100));
    sandbox.afterburner(&["bench"]).assert_ok();
    let list = sandbox.afterburner(&["history"]);
    list.assert_ok();
    let text = list.stdout();
    let ids: Vec<String> = std::fs::read_dir(sandbox.path().join(".afterburner/runs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(ids.len(), 2);
    for id in &ids {
        assert!(text.contains(id.as_str()), "{id} missing from\n{text}");
    }
    // The headline: the workload's time (no figure is declared primary).
    assert!(text.contains("tps o3 wall "), "{text}");
    let shown = sandbox.afterburner(&["history", "show", &ids[0]]);
    shown.assert_ok();
    assert!(
        shown.stdout().contains("tps / tps (higher is better):"),
        "{}",
        shown.stdout()
    );
    sandbox
        .afterburner(&["history", "show", "nope"])
        .assert_fails_with("no run `nope`");
}

/// `[bench] aslr = false`: every run's stack lands at the same address
/// (with randomization, four runs practically never agree).
#[test]
fn aslr_false_runs_without_address_randomization() {
    let randomized = std::fs::read_to_string("/proc/sys/kernel/randomize_va_space")
        .is_ok_and(|v| v.trim() != "0");
    let experiment = |aslr: &str| {
        FIGURES
            .replace(
                "run = \"sh -c '{bin.hotpath} 1000 >/dev/null; echo \\\"transactions: 1200 (1,234.5 per sec.)\\\"'\"",
                "run = \"sh -c 'echo stack $((0x$(grep stack /proc/self/maps | cut -c1-12)))'\"",
            )
            .replace(
                "figures = [{ name = \"tps\", regex = \"\\\\(([0-9.,]+) per sec\", unit = \"tx/s\", better = \"higher\" }]",
                "figures = [{ name = \"stack\", regex = \"stack ([0-9]+)\" }]",
            )
            .replace("warmup = 0", &format!("warmup = 0\n{aslr}"))
    };
    let samples = |aslr: &str| {
        let sandbox = Sandbox::with_fixture("hotpath");
        sandbox.write("afterburner.toml", &experiment(aslr));
        sandbox.afterburner(&["run"]).assert_ok();
        let results = read_json(&only_run_dir(&sandbox).join("results.json"));
        let m = results["measurements"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["metric"]["name"] == "stack" && m["variant"] == "baseline")
            .unwrap()
            .clone();
        m["samples"].as_array().unwrap().clone()
    };
    let fixed = samples("aslr = false");
    assert!(fixed.iter().all(|s| *s == fixed[0]), "{fixed:?}");
    if randomized {
        let random = samples("");
        assert!(random.iter().any(|s| *s != random[0]), "{random:?}");
    } else {
        crate::support::skip_part("this kernel does not randomize addresses: the default case");
    }
}
