//! One finished run as `raw.jsonl` keeps it: the record every metric reads
//! its value from.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

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

#[cfg(test)]
impl RunRecord {
    /// A successful timed run of `variant` on `workload` in `round` that
    /// took `wall_ns`, nothing else measured: what analysis tests feed.
    pub(crate) fn timing_for_tests(
        round: u32,
        variant: &str,
        workload: &str,
        wall_ns: u64,
    ) -> Self {
        RunRecord {
            round,
            warmup: false,
            position: 0,
            variant: variant.to_owned(),
            workload: workload.to_owned(),
            kind: RunKind::Timing,
            started_unix_ms: 0,
            success: true,
            exit: "exit code 0".to_owned(),
            wall_ns: Some(wall_ns),
            user_ns: None,
            sys_ns: None,
            max_rss_kib: None,
            instructions: None,
            instruction_source: None,
            figures: BTreeMap::new(),
            error: None,
            stdout_log: PathBuf::new(),
            stderr_log: PathBuf::new(),
        }
    }
}
