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

/// The sum of `function`'s arc counters in a gcc dump: its ident from the
/// build's `.gcno` (which names functions), its counters from `gcov-dump`
/// (`handle_request` has one: its calls).
fn gcc_count(gcno: &Path, gcda: &Path, function: &str) -> u64 {
    let notes =
        String::from_utf8(Command::new("gcov-dump").arg(gcno).output().unwrap().stdout).unwrap();
    let ident = notes
        .lines()
        .find(|l| l.contains(&format!("`{function}'")))
        .and_then(|l| l.split("ident=").nth(1))
        .and_then(|r| r.split(',').next())
        .unwrap_or_else(|| panic!("no {function} in {notes}"))
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

/// The sum of `function`'s block counts in a clang raw profile
/// (`llvm-profdata show`; `handle_request` has one block: its calls).
fn clang_count(profraw: &Path, function: &str) -> u64 {
    let tool = afterburner::toolchain::find_llvm_profdata().unwrap();
    let out = Command::new(tool)
        .args(["show", "--all-functions", "--counts"])
        .arg(profraw)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut lines = text
        .lines()
        .skip_while(|l| !l.trim_end().ends_with(&format!(":{function}:")));
    let counts = lines
        .find(|l| l.contains("Block counts:"))
        .unwrap_or_else(|| panic!("no {function} in {text}"));
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
    assert_eq!(gcc_count(&gcno[0], &a[0], "handle_request"), 3);
    assert_eq!(gcc_count(&gcno[0], &b[0], "handle_request"), 5);
}

#[test]
fn a_clang_instrumented_server_dumps_twice_and_the_dumps_differ_by_the_requests_between() {
    if !tools_or_skip(&["clang"]) {
        return;
    }
    if let Err(why) = afterburner::toolchain::find_llvm_profdata() {
        crate::support::skip(crate::support::Lack::Installed(&format!("{why:#}")));
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
    assert_eq!(clang_count(&a[0], "handle_request"), 3);
    assert_eq!(clang_count(&b[0], "handle_request"), 5);
}

/// `n` HTTP requests on `stream` (warmserver keeps the connection), each
/// answered before the next is sent.
fn http_requests(stream: &mut std::net::TcpStream, n: usize) {
    use std::io::{Read as _, Write as _};
    const ANSWER: &[u8] =
        b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Type: text/plain\r\n\r\nok";
    for _ in 0..n {
        stream
            .write_all(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            .unwrap();
        let mut answer = vec![0; ANSWER.len()];
        stream.read_exact(&mut answer).unwrap();
        assert_eq!(answer, ANSWER);
    }
}

/// The one worker a forking server has while one connection is open (the
/// readiness probe's worker exits on its own).
fn only_worker(served: &Served) -> i32 {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let children = served.children();
        if children.len() == 1 {
            return children[0];
        }
        assert!(
            std::time::Instant::now() < deadline,
            "not one worker: {children:?}"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// warmserver (a child per connection, forked long after the shim started)
/// built instrumented by `cc`: 3 then 5 requests on one connection, its
/// worker dumped after each, then its parent; `count(sandbox, dump,
/// function)` reads a dump. Regression: the shim's thread lived in the parent only, and a
/// worker's signal went down the parent's pipe, so a worker could not dump.
fn forked_worker_dumps_its_own_counters(
    cc: &str,
    flags: &str,
    ldflags: &str,
    count: &dyn Fn(&Sandbox, &Path, &str) -> u64,
) {
    let sandbox = Sandbox::with_fixture("warmserver");
    let shim = shim(&sandbox);
    let binary = make_fixture(
        &sandbox,
        "warmserver",
        &[
            ("CC", cc),
            ("CFLAGS", &format!("-O1 -g {flags}")),
            ("LDFLAGS", ldflags),
        ],
    );
    let dumps = sandbox.path().join("dumps");
    std::fs::create_dir_all(&dumps).unwrap();
    let served = Served::start(
        &binary,
        &sandbox.path().join("src"),
        &[
            ("LD_PRELOAD", &shim),
            ("AFTERBURNER_DUMP_DIR", &dumps),
            ("LLVM_PROFILE_FILE", &sandbox.path().join("exit-%p.profraw")),
        ],
    );
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", served.port)).unwrap();
    stream
        .set_read_timeout(Some(std::time::Duration::from_secs(30)))
        .unwrap();
    http_requests(&mut stream, 3);
    let worker = only_worker(&served);
    let first = dump_into(&sandbox, worker, "first");
    http_requests(&mut stream, 5);
    let second = dump_into(&sandbox, worker, "second");
    let parent = dump_into(&sandbox, served.pid(), "parent");
    // The same worker served all 8 requests and goes on serving.
    http_requests(&mut stream, 1);
    assert_eq!(served.children(), vec![worker]);
    let (a, b, p) = (
        count(&sandbox, &first, "request_burn"),
        count(&sandbox, &second, "request_burn"),
        count(&sandbox, &parent, "request_burn"),
    );
    // Each request runs request_burn's blocks alike: 3 and 5 requests.
    assert!(a > 0 && a * 5 == b * 3, "request_burn: {a} then {b}");
    assert_eq!(p, 0, "the parent served no request");
    // The start-up ran before the fork: the parent's, not counted twice.
    assert!(count(&sandbox, &parent, "startup_burn") > 0);
    assert_eq!(count(&sandbox, &first, "startup_burn"), 0);
}

#[test]
fn a_forked_worker_of_a_gcc_instrumented_server_dumps_its_own_counters() {
    if !tools_or_skip(&["gcc", "gcov-dump"]) {
        return;
    }
    forked_worker_dumps_its_own_counters(
        "gcc",
        "-fprofile-generate -ftest-coverage",
        "-fprofile-generate -Wl,-u,__gcov_dump -Wl,-u,__gcov_reset",
        &|sandbox, dump, f| {
            let (gcno, gcda) = (
                files_with(&sandbox.path().join("src"), "gcno"),
                files_with(dump, "gcda"),
            );
            assert_eq!((gcno.len(), gcda.len()), (1, 1), "{gcno:?} {gcda:?}");
            gcc_count(&gcno[0], &gcda[0], f)
        },
    );
}

#[test]
fn a_forked_worker_of_a_clang_instrumented_server_dumps_its_own_counters() {
    if !tools_or_skip(&["clang"]) {
        return;
    }
    if let Err(why) = afterburner::toolchain::find_llvm_profdata() {
        crate::support::skip(crate::support::Lack::Installed(&format!("{why:#}")));
        return;
    }
    forked_worker_dumps_its_own_counters(
        "clang",
        "-fprofile-generate",
        "-fprofile-generate",
        &|_, dump, f| {
            let raw = files_with(dump, "profraw");
            assert_eq!(raw.len(), 1, "{raw:?}");
            clang_count(&raw[0], f)
        },
    );
}

/// `afterburner profile --shim | head -1` and the like: the reader has gone
/// before the command prints. Regression: `println!` panicked ("failed
/// printing to stdout: Broken pipe") and the command exited with 101.
#[test]
fn a_command_whose_reader_hung_up_ends_quietly_with_status_0() {
    if !tools_or_skip(&["cc"]) {
        return;
    }
    let sandbox = Sandbox::with_fixture("dumpserver");
    let cache = sandbox.path().join("cache");
    for args in [&["profile", "--shim"][..], &["schema"], &["env"]] {
        let run = sandbox.afterburner_into_closed_pipe(args, &[("XDG_CACHE_HOME", &cache)]);
        run.assert_ok();
        assert_eq!(run.stderr(), "", "afterburner {args:?} said something");
    }
    // The shim was built all the same.
    assert!(shim(&sandbox).starts_with(&cache));
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
        // What the recording cost: its sample rate and perf's own CPU.
        for says in [
            format!("process {pid}: "),
            "samples in 2.0 s (".to_owned(),
            "s of CPU (".to_owned(),
        ] {
            assert!(run.stdout().contains(&says), "{says}: {}", run.stdout());
        }
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

#[test]
fn training_with_train_stop_dump_adds_the_counters_of_forked_workers_that_exited() {
    if !tools_or_skip(&["gcc", "bash", "gcov-tool", "gcov-dump"]) {
        return;
    }
    // Each connection is served by a child that writes its counters as it
    // exits: the first one's .gcda is in the profile directory before the
    // parent dumps. Regression: that was "exists already", training failed.
    let sandbox = Sandbox::with_fixture("dumpserver");
    let experiment = KILLED_SERVICE
        .replace("TRAIN_STOP", "dump")
        .replace("{port}\"", "{port} fork\"")
        .replace("optimize = [\"pgo\"]", "optimize = [\"pgo\"]\ncflags = \"-ftest-coverage\"")
        .replace(
            "done'\"",
            "done; exec 3<&-; exec 3<>/dev/tcp/127.0.0.1/{port.srv}; echo hit >&3; read -r l <&3'\"",
        );
    sandbox.write("afterburner.toml", &experiment);
    sandbox.afterburner(&["train"]).assert_ok();
    let variant = sandbox.path().join(".afterburner/variants/pgo");
    let gcno = files_with(&variant.join("build"), "gcno");
    let gcda = files_with(&variant.join("profile/gcc-pgo/raw/hits"), "gcda");
    assert_eq!((gcno.len(), gcda.len()), (1, 1), "{gcno:?} {gcda:?}");
    // 7 requests on the first connection, 1 on the second, none in the parent.
    assert_eq!(gcc_count(&gcno[0], &gcda[0], "handle_request"), 8);
}
