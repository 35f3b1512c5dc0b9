//! Instruction counts: `perf stat` where the machine has hardware counters,
//! else `valgrind --tool=callgrind` (slow, but exact and repeatable).

use std::path::Path;
use std::process::ExitStatus;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

use super::command::prefixed_command;
use super::RunSetup;
use crate::process::{run_timed, TimedIo};
use crate::stats::Precision;

/// Which tool counts instructions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum InstructionCounter {
    /// `perf stat -e instructions:u`: hardware counters, near-native speed.
    Perf,
    /// `valgrind --tool=callgrind`: simulated, ~50× slower, exact.
    Callgrind,
}

/// Result of a counted run.
#[derive(Debug, Clone, Copy)]
pub struct Counted {
    pub status: ExitStatus,
    /// Total instructions over the process and its children; `None` when the
    /// counter's output could not be read (e.g. the run failed early).
    pub instructions: Option<u64>,
}

impl InstructionCounter {
    /// Perf when `perf stat` can count instructions here, else callgrind.
    pub fn detect(perf_counters: bool) -> Self {
        if perf_counters {
            InstructionCounter::Perf
        } else {
            InstructionCounter::Callgrind
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            InstructionCounter::Perf => "perf",
            InstructionCounter::Callgrind => "callgrind",
        }
    }

    /// Callgrind counts vary by a handful of instructions in billions: judge
    /// them by resolution. Hardware counters jitter: judge them as noisy.
    pub fn precision(self) -> Precision {
        match self {
            InstructionCounter::Perf => Precision::Noisy,
            InstructionCounter::Callgrind => Precision::Exact,
        }
    }

    /// The words that run a command under this counter, writing to
    /// `out` (perf) or `out.PID` files (callgrind).
    pub fn prefix(self, out: &Path) -> Vec<String> {
        match self {
            InstructionCounter::Perf => perf_stat_prefix("instructions:u", out),
            InstructionCounter::Callgrind => vec![
                // Valgrind lets its client set RLIMIT_NOFILE only to a hard
                // limit equal to the soft limit valgrind started with, and
                // Debian's memcached sets both to its 1024 connections (and
                // exits on failure): start valgrind with a soft limit of 1024.
                "prlimit".to_owned(),
                format!("--nofile={}:", valgrind_nofile()),
                "--".to_owned(),
                "valgrind".to_owned(),
                "--tool=callgrind".to_owned(),
                "--trace-children=yes".to_owned(),
                format!("--callgrind-out-file={}.%p", out.display()),
            ],
        }
    }

    /// The words of [`Self::prefix`] with instrumentation off at start, for
    /// a service counted over a window ([`super::window`]); `None` for perf,
    /// which cannot be switched from outside.
    pub fn windowed_prefix(self, out: &Path) -> Option<Vec<String>> {
        match self {
            InstructionCounter::Perf => None,
            InstructionCounter::Callgrind => {
                let mut words = self.prefix(out);
                words.push(super::window::START_OFF.to_owned());
                Some(words)
            }
        }
    }

    /// Environment a counted run needs on top of its own (`env`): under
    /// callgrind, Go's signal-based preemption off, since it trips an
    /// assertion in callgrind's signal tracking (valgrind 3.19) and loses
    /// the counts.
    pub fn env(self, env: &std::collections::BTreeMap<String, String>) -> Vec<(String, String)> {
        match self {
            InstructionCounter::Perf => Vec::new(),
            InstructionCounter::Callgrind => vec![(
                "GODEBUG".to_owned(),
                go_debug_without_preemption(env.get("GODEBUG")),
            )],
        }
    }

    /// The instructions counted into `scratch/counter*` by runs started
    /// with [`Self::prefix`]`(scratch/counter)`. Callgrind's files are
    /// moved into `keep` when given (for `explain`), else removed.
    pub fn collect(self, scratch: &Path, keep: Option<&Path>) -> Result<Option<u64>> {
        Ok(match self {
            InstructionCounter::Perf => parse_perf_file(&scratch.join("counter")),
            InstructionCounter::Callgrind => sum_callgrind_files(scratch, "counter.", keep)?,
        })
    }

    /// Run the setup's command under the counter.
    pub fn count(self, setup: &RunSetup, io: &TimedIo, timeout: Duration) -> Result<Counted> {
        self.count_with(setup, io, timeout, &[])
    }

