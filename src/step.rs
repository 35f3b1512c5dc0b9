//! Untimed steps: a service's `setup` (before its first start in a fresh
//! state directory: initdb, a data load) and a workload's `before` and
//! `after` (around each run, outside its measurement: pgbench -i, a cache
//! flush). Each runs to completion under a deadline with its output in a
//! log of its own; a failure names the step, its command and its log.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context as _, Result};

use crate::measure::command_for;
use crate::process::{describe_status, quote_output, run_timed, TimedIo};
use crate::workdir::tail;

/// One step to run.
pub struct Step<'a> {
    /// What it is, for messages: "setup of service `db`".
    pub what: String,
    /// The expanded command line.
    pub line: &'a str,
    pub env: &'a BTreeMap<String, String>,
    pub cwd: &'a Path,
    /// Where its stdout and stderr go.
    pub log: PathBuf,
    pub timeout: Duration,
    /// The uid and gid it runs as, when not afterburner's own.
    pub user: Option<(u32, u32)>,
}

/// Run `step`; its output streams to its log (never held in memory: a
/// data load may print a great deal), whose tail a failure quotes.
pub fn run(step: &Step) -> Result<()> {
    let mut command = command_for(step.line);
    command.envs(step.env).current_dir(step.cwd);
    if let Some((uid, gid)) = step.user {
        std::os::unix::process::CommandExt::uid(&mut command, uid);
        std::os::unix::process::CommandExt::gid(&mut command, gid);
    }
    let io = TimedIo {
        stdout: step.log.clone(),
        stderr: step.log.clone(),
    };
    let timed = run_timed(&mut command, &io, step.timeout).with_context(|| {
        format!(
            "{} did not finish: {}\nlog: {}\nhint: raise the workload's timeout, or check that the command ends by itself",
            step.what,
            step.line,
            step.log.display()
        )
    })?;
    if !timed.status.success() {
        bail!(
            "{} failed with {}\ncommand: {}\n{}\nlog: {}\nhint: run the command by hand in {} to see why",
            step.what,
            describe_status(timed.status),
            step.line,
            quote_output(&tail(&step.log, 20)),
            step.log.display(),
            step.cwd.display()
        );
    }
    Ok(())
}
