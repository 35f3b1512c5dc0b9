//! perf around services: `perf stat` counting a service writes its counts
//! when afterburner stops the service (the stop signal goes to the
//! service, never to perf), and sampled training attaches `perf record` to
//! each service over the workload's window only, unless the service asks
//! for its whole life.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use afterburner::experiment::Bindings;

use crate::support::Sandbox;

const COUNTED: &str = r#"
[target]
name = "slowserver"
source = { path = "src" }
build = "make"
binaries = { server = "slowserver" }

[[target.service]]
name = "web"
start = "{bin.server} {port} 0"
ready = "tcp"

[[variant]]
name = "baseline"

[[workload]]
name = "w"
run = "true"
"#;

fn perf_may(args: &[&str]) -> bool {
    Command::new("perf")
        .args(args)
        .output()
        .is_ok_and(|o| o.status.success())
}

fn make(dir: &Path) {
    let out = Command::new("make").current_dir(dir).output().unwrap();
    assert!(out.status.success(), "{out:?}");
}

/// Regression: on machines with hardware counters a service counted by
/// `perf stat` lost its count, since the stop signal went to the process
/// group afterburner started, `perf stat` included, which a SIGTERM kills
/// before it writes. Here (no PMU) the same words count `task-clock`.
#[test]
fn a_service_under_perf_stat_is_stopped_and_perf_writes_its_count() {
    if !perf_may(&["stat", "-e", "task-clock", "-o", "/dev/null", "--", "true"]) {
        crate::support::skip(crate::support::Lack::Machine(
            "perf stat cannot count task-clock here",
        ));
        return;
    }
    let sandbox = Sandbox::with_fixture("slowserver");
    make(&sandbox.path().join("src"));
    let file = sandbox.write("afterburner.toml", COUNTED);
    let e = afterburner::experiment::load_str(&file, COUNTED, true).unwrap();
    let mut bindings = Bindings::default();
    bindings
        .binaries
        .insert("server".into(), sandbox.path().join("src/slowserver"));
    bindings.ports = afterburner::service::ports(&e.target.services).unwrap();
    let logs = sandbox.path().join("logs");
    std::fs::create_dir_all(&logs).unwrap();
    let out = sandbox.path().join("counter");
    let prefix = afterburner::measure::instructions::perf_stat_prefix("task-clock", &out);
    let services = afterburner::service::start(
        &e.target.services,
        &bindings,
        &BTreeMap::new(),
        &logs,
        "counted",
        &|_| Some(prefix.as_slice()),
        None,
    )
    .unwrap();
    let usages = services.stop().unwrap();
    // perf stat exits with its command's status: the server's clean exit.
    assert_eq!(usages[0].exit, "exit code 0", "{usages:?}");
    let text = std::fs::read_to_string(&out).unwrap();
    let count = text
        .lines()
        .find(|l| l.contains("task-clock"))
        .and_then(|l| l.split(',').next()?.trim().parse::<f64>().ok());
    assert!(
        count.is_some_and(|c| c > 0.0),
        "no task-clock count in:\n{text}"
    );
    let log = std::fs::read_to_string(logs.join("counted-web.log")).unwrap();
    assert!(
        log.contains("served 0 requests"),
        "the server did not stop cleanly:\n{log}"
    );
}

const WARM: &str = r#"
[target]
name = "warmserver"
source = { path = "src" }
build = "make"
binaries = { server = "warmserver" }
compiler = "clang"

[[target.service]]
name = "web"
start = "{bin.server} {port}"
ready = "log:ready on port"
RECORD

[[variant]]
name = "baseline"

[[variant]]
name = "afdo"
optimize = ["autofdo"]
sample_event = "cpu-clock"

[[workload]]
name = "serve"
[workload.load]
driver = "http"
clients = 2
duration = "1s"
warmup = "200ms"
"#;

/// The functions sampled in a perf recording.
fn sampled_symbols(recording: &Path) -> String {
    let out = Command::new("perf")
        .args(["script", "-F", "ip,sym", "-i"])
        .arg(recording)
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The merged AutoFDO profile of the `afdo` variant, as llvm-profdata
/// shows it.
fn merged_profile(sandbox: &Sandbox) -> String {
    let dir = sandbox
        .path()
        .join(".afterburner/variants/afdo/profile/autofdo");
    let merged: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".afdo"))
        .collect();
    assert_eq!(merged.len(), 1, "{merged:?}");
    let tool = afterburner::toolchain::find_llvm_profdata().unwrap();
    let out = Command::new(tool)
        .args(["show", "--sample"])
        .arg(&merged[0])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A service is recorded over the workload's window by default: perf