    /// [`Self::count`] with `extra` options for the counter.
    fn count_with(
        self,
        setup: &RunSetup,
        io: &TimedIo,
        timeout: Duration,
        extra: &[&str],
    ) -> Result<Counted> {
        fs_err::create_dir_all(setup.scratch)?;
        let out = setup.scratch.join("counter");
        let mut prefix = self.prefix(&out);
        prefix.extend(extra.iter().map(|s| (*s).to_owned()));
        let mut command = prefixed_command(&prefix, setup.command);
        command
            .envs(setup.env)
            .envs(self.env(setup.env))
            .current_dir(setup.cwd);
        // Callgrind is ~50x slower than a native run.
        let timeout = match self {
            InstructionCounter::Perf => timeout,
            InstructionCounter::Callgrind => timeout.saturating_mul(100),
        };
        let timed = run_timed(&mut command, io, timeout)
            .with_context(|| format!("counting instructions with {}", self.name()))?;
        let instructions = self
            .collect(setup.scratch, setup.keep)
            .with_context(|| format!("valgrind's own report: {}", io.stderr.display()))?;
        Ok(Counted {
            status: timed.status,
            instructions,
        })
    }
}

/// The words that run a command under `perf stat`, counting `event` into
/// `out` (CSV): the process afterburner starts is perf, the command its
/// child.
pub fn perf_stat_prefix(event: &str, out: &Path) -> Vec<String> {
    ["perf", "stat", "-x", ",", "-e", event, "-o"]
        .iter()
        .map(|s| (*s).to_owned())
        .chain([out.to_string_lossy().into_owned(), "--".to_owned()])
        .collect()
}

/// Callgrind's options that model caches and a branch predictor as well.
pub const SIMULATION: [&str; 2] = ["--cache-sim=yes", "--branch-sim=yes"];

/// Run the setup's command under callgrind with its cache and branch
/// simulation ([`SIMULATION`]), its files moved into `setup.keep`.
pub fn simulate(setup: &RunSetup, io: &TimedIo, timeout: Duration) -> Result<Counted> {
    InstructionCounter::Callgrind.count_with(setup, io, timeout, &SIMULATION)
}

fn parse_perf_file(path: &Path) -> Option<u64> {
    let text = fs_err::read_to_string(path).unwrap_or_default();
    let _ = fs_err::remove_file(path);
    crate::env::parse_perf_stat(&text)
}

/// Sum `totals:` (or `summary:`) over callgrind's per-process files, then
/// move them into `keep` (or remove them): the next run's files must find
/// the scratch directory empty.
fn sum_callgrind_files(dir: &Path, prefix: &str, keep: Option<&Path>) -> Result<Option<u64>> {
    let mut files = Vec::new();
    for entry in fs_err::read_dir(dir)?.flatten() {
        if entry.file_name().to_string_lossy().starts_with(prefix) {
            files.push(entry.path());
        }
    }
    files.sort();
    let mut total: Option<u64> = None;
    let mut torn = None;
    for file in &files {
        match parse_callgrind_total(&fs_err::read_to_string(file)?) {
            Some(n) => total = Some(total.unwrap_or(0) + n),
            None => torn = Some(file.clone()),
        }
    }
    keep_or_remove(&files, keep)?;
    if let Some(file) = torn {
        bail!(
            "callgrind output {} has no totals line: valgrind crashed or was killed",
            file.display()
        );
    }
    Ok(total)
}

/// Most bytes of callgrind files kept for one run: a larger program's
/// files (a huge call graph) are removed as before, and `explain` says
/// the run has none.
const KEEP_MAX_BYTES: u64 = 256 << 20;

/// Move a run's callgrind files into `keep` (replacing what a failed
/// earlier try of the same run left there), or remove them.
fn keep_or_remove(files: &[std::path::PathBuf], keep: Option<&Path>) -> Result<()> {
    let bytes: u64 = files
        .iter()
        .filter_map(|f| fs_err::metadata(f).ok())
        .map(|m| m.len())
        .sum();
    let Some(keep) = keep.filter(|_| bytes <= KEEP_MAX_BYTES) else {
        for file in files {
            fs_err::remove_file(file)?;
        }
        return Ok(());
    };
    if keep.exists() {
        fs_err::remove_dir_all(keep)?;
    }
    fs_err::create_dir_all(keep)?;
    for file in files {
        let name = file.file_name().map_or_else(
            || std::ffi::OsString::from("counter"),
            std::ffi::OsStr::to_os_string,
        );
        fs_err::rename(file, keep.join(name))?;
    }
    Ok(())
}

