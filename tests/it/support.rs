//! Helpers: a temp dir per test holding a copy of a fixture and an
//! experiment file, and a runner for the real `afterburner` binary that
//! prints its output (and keeps the dir) when an assertion fails.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use afterburner::process::capture_command;

mod experiment;
pub use experiment::{Bench, Experiment, Service, Variant, Workload};

pub struct Sandbox {
    dir: Option<tempfile::TempDir>,
    /// Held while the test runs: shared, unless the test is `exclusive()`.
    turn: Option<std::rc::Rc<ReadTurn>>,
}

/// A test thread's shared turn, one however many sandboxes it makes.
struct ReadTurn(#[allow(dead_code)] std::sync::RwLockReadGuard<'static, ()>);

thread_local! {
    /// The turn this thread's live sandboxes share.
    static READ_TURN: std::cell::RefCell<std::rc::Weak<ReadTurn>> =
        const { std::cell::RefCell::new(std::rc::Weak::new()) };
}

/// This thread's shared turn: the one its live sandboxes hold, else a new
/// one. Regression: a test that made a second sandbox while its first
/// held a turn asked the lock for a second read, which waits behind an
/// `exclusive()` test already waiting for the first to end (std's
/// `RwLock` lets a waiting writer go first): both hung, and CI with them.
fn read_turn() -> std::rc::Rc<ReadTurn> {
    READ_TURN.with(|held| {
        if let Some(turn) = held.borrow().upgrade() {
            return turn;
        }
        let turn = std::rc::Rc::new(ReadTurn(
            TURNS
                .read()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        ));
        *held.borrow_mut() = std::rc::Rc::downgrade(&turn);
        turn
    })
}

impl Drop for Sandbox {
    /// A failing test keeps its directory and says where it is.
    fn drop(&mut self) {
        if std::thread::panicking() {
            if let Some(dir) = self.dir.take() {
                eprintln!("kept test directory: {}", dir.keep().display());
            }
        }
    }
}

impl Sandbox {
    /// A temp dir with `tests/fixtures/<fixture>` copied into `src/`.
    pub fn with_fixture(fixture: &str) -> Self {
        let dir = tempfile::Builder::new()
            .prefix("afterburner-it-")
            .tempdir()
            .unwrap();
        let from = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(fixture);
        let status = Command::new("cp")
            .arg("-a")
            .arg(&from)
            .arg(dir.path().join("src"))
            .status()
            .unwrap();
        assert!(status.success());
        let turn = (!EXCLUSIVE.with(std::cell::Cell::get)).then(read_turn);
        Self {
            dir: Some(dir),
            turn,
        }
    }

    pub fn path(&self) -> &Path {
        self.dir
            .as_ref()
            .expect("invariant: taken only on drop")
            .path()
    }

    pub fn write(&self, name: &str, text: &str) -> PathBuf {
        let path = self.path().join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    /// A temp dir with `fixture` copied into `src/` and `experiment` as
    /// its `afterburner.toml`.
    pub fn with_experiment(fixture: &str, experiment: &Experiment) -> Self {
        let sandbox = Self::with_fixture(fixture);
        sandbox.write_experiment(experiment);
        sandbox
    }

    /// Make the sandbox a git repository of its own, everything in it
    /// committed as `message` (work directories ignored).
    pub fn commit_all(&self, message: &str) {
        self.write(".gitignore", ".afterburner/\n");
        for args in [
            &["init", "-q"][..],
            &["add", "."],
            &[
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "commit",
                "-qm",
                message,
            ],
        ] {
            let out = Command::new("git")
                .current_dir(self.path())
                .args(args)
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "git {args:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }

    /// Write `experiment` as `afterburner.toml`.
    pub fn write_experiment(&self, experiment: &Experiment) -> PathBuf {
        self.write("afterburner.toml", &experiment.render())
    }

    /// `.afterburner/variants/<variant>`: its build, profiles and logs.
    pub fn variant_dir(&self, variant: &str) -> PathBuf {
        self.path().join(".afterburner/variants").join(variant)
    }

    /// The latest run's `results.json`.
    pub fn results(&self) -> serde_json::Value {
        read_json(&only_run_dir(self).join("results.json"))
    }

    /// Run `afterburner ARGS` in the sandbox, with a generous timeout.
    pub fn afterburner(&self, args: &[&str]) -> Run {
        self.afterburner_with_env(args, &[])
    }

    /// Run `afterburner ARGS` with its standard output a pipe whose reader
    /// has closed already (as `| head -1` does once it has its line): every
    /// write to it fails with EPIPE. Its stdout in the `Run` is empty.
    pub fn afterburner_into_closed_pipe(
        &self,
        args: &[&str],
        env: &[(&str, &dyn AsRef<std::ffi::OsStr>)],
    ) -> Run {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let mut command = Command::new(env!("CARGO_BIN_EXE_afterburner"));
        for (key, value) in env {
            command.env(key, value);
        }
        let mut child = command
            .args(args)
            .current_dir(self.path())
            .env("NO_COLOR", "1")
            .stdout(writer)
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let deadline = std::time::Instant::now() + Duration::from_mins(2);
        while child.try_wait().unwrap().is_none() {
            if std::time::Instant::now() > deadline {
                let _ = child.kill();
                panic!("afterburner {args:?} did not exit within 2 minutes");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Run {
            output: child.wait_with_output().unwrap(),
            dir: self.path().to_path_buf(),
        }
    }

    /// Run `afterburner ARGS` with extra environment variables.
    pub fn afterburner_with_env(
        &self,
        args: &[&str],
        env: &[(&str, &dyn AsRef<std::ffi::OsStr>)],
    ) -> Run {
        let mut command = Command::new(env!("CARGO_BIN_EXE_afterburner"));
        for (key, value) in env {
            command.env(key, value);
        }
        command
            .args(args)
            .current_dir(self.path())
            .env("NO_COLOR", "1");
        let out = capture_command(&mut command, Duration::from_mins(10)).unwrap();
        Run {
            output: Output {
                status: out.status,
                stdout: out.stdout.into_bytes(),
                stderr: out.stderr.into_bytes(),
            },
            dir: self.path().to_path_buf(),
        }
    }
}

pub struct Run {
    pub output: Output,
    dir: PathBuf,
}

impl Run {
    pub fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.output.stdout).into_owned()
    }

    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.output.stderr).into_owned()
    }

    fn dump(&self) -> String {
        format!(
            "dir: {}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            self.dir.display(),
            self.stdout(),
            self.stderr()
        )
    }

    #[track_caller]
    pub fn assert_ok(&self) -> &Self {
        assert!(
            self.output.status.success(),
            "afterburner failed\n{}",
            self.dump()
        );
        self
    }

    #[track_caller]
    pub fn assert_fails_with(&self, needle: &str) -> &Self {
        assert!(
            !self.output.status.success(),
            "afterburner should have failed\n{}",
            self.dump()
        );
        assert!(
            self.stderr().contains(needle),
            "stderr lacks {needle:?}\n{}",
            self.dump()
        );
        self
    }
}

/// `fixture` with `experiment`, run by `afterburner run` (which must
/// succeed): the sandbox and the run's results.
pub fn run_experiment(fixture: &str, experiment: &Experiment) -> (Sandbox, serde_json::Value) {
    let sandbox = Sandbox::with_experiment(fixture, experiment);
    sandbox.afterburner(&["run"]).assert_ok();
    let results = sandbox.results();
    (sandbox, results)
}

/// The latest run directory under `.afterburner/runs/` (the only one,
/// where a test runs once).
pub fn only_run_dir(sandbox: &Sandbox) -> PathBuf {
    let runs = sandbox.path().join(".afterburner/runs");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&runs)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    dirs.sort();
    dirs.pop().unwrap()
}

pub fn read_json(path: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// The comparison entry for a workload, metric and variant.
/// The race's standing of `candidate` (`results.json`'s `race`).
pub fn standing<'a>(race: &'a serde_json::Value, candidate: &str) -> &'a serde_json::Value {
    race["standings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["candidate"] == candidate)
        .unwrap_or_else(|| panic!("no standing of {candidate} in {race:#}"))
}

/// How `name` was built (`results.json`'s `variants`).
pub fn variant_info<'a>(results: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    results["variants"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["name"] == name)
        .unwrap_or_else(|| panic!("no variant {name} in {results:#}"))
}

