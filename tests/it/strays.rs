//! No strays: the services and workloads afterburner starts die with it,
//! even when it is killed with SIGKILL and cleans nothing up, and the files
//! a service writes stay in a directory of its own.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::support::{exclusive, Sandbox};

/// Debian's redis-server as the service of two prebuilt variants, loaded
/// for 2 s per run.
const REDIS: &str = r#"
[target]
name = "redis"
source = { path = "src" }
build = "make"
binaries = { redis = "slowserver" }

[[target.service]]
name = "db"
start = "{bin.redis} --port {port} --bind 127.0.0.1 --save '' --appendonly no"
ready = "redis"

[[variant]]
name = "debian"
prebuilt = { redis = "/usr/bin/redis-server" }

[[variant]]
name = "again"
prebuilt = { redis = "/usr/bin/redis-server" }

[[workload]]
name = "set"
[workload.load]
driver = "redis"
request = "SET key:{k} value-{k}"
vars = { k = "seq:1:1000" }
clients = 1
duration = "2s"
warmup = "0s"

[bench]
repetitions = 3
warmup = 0
metrics = ["wall"]
"#;

/// The pids whose parent is `parent`.
fn children_of(parent: u32) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // pid (comm) state ppid …; comm may hold spaces, so split after ')'.
        let Some((_, rest)) = stat.rsplit_once(')') else {
            continue;
        };
        let ppid = rest.split_whitespace().nth(1);
        if ppid == Some(&parent.to_string()) {
            found.push(entry.file_name().to_string_lossy().parse().unwrap());
        }
    }
    found
}

/// Whether `pid` is still a live process (a zombie waiting for its reaper
/// is dead).
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit_once(')')
            .is_some_and(|(_, rest)| !rest.trim_start().starts_with(['Z', 'X']))
    })
}

/// afterburner killed with SIGKILL mid-bench (no handler runs, nothing is
/// cleaned up) used to leave the run's redis-server running for good.
#[test]
fn sigkill_mid_bench_leaves_no_service_running() {
    let _serial = exclusive();
    if !Path::new("/usr/bin/redis-server").exists() {
        crate::support::skip(crate::support::Lack::Installed(
            "/usr/bin/redis-server is not installed (.ci/run installs it)",
        ));
        return;
    }
    let sandbox = Sandbox::with_fixture("slowserver");
    sandbox.write("afterburner.toml", REDIS);
    sandbox.afterburner(&["build"]).assert_ok();
    let mut bench = std::process::Command::new(env!("CARGO_BIN_EXE_afterburner"))
        .arg("bench")
        .current_dir(sandbox.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_mins(1);
    let services = loop {
        let redis: Vec<u32> = children_of(bench.id())
            .into_iter()
            .filter(|pid| {
                std::fs::read_link(format!("/proc/{pid}/exe")).is_ok_and(|exe| {
                    exe.ends_with("redis-check-rdb") || exe.ends_with("redis-server")
                })
            })
            .collect();
        if !redis.is_empty() {
            break redis;
        }
        assert!(Instant::now() < deadline, "no redis-server started");
        std::thread::sleep(Duration::from_millis(20));
    };
    // Mid-run: the load is driving it.
    std::thread::sleep(Duration::from_millis(500));
    bench.kill().unwrap();
    bench.wait().unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while services.iter().any(|&pid| alive(pid)) {
        if Instant::now() > deadline {
            for &pid in &services {
                // SAFETY: kill has no memory-safety preconditions.
                unsafe { libc::kill(libc::pid_t::try_from(pid).unwrap(), libc::SIGKILL) };
            }
            panic!("redis-server {services:?} outlived afterburner");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Redis saves `dump.rdb` in its working directory when stopped; that used
/// to be the experiment's directory (where a `path` source's fingerprint
/// would see it, and the next run's redis would load it).
#[test]
fn a_service_writes_in_a_directory_of_its_own_per_run() {
    let _serial = exclusive();
    if !Path::new("/usr/bin/redis-server").exists() {
        crate::support::skip(crate::support::Lack::Installed(
            "/usr/bin/redis-server is not installed (.ci/run installs it)",
        ));
        return;
    }
    let sandbox = Sandbox::with_fixture("slowserver");
    let text = REDIS
        .replace(" --save '' --appendonly no", "")
        .replace("duration = \"2s\"", "requests = 200")
        .replace("repetitions = 3", "repetitions = 1");
    sandbox.write("afterburner.toml", &text);
    sandbox.afterburner(&["run"]).assert_ok();
    assert!(!sandbox.path().join("dump.rdb").exists());
    assert!(!sandbox.path().join("src/dump.rdb").exists());
    let homes = crate::support::only_run_dir(&sandbox).join("services");
    let mut dumps: Vec<String> = std::fs::read_dir(&homes)
        .unwrap()
        .flatten()
        .filter(|home| home.path().join("dump.rdb").is_file())
        .map(|home| home.file_name().to_string_lossy().into_owned())
        .collect();
    dumps.sort();
    assert_eq!(dumps, ["r000-set-again-time-db", "r000-set-debian-time-db"]);
}

/// Pids of processes whose command line is exactly `words`.
fn processes(words: &[&str]) -> Vec<u32> {
    let wanted: Vec<u8> = words
        .iter()
        .flat_map(|w| [w.as_bytes(), b"\0"].concat())
        .collect();
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter(|e| std::fs::read(e.path().join("cmdline")).is_ok_and(|c| c == wanted))
        .filter_map(|e| e.file_name().to_string_lossy().parse().ok())
        .collect()
}

/// A workload's own child (a shell's background job) is out of reach of
/// `PR_SET_PDEATHSIG`, which only the direct child gets; the guardian kills
/// its process group when afterburner is killed with SIGKILL.
#[test]
fn sigkill_mid_run_leaves_no_grandchild_running() {
    let sandbox = Sandbox::with_fixture("hotpath");
    sandbox.write(
        "afterburner.toml",
        r#"
[target]
name = "hotpath"
source = { path = "src" }
build = "make"
binaries = { hotpath = "hotpath" }

[[workload]]
name = "job"
run = "sh -c 'sleep 313.25 & wait'"

[bench]
repetitions = 1
warmup = 0
metrics = ["wall"]
"#,
    );
    sandbox.afterburner(&["build"]).assert_ok();
    let mut bench = std::process::Command::new(env!("CARGO_BIN_EXE_afterburner"))
        .arg("bench")
        .current_dir(sandbox.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_mins(1);
    let job = loop {
        let found = processes(&["sleep", "313.25"]);
        if !found.is_empty() {
            break found;
        }
        assert!(Instant::now() < deadline, "the workload never started");
        std::thread::sleep(Duration::from_millis(20));
    };
    bench.kill().unwrap();
    bench.wait().unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while job.iter().any(|&pid| alive(pid)) {
        if Instant::now() > deadline {
            for &pid in &job {
                // SAFETY: kill has no memory-safety preconditions.
                unsafe { libc::kill(libc::pid_t::try_from(pid).unwrap(), libc::SIGKILL) };
            }
            panic!("the workload's background job {job:?} outlived afterburner");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
