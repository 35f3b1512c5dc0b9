//! Measure one run of a workload on a variant: wall, CPU time and peak RSS
//! from the kernel, instruction counts from perf or callgrind, and figures
//! the workload prints itself.

mod command;
mod figures;
pub mod instructions;
pub mod window;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

pub use command::{command_for, prefixed_command};
use figures::read_figures;
pub use figures::scan_pieces;
pub use instructions::InstructionCounter;

use crate::experiment::{Figure, MetricKind, Workload};
use crate::process::{describe_status, run_timed, TimedIo};
use crate::stats::Precision;

/// Which measurement a run was for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunKind {
    /// Native run: wall, user, sys, max RSS and figures.
    Timing,
    /// Run under the instruction counter (perf stat or callgrind).
    Instructions,
}

/// One finished run: a line of `raw.jsonl`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// Round number, from 0; warmup rounds come first.
    pub round: u32,
    /// Uncounted warmup run.
    pub warmup: bool,
    /// Position of this variant in the round's shuffled order, from 0.
    pub position: u32,
    pub variant: String,
    pub workload: String,
    pub kind: RunKind,
    /// When the run started, in milliseconds since the Unix epoch.
    pub started_unix_ms: u64,
    /// Whether the command exited with status 0.
    pub success: bool,
    /// "exit code N" or "signal N (NAME)".
    pub exit: String,
    /// Wall-clock time, in nanoseconds.
    pub wall_ns: Option<u64>,
    /// User-mode CPU time, in nanoseconds.
    pub user_ns: Option<u64>,
    /// Kernel-mode CPU time, in nanoseconds.
    pub sys_ns: Option<u64>,
    /// Peak resident set size, in KiB.
    pub max_rss_kib: Option<u64>,
    /// Instructions executed (user space), for instruction runs.
    pub instructions: Option<u64>,
    /// "perf" or "callgrind".
    pub instruction_source: Option<String>,
    /// Figures read from the workload's output, by name.
    #[serde(default)]
    pub figures: BTreeMap<String, f64>,
    /// Why a run that exited 0 still failed (e.g. a figure missing from its output).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The command's stdout and stderr.
    pub stdout_log: PathBuf,
    pub stderr_log: PathBuf,
}

/// What a metric is: its name, unit, direction and precision.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Metric {
    /// `wall`, `user`, `sys`, `max_rss`, `instructions`, or a figure's name.
    pub name: String,
    /// Unit of the values: "s", "KiB", "instructions", or the figure's.
    pub unit: String,
    pub lower_is_better: bool,
    pub precision: Precision,
    /// A figure declared `primary = true`: its workload's headline metric.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub primary: bool,
    /// A total over the run (a service's CPU seconds or context switches, a
    /// command's user and system time and instructions): meaningful only
    /// when the run did a fixed amount of work. In a run of fixed duration
    /// it is shown but not judged; a service's per-request twin is.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cumulative: bool,
}

impl Metric {
    pub fn builtin(kind: MetricKind, counter: InstructionCounter) -> Self {
        let (unit, precision) = match kind {
            MetricKind::Wall | MetricKind::User | MetricKind::Sys => ("s", Precision::Noisy),
            MetricKind::MaxRss => ("KiB", Precision::Noisy),
            MetricKind::Instructions => ("instructions", counter.precision()),
        };
        Self {
            name: kind.name().to_owned(),
            unit: unit.to_owned(),
            lower_is_better: true,
            precision,
            primary: false,
            // User and system time and instructions are totals over the
            // run. In a run of fixed duration (a command whose primary
            // figure is a rate, pgbench -T) a faster build does more in
            // them, so they are shown, not judged, and not the headline's
            // work. Not per unit of the rate either: the command counts its
            // rate over a window of its own (pgbench leaves out its
            // connections) that its whole-life CPU and instructions (start-up,
            // connecting, teardown) do not share, and a quotient of the two
            // would mix windows.
            cumulative: matches!(
                kind,
                MetricKind::User | MetricKind::Sys | MetricKind::Instructions
            ),
        }
    }

    pub fn figure(figure: &Figure) -> Self {
        Self {
            name: figure.name.clone(),
            unit: figure.unit.clone(),
            lower_is_better: !figure.higher_is_better,
            precision: Precision::Noisy,
            primary: figure.primary,
            cumulative: false,
        }
    }

    /// This metric's value in a run, if the run measured it.
    pub fn value(&self, run: &RunRecord) -> Option<f64> {
        let ns = |v: Option<u64>| v.map(|n| n as f64 / 1e9);
        match self.name.as_str() {
            "wall" if run.kind == RunKind::Timing => ns(run.wall_ns),
            "user" if run.kind == RunKind::Timing => ns(run.user_ns),
            "sys" if run.kind == RunKind::Timing => ns(run.sys_ns),
            "max_rss" if run.kind == RunKind::Timing => run.max_rss_kib.map(|v| v as f64),
            "instructions" => run.instructions.map(|v| v as f64),
            // A service's count over a load's window, per request answered.
            "instructions_per_request" => run.figures.get(&self.name).copied(),
            name if run.kind == RunKind::Timing => run.figures.get(name).copied(),
            _ => None,
        }
    }
}

