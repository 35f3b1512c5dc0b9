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

/// Debian's PostgreSQL refuses to run as root: `user = "postgres"` runs
/// its setup (initdb into its state directory) and the server as that
/// user, and the driver's point selects reach it.
#[test]
fn a_service_runs_as_its_own_user_with_a_state_directory_it_owns() {
    let _serial = crate::support::exclusive();
    let Some(bin) = std::fs::read_dir("/usr/lib/postgresql")
        .ok()
        .and_then(|mut d| d.next())
        .and_then(Result::ok)
        .map(|e| e.path().join("bin"))
        .filter(|b| b.join("postgres").is_file())
    else {
        crate::support::skip(crate::support::Lack::Installed(
            "Debian's postgresql is not installed (.ci/run installs it)",
        ));
        return;
    };
    if afterburner::process::lookup_user("postgres").is_none()
        || !afterburner::toolchain::tools::is_root()
    {
        crate::support::skip(crate::support::Lack::Installed(
            "needs root and the postgres user (.ci/run has both)",
        ));
        return;
    }
    let sandbox = Sandbox::with_fixture("slowserver");
    // The user must be able to reach its state directory below the sandbox.
    std::fs::set_permissions(
        sandbox.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let text = format!(
        r#"
[target]
name = "pg"
source = {{ path = "src" }}
build = "make"
binaries = {{ postgres = "slowserver", initdb = "slowserver" }}

[[target.service]]
name = "db"
user = "postgres"
setup = "{{bin.initdb}} -D {{state}} -A trust -U postgres --no-sync"
start = "{{bin.postgres}} -D {{state}} -p {{port}} -k {{state}} -c listen_addresses=127.0.0.1 -c fsync=off"
ready = "log:ready to accept connections"
# Fast shutdown: SIGTERM (smart) reaches every process of its group and
# leaves a postmaster.pid the next run's server trips over.
stop_signal = "INT"

[[variant]]
name = "debian"
prebuilt = {{ postgres = "{bin}/postgres", initdb = "{bin}/initdb" }}

[[workload]]
name = "select"
[workload.load]
driver = "postgres"
address = "postgres://postgres@127.0.0.1:{{port}}/postgres"
request = "SELECT 1"
clients = 2
requests = 200

[bench]
repetitions = 2
warmup = 0
metrics = ["wall"]
"#,
        bin = bin.display()
    );
    sandbox.write("afterburner.toml", &text);
    sandbox.afterburner(&["bench"]).assert_ok();
    let run_dir = only_run_dir(&sandbox);
    let raw = std::fs::read_to_string(run_dir.join("raw.jsonl")).unwrap();
    assert!(raw.lines().all(|l| l.contains("\"success\":true")), "{raw}");
    let state = run_dir.join("state/debian/db");
    let owner = std::os::unix::fs::MetadataExt::uid(&std::fs::metadata(&state).unwrap());
    assert_eq!(
        Some(owner),
        afterburner::process::lookup_user("postgres").map(|(u, _)| u)
    );
    assert!(
        state.join("PG_VERSION").is_file(),
        "initdb ran in {}",
        state.display()
    );
}

/// Two variants of one program, one with `vm.swappiness` lowered (seed
/// 002 compares THP always against never the same way); the workload reads
/// the setting back.
const SYSTEM: &str = r#"
[target]
name = "hotpath"
source = { path = "src" }
build = "make"
binaries = { hotpath = "hotpath" }

[[variant]]
name = "plain"

[[variant]]
name = "low"
system = { "vm.swappiness" = 17 }

[[workload]]
name = "read"
run = "sh -c 'cat /proc/sys/vm/swappiness; sleep {params.nap}'"
figures = [{ name = "swappiness", regex = "^([0-9]+)" }]

[params]
nap = 0

[bench]
repetitions = 2
warmup = 0
metrics = ["wall"]
"#;

fn swappiness() -> Option<String> {
    std::fs::read_to_string("/proc/sys/vm/swappiness")
        .ok()
        .map(|s| s.trim().to_owned())
}

/// Whether this machine lets the tests change a sysctl (root, and a
/// writable /proc/sys: not in every container).
fn sysctl_writable() -> bool {
    let Some(now) = swappiness() else {
        return false;
    };
    afterburner::toolchain::tools::is_root()
        && std::fs::write("/proc/sys/vm/swappiness", &now).is_ok()
}

#[test]
fn a_system_setting_holds_during_its_variants_runs_and_is_put_back() {
    let _serial = crate::support::exclusive();
    if !sysctl_writable() {
        crate::support::skip(crate::support::Lack::Machine(
            "/proc/sys/vm/swappiness is not writable here (root on a VM is; .ci/run is)",
        ));
        return;
    }
    let before = swappiness().unwrap();
    let sandbox = Sandbox::with_fixture("hotpath");
    sandbox.write("afterburner.toml", SYSTEM);
    sandbox.afterburner(&["run"]).assert_ok();
    assert_eq!(swappiness().unwrap(), before, "put back after the bench");
    let results = read_json(&only_run_dir(&sandbox).join("results.json"));
    let seen = |variant: &str| {
        results["measurements"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["variant"] == variant && m["metric"]["name"] == "swappiness")
            .unwrap()["summary"]["mean"]
            .as_f64()
            .unwrap()
    };
    // Whole numbers, read back exactly.
    assert_eq!(seen("low").to_string(), "17");
    assert_eq!(seen("plain").to_string(), before);
    assert_eq!(results["variants"][1]["system"]["vm.swappiness"], "17");
}

#[test]
fn a_system_setting_is_put_back_after_ctrl_c() {
    let _serial = crate::support::exclusive();
    if !sysctl_writable() {
        crate::support::skip(crate::support::Lack::Machine(
            "/proc/sys/vm/swappiness is not writable here",
        ));
        return;
    }
    let before = swappiness().unwrap();
    let sandbox = Sandbox::with_fixture("hotpath");
    sandbox.write(
        "afterburner.toml",
        &SYSTEM.replace("nap = 0", "nap = 30").replace(
            "name = \"plain\"\n",
            "name = \"plain\"\nsystem = { \"vm.swappiness\" = 17 }\n",
        ),
    );
    sandbox.afterburner(&["build"]).assert_ok();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_afterburner"))
        .arg("bench")
        .current_dir(sandbox.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_mins(1);
    while swappiness().as_deref() != Some("17") {
        assert!(
            std::time::Instant::now() < deadline,
            "the setting never took"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let pid = libc::pid_t::try_from(child.id()).unwrap();
    // SAFETY: kill has no memory-safety preconditions.
    unsafe { libc::kill(pid, libc::SIGINT) };
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    assert_eq!(swappiness().unwrap(), before, "put back after Ctrl-C");
}

#[test]
fn a_system_setting_the_kernel_lacks_is_refused_with_its_line() {
    let sandbox = Sandbox::with_fixture("hotpath");
    sandbox.write(
        "afterburner.toml",
        &SYSTEM.replace("vm.swappiness", "vm.no_such_knob"),
    );
    sandbox.afterburner(&["build"]).assert_fails_with(
        "afterburner.toml:13: system setting `vm.no_such_knob` = \"17\" cannot be applied",
    );
}
