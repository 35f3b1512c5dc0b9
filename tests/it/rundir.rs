//! The run directory under abuse: a second process on the same work
//! directory refuses, naming the first; raw.jsonl with a torn line, a
//! duplicate, or a record outside the plan is read back as it should be;
//! an empty or an unfinished run says so.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::support::{only_run_dir, read_json, Sandbox};

/// Two variants, one workload, 3 rounds (2 runs each per round).
const PLAIN: &str = r#"
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
name = "loop"
run = "RUN"

[bench]
repetitions = 3
warmup = 0
metrics = ["wall"]
seed = 11
"#;

fn experiment(run: &str) -> String {
    PLAIN.replace("RUN", run)
}

fn raw_path(sandbox: &Sandbox) -> PathBuf {
    only_run_dir(sandbox).join("raw.jsonl")
}

fn raw_lines(sandbox: &Sandbox) -> Vec<String> {
    std::fs::read_to_string(raw_path(sandbox))
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// A bench and a resume at once on one work directory (issue "robust
/// under abuse": both appended to one raw.jsonl): the second refuses,
/// naming the first's pid and command, and the first finishes intact.
#[test]
fn a_second_bench_resume_or_build_refuses_while_a_bench_writes() {
    let sandbox = Sandbox::with_fixture("hotpath");
    sandbox.write(
        "afterburner.toml",
        &experiment("sh -c 'sleep 0.4; exec {bin.hotpath} 1000'"),
    );
    sandbox.afterburner(&["build"]).assert_ok();
    let mut first = std::process::Command::new(env!("CARGO_BIN_EXE_afterburner"))
        .arg("bench")
        .current_dir(sandbox.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let runs = sandbox.path().join(".afterburner/runs");
    let deadline = Instant::now() + Duration::from_mins(1);
    while std::fs::read_dir(&runs)
        .ok()
        .and_then(|mut d| d.next())
        .and_then(|e| std::fs::read_to_string(e.unwrap().path().join("raw.jsonl")).ok())
        .is_none_or(|raw| raw.lines().count() < 1)
    {
        assert!(Instant::now() < deadline, "no run finished");
        std::thread::sleep(Duration::from_millis(50));
    }
    let run_id = only_run_dir(&sandbox)
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let holder = format!("run {run_id} is being written by pid {} (`", first.id());
    for args in [&["bench", "--resume"][..], &["bench"], &["build"]] {
        sandbox
            .afterburner(args)
            .assert_fails_with(&holder)
            .assert_fails_with("afterburner bench`)");
    }
    let status = first.wait().unwrap();
    assert!(status.success(), "the first bench failed: {status}");
    let lines = raw_lines(&sandbox);
    assert_eq!(lines.len(), 6, "{lines:#?}");
    let mut slots: Vec<(u64, String)> = lines
        .iter()
        .map(|l| {
            let r: serde_json::Value = serde_json::from_str(l).unwrap();
            (
                r["round"].as_u64().unwrap(),
                r["variant"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    slots.sort();
    slots.dedup();
    assert_eq!(slots.len(), 6, "a run was written twice: {lines:#?}");
    // Only one run directory: the refused bench made none.
    assert_eq!(std::fs::read_dir(&runs).unwrap().count(), 1);
}

/// A crash leaves a half-written last line; a duplicated line came from
/// elsewhere. A resume cuts the torn line, appends the missing runs after
/// the good ones, and the report leaves the copy out and says both.
#[test]
fn resume_cuts_a_torn_line_and_the_report_drops_a_duplicate() {
    let sandbox = Sandbox::with_fixture("hotpath");
    sandbox.write("afterburner.toml", &experiment("{bin.hotpath} 1000"));
    sandbox.afterburner(&["run"]).assert_ok();
    let lines = raw_lines(&sandbox);
    assert_eq!(lines.len(), 6);
    // Rounds 1 and 2 done, round 3 lost; the first line copied; the
    // fifth cut halfway, as a crash mid-write leaves it.
    let torn = &lines[4][..lines[4].len() / 2];
    let text = format!("{}\n{}\n{torn}", lines[..4].join("\n"), lines[0]);
    std::fs::write(raw_path(&sandbox), &text).unwrap();
    let report = sandbox.afterburner(&["report"]);
    report.assert_ok();
    let said = report.stdout() + &report.stderr();
    assert!(said.contains("partial: 2 of 3 rounds"), "{said}");
    assert!(
        said.contains("raw.jsonl: line 6 left out (a run cut off mid-write)"),
        "{said}"
    );
    let resumed = sandbox.afterburner(&["bench", "--resume"]);
    resumed.assert_ok();
    let said = resumed.stdout() + &resumed.stderr();
    assert!(
        said.contains("raw.jsonl: line 6 left out (a run cut off mid-write)"),
        "{said}"
    );
    assert!(
        said.contains("raw.jsonl: line 5, a second record of round 1 of workload `loop`"),
        "{said}"
    );
    assert!(!said.contains("partial:"), "{said}");
    let after = raw_lines(&sandbox);
    assert_eq!(after.len(), 7, "{after:#?}");
    for line in &after {
        serde_json::from_str::<serde_json::Value>(line).unwrap_or_else(|e| panic!("{e}: {line}"));
    }
    let results = read_json(&only_run_dir(&sandbox).join("results.json"));
    assert_eq!(results["runs"]["total"], 6, "{:#}", results["runs"]);
    assert_eq!(results["runs"]["complete_rounds"], 3);
}

#[test]
fn a_record_outside_the_plan_is_an_error_naming_its_line() {
    let sandbox = Sandbox::with_fixture("hotpath");
    sandbox.write("afterburner.toml", &experiment("{bin.hotpath} 1000"));
    sandbox.afterburner(&["run"]).assert_ok();
    let mut lines = raw_lines(&sandbox);
    let mut record: serde_json::Value = serde_json::from_str(&lines[0]).unwrap();
    record["round"] = 999.into();
    lines.push(record.to_string());
    std::fs::write(raw_path(&sandbox), lines.join("\n") + "\n").unwrap();
    for args in [&["report"][..], &["bench", "--resume"]] {
        sandbox
            .afterburner(args)
            .assert_fails_with("raw.jsonl:7: round 999 is outside the plan")
            .assert_fails_with("(3 rounds, numbered 0 to 2)")
            .assert_fails_with("hint:");
    }
}

/// An empty raw.jsonl used to give an empty report and exit 0.
#[test]
fn an_empty_run_is_an_error() {
    let sandbox = Sandbox::with_fixture("hotpath");
    sandbox.write("afterburner.toml", &experiment("{bin.hotpath} 1000"));
    sandbox.afterburner(&["run"]).assert_ok();
    std::fs::write(raw_path(&sandbox), "").unwrap();
    sandbox
        .afterburner(&["report"])
        .assert_fails_with("has no finished run")
        .assert_fails_with("bench --resume");
}

/// One Ctrl-C stops the bench: the run in progress is abandoned, the exit
/// status is 130, and what finished is reported, marked partial.
#[test]
fn ctrl_c_reports_the_finished_runs_as_partial() {
    let sandbox = Sandbox::with_fixture("hotpath");
    sandbox.write(
        "afterburner.toml",
        &experiment("sh -c 'sleep 0.3; exec {bin.hotpath} 1000'"),
    );
    sandbox.afterburner(&["build"]).assert_ok();
    let err = std::fs::File::create(sandbox.path().join("bench.err")).unwrap();
    let bench = std::process::Command::new(env!("CARGO_BIN_EXE_afterburner"))
        .arg("bench")
        .current_dir(sandbox.path())
        .stdout(std::process::Stdio::piped())
        .stderr(err)
        .spawn()
        .unwrap();
    let runs = sandbox.path().join(".afterburner/runs");
    let deadline = Instant::now() + Duration::from_mins(1);
    while std::fs::read_dir(&runs)
        .ok()
        .and_then(|mut d| d.next())
        .and_then(|e| std::fs::read_to_string(e.unwrap().path().join("raw.jsonl")).ok())
        .is_none_or(|raw| raw.lines().count() < 2)
    {
        assert!(Instant::now() < deadline, "no run finished");
        std::thread::sleep(Duration::from_millis(20));
    }
    let pid = libc::pid_t::try_from(bench.id()).unwrap();
    // SAFETY: kill has no memory-safety preconditions.
    unsafe { libc::kill(pid, libc::SIGINT) };
    let out = bench.wait_with_output().unwrap();
    let stderr = std::fs::read_to_string(sandbox.path().join("bench.err")).unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("interrupted"), "{stderr}");
    let kept = raw_lines(&sandbox).len();
    assert!((2..6).contains(&kept), "{kept} runs kept");
    assert!(
        stdout.contains("partial: 1 of 3 rounds") || stdout.contains("partial: 2 of 3 rounds"),
        "{stdout}"
    );
    let report = std::fs::read_to_string(only_run_dir(&sandbox).join("report.md")).unwrap();
    assert!(report.contains("partial: "), "{report}");
}

/// A bench whose every run failed (here: the service never starts) used
/// to exit 0 with an empty report.
#[test]
fn a_bench_in_which_every_run_failed_exits_non_zero() {
    let sandbox = Sandbox::with_fixture("slowserver");
    sandbox.write(
        "afterburner.toml",
        r#"
[target]
name = "slowserver"
source = { path = "src" }
build = "make"
binaries = { server = "slowserver" }

[[target.service]]
name = "web"
start = "sh -c 'echo no; exit 3'"

[[variant]]
name = "baseline"

[[workload]]
name = "closed"
[workload.load]
driver = "http"
clients = 1
requests = 10
warmup = "0s"

[bench]
repetitions = 2
warmup = 0
metrics = ["wall"]
"#,
    );
    sandbox
        .afterburner(&["run"])
        .assert_fails_with("every run of the bench failed (2 of 2)")
        .assert_fails_with("exited before it was ready, with exit code 3");
    assert!(only_run_dir(&sandbox).join("report.md").exists());
}