/// attaches (`perf record -p`, the forking server's connection children
/// included) once it is ready and the load's warmup is done, so the
/// 0.5 s `startup_burn` before it listens is in neither the recording nor
/// the profile, while the requests' `request_burn` is. `record = "life"`
/// records it from start to stop: `startup_burn` is there.
#[test]
fn sampled_training_records_a_service_over_the_window_unless_it_asks_for_its_life() {
    if !perf_may(&[
        "record",
        "-q",
        "-e",
        "cpu-clock",
        "-o",
        "/dev/null",
        "--",
        "true",
    ]) {
        crate::support::skip(crate::support::Lack::Machine(
            "perf may not record cpu-clock here",
        ));
        return;
    }
    let sandbox = Sandbox::with_fixture("warmserver");
    sandbox.write("afterburner.toml", &WARM.replace("RECORD", ""));
    let trained = sandbox.afterburner(&["train"]);
    trained.assert_ok();
    let raw = sandbox
        .path()
        .join(".afterburner/variants/afdo/profile/autofdo/raw/serve");
    let mut recordings: Vec<_> = std::fs::read_dir(&raw)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    recordings.sort();
    assert_eq!(
        recordings,
        ["web.cost.json", "web.perfdata"],
        "one recording per service, and what it cost"
    );
    // The cost: the window's length, its samples and perf's own CPU time,
    // said as training goes.
    let cost = crate::support::read_json(&raw.join("web.cost.json"));
    assert!(cost["seconds"].as_f64().unwrap() > 0.0, "{cost:#}");
    assert!(cost["samples"].as_u64().unwrap() > 0, "{cost:#}");
    assert!(cost["perf_cpu_seconds"].as_f64().is_some(), "{cost:#}");
    let said = format!("{}{}", trained.stdout(), trained.stderr());
    assert!(said.contains("recorded web over `serve`: "), "{said}");
    let symbols = sampled_symbols(&raw.join("web.perfdata"));
    assert!(symbols.contains("request_burn"), "{symbols}");
    assert!(!symbols.contains("startup_burn"), "{symbols}");
    let profile = merged_profile(&sandbox);
    assert!(profile.contains("request_burn"), "{profile}");
    assert!(!profile.contains("startup_burn"), "{profile}");

    sandbox.write(
        "afterburner.toml",
        &WARM.replace("RECORD", "record = \"life\""),
    );
    sandbox.afterburner(&["train"]).assert_ok();
    let life: String = std::fs::read_dir(&raw)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "perfdata"))
        .map(|p| sampled_symbols(&p))
        .collect();
    assert!(life.contains("startup_burn"), "{life}");
    assert!(merged_profile(&sandbox).contains("startup_burn"));
}

/// gcc's round converts the window's recording itself (`afdo_ip`): perf
/// attached to a running, forking server, so its mappings were synthesized
/// and its connection children inherit them; the profile gcc reads names
/// `request_burn` and not `startup_burn`.
#[test]
fn gcc_autofdo_places_the_samples_of_a_server_perf_attached_to() {
    if !perf_may(&[
        "record",
        "-q",
        "-e",
        "cpu-clock",
        "-o",
        "/dev/null",
        "--",
        "true",
    ]) {
        crate::support::skip(crate::support::Lack::Machine(
            "perf may not record cpu-clock here",
        ));
        return;
    }
    let sandbox = Sandbox::with_fixture("warmserver");
    sandbox.write(
        "afterburner.toml",
        &WARM
            .replace("RECORD", "")
            .replace("compiler = \"clang\"", "compiler = \"gcc\""),
    );
    sandbox.afterburner(&["train"]).assert_ok();
    let converted = sandbox
        .path()
        .join(".afterburner/variants/afdo/profile/gcc-autofdo/converted/serve");
    let text: String = std::fs::read_dir(&converted)
        .unwrap()
        .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap())
        .collect();
    assert!(text.contains("request_burn:"), "{text}");
    assert!(!text.contains("startup_burn"), "{text}");
}

/// An unknown `record` is refused with the file's line and what to use.
#[test]
fn an_unknown_record_is_refused_with_its_line() {
    let sandbox = Sandbox::with_fixture("warmserver");
    sandbox.write(
        "afterburner.toml",
        &WARM.replace("RECORD", "record = \"always\""),
    );
    sandbox
        .afterburner(&["build"])
        .assert_fails_with("afterburner.toml:13")
        .assert_fails_with("unknown record `always`")
        .assert_fails_with("\"life\" (start to stop");
}