/// `GODEBUG` with Go's asynchronous preemption off, keeping other settings.
fn go_debug_without_preemption(configured: Option<&String>) -> String {
    let inherited = std::env::var("GODEBUG").ok();
    match configured.cloned().or(inherited).filter(|s| !s.is_empty()) {
        Some(existing) => format!("{existing},asyncpreemptoff=1"),
        None => "asyncpreemptoff=1".to_owned(),
    }
}

/// The instruction total of one callgrind output file.
pub fn parse_callgrind_total(text: &str) -> Option<u64> {
    let line = text
        .lines()
        .find(|l| l.starts_with("totals:"))
        .or_else(|| text.lines().find(|l| l.starts_with("summary:")))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// The soft descriptor limit valgrind is started with, which becomes the
/// only hard limit its client may set: 1024, the connections servers
/// default to (memcached's `-c`), or less where the hard limit is lower
/// (valgrind keeps a few descriptors above it for itself).
fn valgrind_nofile() -> u64 {
    const SERVERS_DEFAULT: u64 = 1024;
    const VALGRIND_RESERVED: u64 = 12;
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes the struct it is given.
    let hard = if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &raw mut limit) } == 0 {
        limit.rlim_max
    } else {
        SERVERS_DEFAULT + VALGRIND_RESERVED
    };
    SERVERS_DEFAULT.min(hard.saturating_sub(VALGRIND_RESERVED).max(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Regression: callgrind aborted on Go binaries when the Go scheduler
    /// preempted with SIGURG, losing the run's count.
    #[test]
    fn callgrind_runs_turn_go_preemption_off_keeping_other_settings() {
        assert!(
            go_debug_without_preemption(Some(&"gctrace=1".to_owned())).starts_with("gctrace=1,")
        );
        assert!(go_debug_without_preemption(Some(&"gctrace=1".to_owned()))
            .ends_with("asyncpreemptoff=1"));
    }

    /// Counted runs keep callgrind's files for `explain`: moved, not
    /// copied, so the next run's scratch starts empty; a second try of the
    /// same run replaces the first's; a torn file fails the count but
    /// still leaves the scratch empty (it was left there, and summed into
    /// the next run, before).
    #[test]
    fn callgrind_files_are_kept_once_and_the_scratch_left_empty() {
        let dir = tempfile::tempdir().unwrap();
        let scratch = dir.path().join("scratch");
        let keep = dir.path().join("profiles/w/v/r000");
        let write = |name: &str, text: &str| {
            fs_err::create_dir_all(&scratch).unwrap();
            fs_err::write(scratch.join(name), text).unwrap();
        };
        write("counter.1", "events: Ir\ntotals: 10\n");
        write("counter.2", "events: Ir\ntotals: 32\n");
        let counter = InstructionCounter::Callgrind;
        assert_eq!(counter.collect(&scratch, Some(&keep)).unwrap(), Some(42));
        assert_eq!(fs_err::read_dir(&scratch).unwrap().count(), 0);
        assert_eq!(fs_err::read_dir(&keep).unwrap().count(), 2);

        write("counter.3", "events: Ir\ntotals: 7\n");
        assert_eq!(counter.collect(&scratch, Some(&keep)).unwrap(), Some(7));
        let kept: Vec<_> = fs_err::read_dir(&keep)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(kept, ["counter.3"]);

        write("counter.4", "events: Ir\n");
        let error = counter.collect(&scratch, None).unwrap_err();
        assert!(error.to_string().contains("no totals line"), "{error}");
        assert_eq!(fs_err::read_dir(&scratch).unwrap().count(), 0);
    }

    #[test]
    fn parses_perf_and_callgrind_output() {
        let perf = "# started on Sun\n\n123456789,,instructions:u,1000000,100.00,,\n";
        assert_eq!(crate::env::parse_perf_stat(perf), Some(123_456_789));
        assert_eq!(
            crate::env::parse_perf_stat("<not supported>,,instructions:u,0,100.00,,\n"),
            None
        );
        let cg = "events: Ir\nfl=x\n0 5\nsummary: 4242\ntotals: 4242\n";
        assert_eq!(parse_callgrind_total(cg), Some(4242));
        assert_eq!(parse_callgrind_total("events: Ir\n"), None);
    }
}