/// Identity of a run: where it sits in the plan.
#[derive(Debug, Clone)]
pub struct RunSlot<'a> {
    pub round: u32,
    pub warmup: bool,
    pub position: u32,
    pub variant: &'a str,
    pub workload: &'a Workload,
    pub kind: RunKind,
}

/// How to run: the expanded command, its environment and where output goes.
#[derive(Debug, Clone)]
pub struct RunSetup<'a> {
    /// The command line, placeholders expanded.
    pub command: &'a str,
    pub env: &'a BTreeMap<String, String>,
    pub cwd: &'a Path,
    /// Directory for the run's stdout/stderr files.
    pub logs: &'a Path,
    /// Scratch directory for instruction-counter output.
    pub scratch: &'a Path,
    pub counter: InstructionCounter,
    /// Where a counted run's callgrind files are kept for `explain`
    /// (`None`: removed once counted).
    pub keep: Option<&'a Path>,
}

impl RunRecord {
    /// A record of `slot` started now, with nothing measured yet.
    pub fn blank(slot: &RunSlot, io: &TimedIo) -> Self {
        let started_unix_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
        RunRecord {
            round: slot.round,
            warmup: slot.warmup,
            position: slot.position,
            variant: slot.variant.to_owned(),
            workload: slot.workload.name.clone(),
            kind: slot.kind,
            started_unix_ms,
            success: false,
            exit: String::new(),
            wall_ns: None,
            user_ns: None,
            sys_ns: None,
            max_rss_kib: None,
            instructions: None,
            instruction_source: None,
            figures: BTreeMap::new(),
            error: None,
            stdout_log: io.stdout.clone(),
            stderr_log: io.stderr.clone(),
        }
    }
}

/// The stem of a run's log files.
pub fn log_stem(slot: &RunSlot) -> String {
    format!(
        "r{:03}-{}-{}-{}",
        slot.round,
        slot.workload.name,
        slot.variant,
        match slot.kind {
            RunKind::Timing => "time",
            RunKind::Instructions => "instr",
        }
    )
}

/// Run once and measure. A non-zero exit is recorded, not an error: the
/// caller decides; an error here means the run could not be measured at all.
pub fn measure(slot: &RunSlot, setup: &RunSetup) -> anyhow::Result<RunRecord> {
    let stem = log_stem(slot);
    let io = TimedIo {
        stdout: setup.logs.join(format!("{stem}.out")),
        stderr: setup.logs.join(format!("{stem}.err")),
    };
    let mut record = RunRecord::blank(slot, &io);
    match slot.kind {
        RunKind::Timing => {
            let mut command = command_for(setup.command);
            command.envs(setup.env).current_dir(setup.cwd);
            let timed = run_timed(&mut command, &io, slot.workload.timeout)?;
            record.success = timed.status.success();
            record.exit = describe_status(timed.status);
            record.wall_ns = Some(nanos(timed.usage.wall));
            record.user_ns = Some(nanos(timed.usage.user));
            record.sys_ns = Some(nanos(timed.usage.sys));
            record.max_rss_kib = Some(timed.usage.max_rss_kib);
            if record.success {
                // A missing figure fails the run, but the run is still recorded.
                match read_figures(&slot.workload.figures, &io.stdout) {
                    Ok(figures) => record.figures = figures,
                    Err(error) => {
                        record.success = false;
                        record.error = Some(format!("{error:#}"));
                    }
                }
            }
        }
        RunKind::Instructions => {
            let counted = setup.counter.count(setup, &io, slot.workload.timeout)?;
            record.success = counted.status.success();
            record.exit = describe_status(counted.status);
            record.instructions = counted.instructions;
            record.instruction_source = Some(setup.counter.name().to_owned());
        }
    }
    Ok(record)
}

pub fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A command whose primary figure is a rate (pgbench -T) does more on a
    /// faster build in the same time: its totals are shown, not judged (nor
    /// the headline's work); its time and peak memory are judged.
    #[test]
    fn a_commands_cpu_and_instruction_totals_are_cumulative() {
        let metric = |kind| Metric::builtin(kind, InstructionCounter::Callgrind);
        for kind in [MetricKind::User, MetricKind::Sys, MetricKind::Instructions] {
            assert!(metric(kind).cumulative, "{kind:?}");
        }
        for kind in [MetricKind::Wall, MetricKind::MaxRss] {
            assert!(!metric(kind).cumulative, "{kind:?}");
        }
    }
}
