//! `afterburner profile`: a running fixture server's counters dumped twice
//! without restarting it (gcc and clang), a sampled profile of it, and the
//! errors for a process that cannot be dumped or used no CPU.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::{make_fixture, tools_or_skip, Sandbox, Served};

/// The dump shim's path, built into the sandbox's own cache.
fn shim(sandbox: &Sandbox) -> PathBuf {
    let cache = sandbox.path().join("cache");
    let run = sandbox.afterburner_with_env(&["profile", "--shim"], &[("XDG_CACHE_HOME", &cache)]);
    run.assert_ok();
    PathBuf::from(run.stdout().trim())
}

/// `afterburner profile --pid PID --dump --out SANDBOX/OUT`; that directory.
fn dump_into(sandbox: &Sandbox, pid: i32, out: &str) -> PathBuf {
    let dir = sandbox.path().join(out);
    let run = sandbox.afterburner(&[
        "profile",
        "--pid",
        &pid.to_string(),
        "--dump",
        "--out",
        dir.to_str().unwrap(),
    ]);
    run.assert_ok();
    dir
}

fn files_with(dir: &Path, extension: &str) -> Vec<PathBuf> {
    afterburner::toolchain::find_files(dir, extension)
}

/// `handle_request`'s count in a gcc dump: its ident from the build's
/// `.gcno` (which names functions), its one arc counter from `gcov-dump`.
fn gcc_count(gcno: &Path, gcda: &Path) -> u64 {
    let notes =
        String::from_utf8(Command::new("gcov-dump").arg(gcno).output().unwrap().stdout).unwrap();
    let ident = notes
        .lines()
        .find(|l| l.contains("`handle_request'"))
        .and_then(|l| l.split("ident=").nth(1))
        .and_then(|r| r.split(',').next())
        .unwrap_or_else(|| panic!("no handle_request in {notes}"))
        .to_owned();
    let data = String::from_utf8(
        Command::new("gcov-dump")
            .arg("-l")
            .arg(gcda)
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let mut lines = data
        .lines()
        .skip_while(|l| !l.contains(&format!("ident={ident},")));
    let counts = lines
        .find(|l| l.contains("COUNTERS arcs"))
        .and_then(|_| lines.next())
        .unwrap_or_else(|| panic!("no counters of ident {ident} in {data}"));
    counts
        .rsplit(':')
        .next()
        .unwrap()
        .split_whitespace()
        .map(|c| c.parse::<u64>().unwrap())
        .sum()
}

/// `handle_request`'s count in a clang raw profile (`llvm-profdata show`).
fn clang_count(profraw: &Path) -> u64 {
    let tool = afterburner::toolchain::find_llvm_profdata().unwrap();
    let out = Command::new(tool)
        .args(["show", "--all-functions", "--counts"])
        .arg(profraw)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut lines = text
        .lines()
        .skip_while(|l| !l.trim_end().ends_with(":handle_request:"));
    let counts = lines
        .find(|l| l.contains("Block counts:"))
        .unwrap_or_else(|| panic!("no handle_request in {text}"));
    counts
        .split(['[', ']'])
        .nth(1)
        .unwrap()
        .split(',')
        .map(|c| c.trim().parse::<u64>().unwrap())
        .sum()
}

/// Build the fixture instrumented by `cc`, serve it with the shim, send 3
/// then 5 requests with a dump after each; the two dumps' directories.
fn dumped_twice(sandbox: &Sandbox, cc: &str, flags: &str, ldflags: &str) -> (PathBuf, PathBuf) {
    let shim = shim(sandbox);
    let binary = make_fixture(
        sandbox,
        "dumpserver",
        &[
            ("CC", cc),
            ("CFLAGS", &format!("-O2 -g {flags}")),
            ("LDFLAGS", ldflags),
        ],
    );
    let dumps = sandbox.path().join("dumps");
    std::fs::create_dir_all(&dumps).unwrap();
    let exit_profile = sandbox.path().join("exit-%p.profraw");
    let mut served = Served::start(
        &binary,
        &sandbox.path().join("src"),
        &[
            ("LD_PRELOAD", &shim),
            ("AFTERBURNER_DUMP_DIR", &dumps),
            ("LLVM_PROFILE_FILE", &exit_profile),
        ],
    );
    assert_eq!(served.send("hit", 3), "ok 3");
    let first = dump_into(sandbox, served.pid(), "first");
    assert_eq!(served.send("hit", 5), "ok 8");
    let second = dump_into(sandbox, served.pid(), "second");
    // Never restarted: it goes on counting where it was.
    assert!(served.running());
    assert_eq!(served.send("hit", 1), "ok 9");
    (first, second)
}

#[test]
fn a_gcc_instrumented_server_dumps_twice_and_the_dumps_differ_by_the_requests_between() {
    if !tools_or_skip(&["gcc", "gcov-dump"]) {
        return;
    }
    let sandbox = Sandbox::with_fixture("dumpserver");
    let (first, second) = dumped_twice(
        &sandbox,
        "gcc",
        "-fprofile-generate -ftest-coverage",
        "-fprofile-generate -Wl,-u,__gcov_dump -Wl,-u,__gcov_reset",
    );
    let gcno = files_with(&sandbox.path().join("src"), "gcno");
    assert_eq!(gcno.len(), 1, "{gcno:?}");
    let (a, b) = (files_with(&first, "gcda"), files_with(&second, "gcda"));
    assert_eq!((a.len(), b.len()), (1, 1), "{a:?} {b:?}");
    assert_eq!(gcc_count(&gcno[0], &a[0]), 3);
    assert_eq!(gcc_count(&gcno[0], &b[0]), 5);
}

#[test]
fn a_clang_instrumented_server_dumps_twice_and_the_dumps_differ_by_the_requests_between() {
    if !tools_or_skip(&["clang"]) || afterburner::toolchain::find_llvm_profdata().is_err() {
        eprintln!("SKIP: clang or llvm-profdata missing");
        return;
    }
    let sandbox = Sandbox::with_fixture("dumpserver");
    let (first, second) = dumped_twice(
        &sandbox,
        "clang",
        "-fprofile-generate",
        "-fprofile-generate",
    );
    let (a, b) = (
        files_with(&first, "profraw"),
        files_with(&second, "profraw"),
    );
    assert_eq!((a.len(), b.len()), (1, 1), "{a:?} {b:?}");
    assert_eq!(clang_count(&a[0]), 3);
    assert_eq!(clang_count(&b[0]), 5);
}

#[test]
fn a_sampled_profile_of_a_running_server_holds_its_hot_function() {
    if !tools_or_skip(&["gcc", "perf"]) || !crate::support::perf_timer_or_skip() {
        return;
    }
    let sandbox = Sandbox::with_fixture("dumpserver");
    let binary = make_fixture(&sandbox, "dumpserver", &[("CFLAGS", "-O2 -g")]);
    let mut served = Served::start(&binary, &sandbox.path().join("src"), &[]);
    let out = sandbox.path().join("running.perf.data");
    let pid = served.pid();
    let answer = std::thread::scope(|scope| {
        let burning = scope.spawn(|| served.send("burn 6000", 1));
        let run = sandbox.afterburner(&[
            "profile",
            "--pid",
            &pid.to_string(),
            "--duration",
            "2s",
            "--out",
            out.to_str().unwrap(),
        ]);
        run.assert_ok();
        assert!(
            run.stdout().contains("samples of process"),
            "{}",
            run.stdout()
        );
        burning.join().unwrap()
    });
    assert_eq!(answer, "burnt");
    assert!(served.running());
    let report = Command::new("perf")
        .args(["report", "--stdio", "--sort", "sym", "-i"])
        .arg(&out)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&report.stdout);
    let top = text
        .lines()
        .find(|l| !l.starts_with('#') && !l.trim().is_empty())
        .unwrap_or_default();
    assert!(
        top.contains("hot_loop"),
        "the top symbol is not hot_loop:\n{text}"
    );
}

