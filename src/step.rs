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
use crate::process::{capture_command, describe_status, quote_output};

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
}

/// Run `step`; its output goes to its log either way.
pub fn run(step: &Step) -> Result<()> {
    let mut command = command_for(step.line);
    command.envs(step.env).current_dir(step.cwd);
    let out = capture_command(&mut command, step.timeout).with_context(|| {
        format!(
            "{} did not finish within {:?}: {}\nhint: raise the workload's timeout, or check that the command ends by itself",
            step.what, step.timeout, step.line
        )
    })?;
    let text = format!("$ {}\n{}{}", step.line, out.stdout, out.stderr);
    fs_err::write(&step.log, &text)?;
    if !out.success() {
        let tail: String = {
            let lines: Vec<&str> = text.lines().collect();
            lines[lines.len().saturating_sub(20)..].join("\n")
        };
        bail!(
            "{} failed with {}\ncommand: {}\n{}\nlog: {}\nhint: run the command by hand in {} to see why",
            step.what,
            describe_status(out.status),
            step.line,
            quote_output(&tail),
            step.log.display(),
            step.cwd.display()
        );
    }
    Ok(())
}