/// The mean instruction count of `variant` in the run at `run`.
pub fn mean_instructions(run: &Path, variant: &str) -> f64 {
    let results = read_json(&run.join("results.json"));
    results["measurements"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["metric"]["name"] == "instructions" && m["variant"] == variant)
        .unwrap_or_else(|| panic!("no instructions of {variant} in {}", run.display()))["summary"]
        ["mean"]
        .as_f64()
        .unwrap()
}

pub fn comparison<'a>(
    results: &'a serde_json::Value,
    workload: &str,
    metric: &str,
    variant: &str,
) -> &'a serde_json::Value {
    results["comparisons"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["workload"] == workload && c["metric"] == metric && c["variant"] == variant)
        .unwrap_or_else(|| panic!("no comparison for {workload}/{metric}/{variant} in {results:#}"))
}

/// Whose turn it is: every test holds a shared turn while it runs, and a
/// test whose assertions are about timing (or that loads a server to its
/// capacity) takes the turn alone, so that on a 2-core machine no other
/// test's compiler or callgrind skews its figures.
static TURNS: std::sync::RwLock<()> = std::sync::RwLock::new(());

thread_local! {
    /// This test thread holds the exclusive turn (its sandbox takes none).
    static EXCLUSIVE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Run alone among the integration tests; call before making the sandbox.
pub fn exclusive() -> Exclusive {
    let guard = TURNS
        .write()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    EXCLUSIVE.with(|e| e.set(true));
    Exclusive { _guard: guard }
}

pub struct Exclusive {
    _guard: std::sync::RwLockWriteGuard<'static, ()>,
}

impl Drop for Exclusive {
    fn drop(&mut self) {
        EXCLUSIVE.with(|e| e.set(false));
    }
}

/// Whether these results counted instructions with callgrind (exact) rather
/// than perf's hardware counters (which jitter, so their instruction
/// verdicts are judged as noisy and 2 or 3 runs cannot decide).
pub fn counted_exactly(results: &serde_json::Value) -> bool {
    results["instruction_counter"] == "callgrind"
}

/// Assert an instruction comparison's verdict: exactly under callgrind;
/// under perf (a machine with counters) the ratio must still lie on the
/// expected side, and a verdict the few runs cannot reach is said, not
/// asserted.
pub fn assert_instruction_verdict(
    results: &serde_json::Value,
    c: &serde_json::Value,
    expected: &str,
) {
    if counted_exactly(results) {
        assert_eq!(c["verdict"], expected, "{c:#}");
        return;
    }
    let ratio = c["ratio"].as_f64().unwrap();
    match expected {
        "faster" => assert!(ratio < 1.0, "{c:#}"),
        "slower" => assert!(ratio > 1.0, "{c:#}"),
        _ => {}
    }
    if c["verdict"] != expected {
        skip_part(&format!(
            "perf counts instructions here (noisy, few runs): verdict {} not asserted ({expected} expected under callgrind)",
            c["verdict"]
        ));
    }
}

/// Why a test, or a part of one, did not run here.
#[derive(Debug, Clone, Copy)]
pub enum Lack<'a> {
    /// A tool or service `.ci/run` installs or starts: under `CI=true` the
    /// test fails instead of skipping.
    Installed(&'a str),
    /// Something no install gives: a PMU, LBR, root, a kernel setting, a
    /// quiet machine.
    Machine(&'a str),
}

/// Where skips are written: `AFTERBURNER_SKIP_LEDGER` (`.ci/run` sets it
/// and prints it at the end), else a file under cargo's target directory.
fn skip_ledger() -> PathBuf {
    std::env::var_os("AFTERBURNER_SKIP_LEDGER").map_or_else(
        || Path::new(env!("CARGO_TARGET_TMPDIR")).join("skips.tsv"),
        PathBuf::from,
    )
}

/// The running test's name, as the test harness names its thread.
fn test_name() -> String {
    std::thread::current().name().unwrap_or("a test").to_owned()
}

/// One line of the ledger: `KIND\tTEST\tWHY`, appended (tests run in
/// parallel: one `write` each).
fn record(kind: &str, why: &str) {
    use std::io::Write as _;
    let line = format!(
        "{kind}\t{}\t{}\n",
        test_name(),
        why.replace(['\t', '\n'], " ")
    );
    let written = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(skip_ledger())
        .and_then(|mut f| f.write_all(line.as_bytes()));
    if let Err(e) = written {
        eprintln!(
            "could not write the skip ledger {}: {e}",
            skip_ledger().display()
        );
    }
}

/// The calling test skips, for `lack`: said on stderr and in the ledger,
/// so a skip is counted, never a silent pass. Under `CI=true`, where
/// `.ci/run` promised the tool, it is a failure. Returns `false`, for
/// `if !x_or_skip() { return; }`.
pub fn skip(lack: Lack) -> bool {
    let ci = std::env::var("CI").ok();
    if let Err(failure) = may_skip(lack, ci.as_deref(), &test_name()) {
        record("fail", &failure);
        panic!("{failure}");
    }
    let (Lack::Installed(why) | Lack::Machine(why)) = lack;
    eprintln!("SKIP: {why}");
    record("skip", why);
    false
}

/// Whether a test may skip for `lack` with `CI` set to `ci`: not what
/// `.ci/run` installs, under `CI=true`.
fn may_skip(lack: Lack, ci: Option<&str>, test: &str) -> Result<(), String> {
    match (lack, ci) {
        (Lack::Installed(why), Some("true")) => Err(format!(
            "{test} skipped under CI=true, where .ci/run installs what it needs: {why}"
        )),
        _ => Ok(()),
    }
}

#[test]
fn a_tests_second_sandbox_shares_its_first_ones_turn() {
    let first = Sandbox::with_fixture("hotpath");
    let second = Sandbox::with_fixture("hotpath");
    match (&first.turn, &second.turn) {
        (Some(a), Some(b)) => assert!(std::rc::Rc::ptr_eq(a, b)),
        _ => panic!("a test that is not exclusive holds a turn"),
    }
}

#[test]
fn a_skip_of_what_ci_installs_fails_under_ci_and_a_machines_lack_does_not() {
    let tool = Lack::Installed("clang not installed");
    let err = may_skip(tool, Some("true"), "pgo::x").unwrap_err();
    assert!(
        err.contains("pgo::x") && err.contains("clang not installed"),
        "{err}"
    );
    assert!(may_skip(tool, None, "pgo::x").is_ok());
    assert!(may_skip(tool, Some("false"), "pgo::x").is_ok());
    assert!(may_skip(Lack::Machine("no PMU"), Some("true"), "pgo::x").is_ok());
}

/// Part of the calling test was not asserted on this machine (a timing
/// floor on a busy machine, a check that needs counters): said and
/// written to the ledger as a part.
pub fn skip_part(why: &str) {
    eprintln!("not asserted: {why}");
    record("part", why);
}

/// Why this machine is too busy for a timing bound, if it is: a 1-minute
/// load average at or above the CPUs this process may use (a parallel
/// build took a 2 ms test server from 500 to 361 requests/s). Tests then
/// assert only what holds at any speed, and say what they skipped.
pub fn busy() -> Option<String> {
    let load: f64 = std::fs::read_to_string("/proc/loadavg")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()?;
    let cpus = std::thread::available_parallelism().map_or(1, usize::from);
    (load >= cpus as f64).then(|| format!("load average {load} on {cpus} CPUs"))
}

/// Whether a Go that can build with PGO (1.21 or newer) is here, as the
/// product finds it (the PATH, /usr/lib/go-1.2x, /usr/local/go); where none
/// is, says the test skips (`.ci/run` installs one with
/// `scripts/install-go.sh`).
pub fn go_for_pgo_or_skip() -> bool {
    afterburner::toolchain::go::find_pgo_go().is_some()
        || skip(Lack::Installed(
            "no Go 1.21 or newer here (.ci/run installs one with scripts/install-go.sh)",
        ))
}

/// Decompress `file.gz` beside itself (keeping it); returns the path
/// without `.gz`. Large binary fixtures are stored gzipped.
pub fn gunzip(file: &Path) -> PathBuf {
    let out = file.with_extension("");
    let data = Command::new("gzip").arg("-dc").arg(file).output().unwrap();
    assert!(data.status.success(), "gzip -dc {}", file.display());
    std::fs::write(&out, data.stdout).unwrap();
    out
}

/// Whether every tool in `tools` is installed; where one is not, says the
/// test skips and why.
pub fn tools_or_skip(tools: &[&str]) -> bool {
    let missing: Vec<&str> = tools
        .iter()
        .copied()
        .filter(|t| !afterburner::toolchain::tools::is_installed(t))
        .collect();
    missing.is_empty()
        || skip(Lack::Installed(&format!(
            "{} not installed",
            missing.join(", ")
        )))
}

/// What the writer multiplies AutoFDO counts by for the installed gcc's
/// reader (gcc 12 to 15 read no summary; gcc 16 scales them itself).
pub fn gcc_count_scale() -> u64 {
    afterburner::toolchain::autofdo::check_gcc()
        .unwrap()
        .count_scale()
}

/// Whether the installed gcc reads a profile format afterburner writes;
/// otherwise prints why the test is skipped.
pub fn served_gcc_or_skip() -> bool {
    match afterburner::toolchain::autofdo::check_gcc() {
        Ok(_) => true,
        Err(why) => skip(Lack::Installed(&format!("{why:#}"))),
    }
}

/// Compile `source` (in `dir`) with `-fauto-profile=profile` and the afdo
/// pass's dump; fails on any diagnostic about the profile. Returns the
/// largest block count gcc annotated per function.
pub fn compile_with_profile(dir: &Path, source: &str, profile: &Path) -> BTreeMap<String, u64> {
    let out = Command::new("gcc")
        .current_dir(dir)
        .args(["-O2", "-g", "-gdwarf-4", "-c", "-fdump-ipa-afdo"])
        .arg(format!("-fauto-profile={}", profile.display()))
        .args([source, "-o", "out.o"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "gcc failed:\n{stderr}");
    for word in ["profile", "version", "TAG", "warning", "note"] {
        assert!(!stderr.contains(word), "gcc said `{word}`:\n{stderr}");
    }
    let dump = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with(".afdo"))
        .expect("gcc wrote the afdo dump");
    annotated_counts(&std::fs::read_to_string(dump).unwrap())
}

/// The largest `<bb N> [count: K]` of each function in an afdo dump (a
/// function starts at an unindented line `type name (params)`).
fn annotated_counts(dump: &str) -> BTreeMap<String, u64> {
    let mut counts = BTreeMap::new();
    let mut function = String::new();
    for line in dump.lines() {
        if !line.starts_with([' ', ';', '{', '}', '_']) && line.ends_with(')') {
            if let Some(name) = line
                .split(" (")
                .next()
                .and_then(|s| s.split(' ').next_back())
            {
                name.clone_into(&mut function);
            }
        }
        if let Some(count) = line
            .trim()
            .strip_prefix("<bb ")
            .and_then(|l| l.split("[count: ").nth(1))
            .and_then(|c| c.split(']').next())
            .and_then(|c| c.parse::<u64>().ok())
        {
            let max = counts.entry(function.clone()).or_insert(0);
            *max = count.max(*max);
        }
    }
    counts
}

impl Run {
    /// Assert the exit status (e.g. `check`'s 0 pass, 1 fail, 2 error).
    #[track_caller]
    pub fn assert_status(&self, code: i32) -> &Self {
        assert_eq!(
            self.output.status.code(),
            Some(code),
            "afterburner should have exited with {code}\n{}",
            self.dump()
        );
        self
    }
}

/// A JUnit XML file as a CI system reads it: the root's counts and every
/// test case, read with an XML parser (quick-xml), which refuses a file
/// that is not well formed.
#[derive(Debug, Default)]
pub struct Junit {
    /// The `<testsuites>` attributes (`tests`, `failures`, `skipped`, …).
    pub totals: std::collections::BTreeMap<String, String>,
    pub cases: Vec<JunitCase>,
}

#[derive(Debug, Default, Clone)]
pub struct JunitCase {
    /// The `<testsuite>` it is in.
    pub suite: String,
    pub classname: String,
    pub name: String,
    /// The `<failure>`'s message and text, when it failed.
    pub failure: Option<(String, String)>,
    pub skipped: bool,
}

pub fn read_junit(path: &Path) -> Junit {
    use quick_xml::events::{BytesStart, Event};
    let xml = std::fs::read_to_string(path).unwrap();
    let attributes = |e: &BytesStart| -> std::collections::BTreeMap<String, String> {
        e.attributes()
            .map(|a| {
                let a = a.unwrap();
                let key = String::from_utf8(a.key.as_ref().to_vec()).unwrap();
                let value = a
                    .normalized_value(quick_xml::XmlVersion::Implicit1_0)
                    .unwrap();
                (key, value.into_owned())
            })
            .collect()
    };
    let mut reader = quick_xml::Reader::from_str(&xml);
    let mut junit = Junit::default();
    let mut suite = String::new();
    let mut in_failure = false;
    loop {
        let event = reader
            .read_event()
            .unwrap_or_else(|e| panic!("{} is not well-formed XML: {e}\n{xml}", path.display()));
        match event {
            Event::Eof => break,
            Event::Start(e) | Event::Empty(e) => {
                let a = attributes(&e);
                match e.name().as_ref() {
                    b"testsuites" => junit.totals = a,
                    b"testsuite" => suite.clone_from(&a["name"]),
                    b"testcase" => junit.cases.push(JunitCase {
                        suite: suite.clone(),
                        classname: a["classname"].clone(),
                        name: a["name"].clone(),
                        ..JunitCase::default()
                    }),
                    b"failure" => {
                        in_failure = true;
                        let case = junit.cases.last_mut().expect("a failure is in a testcase");
                        case.failure = Some((a["message"].clone(), String::new()));
                    }
                    b"skipped" => junit.cases.last_mut().unwrap().skipped = true,
                    _ => {}
                }
            }
            Event::Text(t) if in_failure => {
                let text = t.xml10_content().unwrap().into_owned();
                let case = junit.cases.last_mut().unwrap();
                case.failure.as_mut().unwrap().1.push_str(&text);
            }
            Event::GeneralRef(r) if in_failure => {
                let name = r.decode().unwrap();
                let text = quick_xml::escape::resolve_predefined_entity(&name)
                    .unwrap_or_else(|| panic!("unknown entity &{name}; in {xml}"));
                let case = junit.cases.last_mut().unwrap();
                case.failure.as_mut().unwrap().1.push_str(text);
            }
            Event::End(e) if e.name().as_ref() == b"failure" => in_failure = false,
            _ => {}
        }
    }
    junit
}

/// Whether Go PGO from perf samples can run here: a Go for PGO, perf that
/// may record `cpu-clock` with call stacks, and llvm-symbolizer, as the
/// product finds them; where one is missing, says the test skips.
pub fn go_perf_or_skip() -> bool {
    use afterburner::toolchain::go::perf as go_perf;
    use afterburner::toolchain::{sampling, symbolize};
    if !go_for_pgo_or_skip() {
        return false;
    }
    if let Err(why) = sampling::sampling(sampling::Asked::default(), &go_perf::SAMPLER) {
        return skip(Lack::Machine(&format!("perf cannot sample here: {why}")));
    }
    symbolize::find_symbolizer().is_some()
        || skip(Lack::Installed(&format!(
            "no llvm-symbolizer here ({})",
            symbolize::SYMBOLIZER_HINT
        )))
}

/// The `go` command a Go PGO build uses (see [`go_for_pgo_or_skip`]).
pub fn pgo_go() -> PathBuf {
    afterburner::toolchain::go::find_pgo_go()
        .expect("checked by go_for_pgo_or_skip")
        .path
}

/// One cluster test at a time: they share `.ci/run`'s cluster, and one of
/// them loses a node on purpose.
static CLUSTER_TURN: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// A Slurm cluster for a test: `SLURM_CONF` from the environment when it
/// answers with enough idle nodes that `scripts/slurm-cluster.sh` started
/// (so that one can be lost), else one started here (stopped on drop).
/// Held, it is the test's turn on the cluster.
pub struct TestCluster {
    pub conf: PathBuf,
    /// The script's DIR (beside slurm.conf), for `kill-node`.
    pub dir: PathBuf,
    started: Option<tempfile::TempDir>,
    _turn: std::sync::MutexGuard<'static, ()>,
}

impl Drop for TestCluster {
    fn drop(&mut self) {
        if let Some(dir) = &self.started {
            let _ = Command::new(slurm_script())
                .arg("stop")
                .arg(dir.path())
                .status();
        }
    }
}

impl TestCluster {
    /// Lose `node`: its slurmd and everything running on it, killed.
    pub fn kill_node(&self, node: &str) {
        let out = Command::new(slurm_script())
            .arg("kill-node")
            .arg(&self.dir)
            .arg(node)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "kill-node {node} failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

fn slurm_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/slurm-cluster.sh")
}

/// How many nodes of the cluster at `conf` are idle (0 when it does not answer).
fn idle_nodes(conf: &Path) -> usize {
    Command::new("sinfo")
        .args(["-h", "-N", "-o", "%T"])
        .env("SLURM_CONF", conf)
        .stderr(std::process::Stdio::null())
        .output()
        .map_or(0, |out| {
            String::from_utf8_lossy(&out.stdout)
                .lines()
                .filter(|l| l.trim() == "idle")
                .count()
        })
}

/// A cluster of at least `nodes` idle nodes, or why there is none here
/// (for the test's `SKIP:` line).
pub fn slurm_cluster(nodes: usize) -> Result<TestCluster, String> {
    let turn = CLUSTER_TURN
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(conf) = std::env::var_os("SLURM_CONF").map(PathBuf::from) {
        let dir = conf.parent().unwrap_or(Path::new("/")).to_owned();
        if idle_nodes(&conf) >= nodes && dir.join("made").is_file() {
            return Ok(TestCluster {
                conf,
                dir,
                started: None,
                _turn: turn,
            });
        }
        eprintln!(
            "SLURM_CONF={} has fewer than {nodes} idle nodes of scripts/slurm-cluster.sh: starting a cluster of its own",
            conf.display()
        );
    }
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Err("not root, and no SLURM_CONF names a running cluster".into());
    }
    for tool in [
        "slurmctld",
        "slurmd",
        "munged",
        "sbatch",
        "srun",
        "ip",
        "nsenter",
    ] {
        let found = Command::new("sh")
            .args(["-c", &format!("command -v {tool}")])
            .stdout(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !found {
            return Err(format!(
                "{tool} is not installed (apt-get install slurmctld slurmd munge slurm-client iproute2 util-linux)"
            ));
        }
    }
    let dir = tempfile::Builder::new()
        .prefix("afterburner-slurm-")
        .tempdir()
        .unwrap();
    let out = Command::new(slurm_script())
        .arg("start")
        .arg(dir.path())
        .args(["--nodes", &nodes.to_string()])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "scripts/slurm-cluster.sh start --nodes {nodes} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(TestCluster {
        conf: dir.path().join("slurm.conf"),
        dir: dir.path().to_owned(),
        started: Some(dir),
        _turn: turn,
    })
}

/// An experiment for `fixture` (whose binary has the fixture's name),
/// built with `compiler`: a `baseline` and a `pgo` variant with the lines
/// `pgo_lines` added (e.g. `profile = "…"`, which is then line 15), one
/// workload running `args`.
pub fn pgo_experiment(fixture: &str, compiler: &str, args: &str, pgo_lines: &str) -> Experiment {
    Experiment::new(fixture)
        .compiler(compiler)
        .variant(Variant::new("pgo").optimize(&["pgo"]).line(pgo_lines))
        .workload(Workload::new("loop").run(&format!("{{bin.{fixture}}} {args}")))
}

/// Train `fixture`'s `pgo` variant with `compiler` in a sandbox of its own
/// and return it, with the directory of the trained profile.
pub fn trained_profile(fixture: &str, compiler: &str, args: &str) -> (Sandbox, PathBuf) {
    let sandbox = Sandbox::with_experiment(fixture, &pgo_experiment(fixture, compiler, args, ""));
    sandbox.afterburner(&["train"]).assert_ok();
    let round = if compiler == "clang" {
        "clang-pgo"
    } else {
        "gcc-pgo"
    };
    let dir = sandbox.variant_dir("pgo").join("profile").join(round);
    (sandbox, dir)
}

/// The files under `dir` with `extension`, sorted.
pub fn files_with(dir: &Path, extension: &str) -> Vec<PathBuf> {
    afterburner::toolchain::find_files(dir, extension)
}

/// Whether perf may record `cpu-clock` samples here; otherwise prints why
/// the test is skipped.
pub fn perf_timer_or_skip() -> bool {
    let recorded = Command::new("perf")
        .args([
            "record",
            "-q",
            "-e",
            "cpu-clock",
            "-o",
            "/dev/null",
            "--",
            "true",
        ])
        .output()
        .is_ok_and(|o| o.status.success());
    recorded || skip(Lack::Machine("perf may not record cpu-clock here"))
}

/// Build the fixture copied into `sandbox`'s `src/` with `make`, given CC,
/// CFLAGS and LDFLAGS; the path of `binary` there.
pub fn make_fixture(sandbox: &Sandbox, binary: &str, vars: &[(&str, &str)]) -> PathBuf {
    let src = sandbox.path().join("src");
    let mut command = Command::new("make");
    command.arg("-s").current_dir(&src);
    for (key, value) in vars {
        command.arg(format!("{key}={value}"));
    }
    let out = capture_command(&mut command, Duration::from_mins(2)).unwrap();
    assert!(out.success(), "make failed:\n{}{}", out.stdout, out.stderr);
    src.join(binary)
}

/// A fixture server a test started itself (as a user starts a service,
/// not through afterburner), on a free loopback port; killed on drop.
pub struct Served {
    child: std::process::Child,
    pub port: u16,
}

impl Served {
    /// Start `binary PORT` in `cwd` with `env`, and wait until it accepts.
    pub fn start(binary: &Path, cwd: &Path, env: &[(&str, &dyn AsRef<std::ffi::OsStr>)]) -> Self {
        let port = afterburner::service::free_port().unwrap();
        let mut command = Command::new(binary);
        command
            .arg(port.to_string())
            .current_dir(cwd)
            .stdout(std::process::Stdio::null());
        for (key, value) in env {
            command.env(key, value);
        }
        let served = Self {
            child: command.spawn().unwrap(),
            port,
        };
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                std::time::Instant::now() < deadline,
                "{} did not listen",
                binary.display()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        served
    }

    pub fn pid(&self) -> i32 {
        i32::try_from(self.child.id()).unwrap()
    }

    /// Send `line` `times` times on one connection; the last answer.
    pub fn send(&self, line: &str, times: usize) -> String {
        use std::io::{BufRead as _, Write as _};
        let stream = std::net::TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .unwrap();
        let mut reader = std::io::BufReader::new(stream.try_clone().unwrap());
        let mut writer = stream;
        let mut answer = String::new();
        for _ in 0..times {
            writeln!(writer, "{line}").unwrap();
            answer.clear();
            reader.read_line(&mut answer).unwrap();
        }
        answer.trim().to_owned()
    }

    /// The pids of its child processes now (a forking server's workers).
    pub fn children(&self) -> Vec<i32> {
        let pid = self.pid();
        std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))
            .unwrap_or_default()
            .split_whitespace()
            .map(|p| p.parse().unwrap())
            .collect()
    }

    /// Whether it still runs (not exited, not a zombie).
    pub fn running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Whether rustc's profiles can be merged here: `llvm-profdata` of
/// rustc's own LLVM release, as the product finds it; where it is missing,
/// says the test skips (`.ci/run` installs `llvm-N` of rustc's release).
pub fn rust_profdata_or_skip() -> bool {
    match afterburner::toolchain::rustc::llvm_profdata() {
        Ok(_) => true,
        Err(e) => skip(Lack::Installed(&format!("{e:#}"))),
    }
}