#[test]
fn a_process_without_a_profiling_runtime_or_cpu_gets_a_clear_error_naming_it() {
    if !tools_or_skip(&["gcc"]) {
        return;
    }
    let sandbox = Sandbox::with_fixture("dumpserver");
    let shim = shim(&sandbox);
    let binary = make_fixture(&sandbox, "dumpserver", &[("CFLAGS", "-O2 -g")]);
    let dumps = sandbox.path().join("dumps");
    std::fs::create_dir_all(&dumps).unwrap();
    let src = sandbox.path().join("src");
    let mut plain = Served::start(
        &binary,
        &src,
        &[("LD_PRELOAD", &shim), ("AFTERBURNER_DUMP_DIR", &dumps)],
    );
    let pid = plain.pid().to_string();
    sandbox
        .afterburner(&["profile", "--pid", &pid, "--dump", "--out", "d"])
        .assert_fails_with(&format!("process {pid} ("))
        .assert_fails_with("has no profiling runtime to dump");
    let mut bare = Served::start(&binary, &src, &[]);
    let bare_pid = bare.pid().to_string();
    sandbox
        .afterburner(&["profile", "--pid", &bare_pid, "--dump", "--out", "d"])
        .assert_fails_with(&format!("process {bare_pid} ("))
        .assert_fails_with("was not started with afterburner's dump shim");
    // No signal reached either: both still serve.
    assert!(plain.running() && bare.running());
    assert_eq!(bare.send("hit", 1), "ok 1");
    if crate::support::perf_timer_or_skip() {
        sandbox
            .afterburner(&[
                "profile",
                "--pid",
                &bare_pid,
                "--duration",
                "300ms",
                "--out",
                "idle.data",
            ])
            .assert_fails_with(&format!("the recording of process {bare_pid} ("))
            .assert_fails_with("holds no samples");
    }
}

