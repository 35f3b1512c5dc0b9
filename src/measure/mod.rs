//! Measure one run of a workload on a variant: wall, CPU time and peak RSS
//! from the kernel, instruction counts from perf or callgrind, and figures
//! the workload prints itself.

mod command;
mod figures;
pub mod instructions;
pub mod window;

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

pub use command::{command_for, prefixed_command};
use figures::read_figures;
pub use figures::scan_pieces;
pub use instructions::InstructionCounter;

use crate::experiment::{Figure, Workload};
use crate::metric::{Builtin, MetricId};
pub use crate::metric::{Metric, RunKind, RunRecord};
use crate::process::{describe_status, run_timed, TimedIo};
use crate::stats::Precision;

impl Metric {
    /// A built-in metric as results record it, judged as `counter`'s
    /// counts are where it counts instructions.
    pub fn builtin(builtin: Builtin, counter: InstructionCounter) -> Self {
        builtin.metric(counter.precision())
    }

    /// A workload's figure as results record it.
    pub fn figure(figure: &Figure) -> Self {
        Self {
            name: MetricId::Figure(figure.name.clone()).to_string(),
            unit: figure.unit.clone(),
            lower_is_better: !figure.higher_is_better,
            precision: Precision::Noisy,
            primary: figure.primary,
            cumulative: false,
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
    /// The built-in metrics asked for: those read from the kernel's
    /// accounting of the command are kept as its figures.
    pub metrics: &'a [Builtin],
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
            for b in setup.metrics {
                if let Some(value) = b.of_command(&timed.usage) {
                    record.figures.insert(b.name().to_owned(), value);
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
