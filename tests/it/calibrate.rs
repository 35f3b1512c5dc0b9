//! `afterburner calibrate`: the baseline's binaries run as A and A′ (one
//! build, shared) within a budget, judged in trials of the file's
//! repetitions; the table, `calibration.json` apart from the runs, and a
//! later report on the same machine class citing it.

use crate::support::{only_run_dir, read_json, Sandbox};

const EXPERIMENT: &str = r#"
[target]
name = "calibrated"
source = { path = "src" }
build = "make"
binaries = { hotpath = "hotpath" }

[[variant]]
name = "baseline"

[[variant]]
name = "o1"
cflags = "-O1"

[[workload]]
name = "loop"
role = "bench"
run = "{bin.hotpath} 300000"

[bench]
repetitions = 3
warmup = 1
metrics = ["wall", "user"]
seed = 11
"#;

#[test]
fn calibrate_judges_a_a_trials_and_a_later_report_cites_it() {
    let sandbox = Sandbox::with_fixture("hotpath");
    sandbox.write("afterburner.toml", EXPERIMENT);
    let run = sandbox.afterburner(&["calibrate", "--budget", "3s", "--subsets", "4"]);
    run.assert_ok();
    let (stdout, stderr) = (run.stdout(), run.stderr());
    // The twin runs the baseline's build: nothing is built twice.
    assert!(stderr.contains("the same build as baseline's"), "{stderr}");
    assert!(
        !stderr.contains("building o1"),
        "only the baseline is built\n{stderr}"
    );
    assert!(stdout.contains("Calibration of `calibrated`"), "{stdout}");
    let header = stdout
        .lines()
        .find(|l| l.starts_with("workload"))
        .unwrap_or_else(|| panic!("no table header\n{stdout}"));
    for column in [
        "noise in rounds",
        "CV A / A′",
        "CV between runs",
        "claims (trials)",
        "claims (subsets)",
        "held 1 (trials)",
        "held 1 (subsets)",
        "decides at 3 rounds",
        "rounds for 1%",
        "rounds for 5%",
    ] {
        assert!(header.contains(column), "{column} missing from {header}");
    }
    let row = stdout.lines().find(|l| l.starts_with("loop")).unwrap();
    assert!(row.split_whitespace().nth(1) == Some("wall"), "{row}");
    for rule in ["Trials:", "Noise:", "Power:", "Whole A/A reports"] {
        assert!(stdout.contains(rule), "{rule}\n{stdout}");
    }

    // calibration.json beside the A/A bench's records, apart from runs/.
    let calibrations = sandbox.path().join(".afterburner/calibrations");
    let dirs: Vec<_> = std::fs::read_dir(&calibrations).unwrap().collect();
    assert_eq!(dirs.len(), 1);
    let dir = dirs.into_iter().next().unwrap().unwrap().path();
    let c = read_json(&dir.join("calibration.json"));
    let rounds = c["rounds"].as_u64().unwrap();
    assert!(rounds >= 2, "{c}");
    assert_eq!(
        (c["baseline"].as_str(), c["twin"].as_str()),
        (Some("baseline"), Some("baseline.aa"))
    );
    let w = &c["workloads"][0];
    assert_eq!(w["metric"], "wall");
    // Every complete trial of 3 rounds was judged; claims and held are
    // counts of those trials.
    let trials = w["disjoint"]["trials"].as_u64().unwrap();
    assert_eq!(trials, rounds / 3, "{c}");
    assert!(w["disjoint"]["claims"].as_u64().unwrap() <= trials);
    assert!(w["disjoint"]["held"].as_u64().unwrap() <= trials);
    assert_eq!(c["reports"]["trials"].as_u64().unwrap(), trials);
    if rounds > 3 {
        assert_eq!(w["subsampled"]["trials"], 4, "{c}");
    }
    assert_eq!(w["rounds_for"].as_array().unwrap().len(), 3);
    let raw = std::fs::read_to_string(dir.join("raw.jsonl")).unwrap();
    assert!(
        raw.contains("\"baseline.aa\"") && !raw.contains("\"o1\""),
        "only A and A′ ran"
    );
    assert!(
        !sandbox.path().join(".afterburner/runs").exists(),
        "no run under runs/"
    );

    // A later report of the same target on this machine cites it.
    let later = sandbox.afterburner(&["run"]);
    later.assert_ok();
    assert!(
        later.stdout().contains("calibrated on this machine class"),
        "{}",
        later.stdout()
    );
    assert!(only_run_dir(&sandbox).join("results.json").is_file());
}