/// A gcc PGO variant whose service dies of SIGKILL (so it never writes its
/// counters at exit) trained with `train_stop`.
const KILLED_SERVICE: &str = r#"
[target]
name = "dumpserver"
source = { path = "src" }
build = "make"
binaries = { server = "dumpserver" }

[[target.service]]
name = "srv"
start = "{bin.server} {port}"
ready = "log:ready on port"
stop_signal = "KILL"

[[variant]]
name = "pgo"
optimize = ["pgo"]
train_stop = "TRAIN_STOP"

[[workload]]
name = "hits"
run = "bash -c 'exec 3<>/dev/tcp/127.0.0.1/{port.srv}; for i in $(seq 7); do echo hit >&3; read -r l <&3; done'"
"#;

#[test]
fn training_with_train_stop_dump_takes_the_counters_of_a_service_that_is_killed() {
    if !tools_or_skip(&["gcc", "bash"]) {
        return;
    }
    let sandbox = Sandbox::with_fixture("dumpserver");
    sandbox.write(
        "afterburner.toml",
        &KILLED_SERVICE.replace("TRAIN_STOP", "dump"),
    );
    sandbox.afterburner(&["train"]).assert_ok();
    let raw = sandbox.path().join(".afterburner/variants/pgo/profile");
    let dumped = files_with(&raw, "gcda");
    assert!(
        dumped
            .iter()
            .any(|p| p.to_string_lossy().contains("/raw/hits/")),
        "no .gcda of workload hits: {dumped:?}"
    );
    // Stopped the usual way, the killed service leaves no profile.
    let stopped = Sandbox::with_fixture("dumpserver");
    stopped.write(
        "afterburner.toml",
        &KILLED_SERVICE.replace("TRAIN_STOP", "stop"),
    );
    stopped.afterburner(&["train"]).assert_fails_with("gcda");
}
