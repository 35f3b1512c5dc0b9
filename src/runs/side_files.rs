//! The files a run leaves beside its stdout log (`logs/<stem>.out`): a
//! load's outcome (`<stem>.load.json`, an SLA search's answer holding it
//! where the load searched), its time series (`<stem>.series.csv`,
//! `<stem>.feedsim.csv`) and the CPU utilization sampled while the run ran
//! (`<stem>.cpu.json`). Copies of a load run side by side (`instances = N`)
//! write one set each, `<stem>-iN.*`. The bench writes them and the
//! analysis reads them here, nowhere else.

use std::path::Path;

use anyhow::Result;
use serde::Deserialize;

use crate::cpustat;
use crate::load::models::sla::Found;
use crate::load::{feedsim_csv, series_csv, Outcome};
use crate::measure::{RunKind, RunRecord};

/// The log stem of copy `copy` of `copies` (`-iN` only when there are several).
pub fn copy_stem(stem: &str, copy: usize, copies: usize) -> String {
    if copies > 1 {
        format!("{stem}-i{copy}")
    } else {
        stem.to_owned()
    }
}

/// Write what one copy of a load gave into `logs`, under its stem `name`:
/// `<name>.load.json` (the outcome, or the SLA search's answer that holds
/// it), `<name>.series.csv` and `<name>.feedsim.csv`.
pub fn write_load(logs: &Path, name: &str, outcome: &Outcome, found: Option<&Found>) -> Result<()> {
    let json = match found {
        Some(f) => serde_json::to_vec_pretty(f)?,
        None => serde_json::to_vec_pretty(outcome)?,
    };
    fs_err::write(logs.join(format!("{name}.load.json")), json)?;
    fs_err::write(
        logs.join(format!("{name}.series.csv")),
        series_csv(&outcome.series),
    )?;
    fs_err::write(
        logs.join(format!("{name}.feedsim.csv")),
        feedsim_csv(&outcome.series),
    )?;
    Ok(())
}

/// Write the CPU utilization sampled during the run of stem `stem` into
/// `logs` (`<stem>.cpu.json`).
pub fn write_cpu(logs: &Path, stem: &str, rows: &[cpustat::Row]) -> Result<()> {
    fs_err::write(
        logs.join(format!("{stem}.cpu.json")),
        serde_json::to_vec(rows)?,
    )?;
    Ok(())
}

/// What a load's file holds: a plain outcome, or an SLA search's answer.
#[derive(Deserialize)]
#[serde(untagged)]
pub enum SavedLoad {
    Found(Found),
    Outcome(Outcome),
}

impl SavedLoad {
    /// The run's outcome: an SLA search's confirming run.
    pub fn outcome(self) -> Outcome {
        match self {
            SavedLoad::Found(found) => found.confirm,
            SavedLoad::Outcome(outcome) => outcome,
        }
    }
}

/// The last successful counted timing run of `workload` on `variant`,
/// whose files the load curves and instances are read from.
pub fn last_counted_run<'a>(
    runs: &'a [RunRecord],
    workload: &str,
    variant: &str,
) -> Option<&'a RunRecord> {
    runs.iter().rev().find(|r| {
        r.success
            && !r.warmup
            && r.kind == RunKind::Timing
            && r.workload == workload
            && r.variant == variant
    })
}

/// The load outcome saved beside a run's stdout log (`<stem>.out`): the
/// run's own, or its first instance's; an sla search's confirming run.
pub fn read_load(stdout_log: &Path) -> Option<Outcome> {
    let stem = stdout_log.to_string_lossy();
    let stem = stem.strip_suffix(".out")?;
    let text = [format!("{stem}.load.json"), format!("{stem}-i0.load.json")]
        .iter()
        .find_map(|p| std::fs::read_to_string(p).ok())?;
    serde_json::from_str::<SavedLoad>(&text)
        .ok()
        .map(SavedLoad::outcome)
}

/// The per-instance files of a run (`<stem>-i0.load.json`, …), in order up
/// to the first that is missing; `None` when one cannot be read as a load's
/// outcome.
pub fn read_instances(stdout_log: &Path) -> Option<Vec<SavedLoad>> {
    let stem = stdout_log.to_string_lossy();
    let stem = stem.strip_suffix(".out")?;
    let mut out = Vec::new();
    for index in 0.. {
        let Ok(text) = std::fs::read_to_string(format!("{stem}-i{index}.load.json")) else {
            break;
        };
        out.push(serde_json::from_str(&text).ok()?);
    }
    Some(out)
}

/// The CPU utilization sampled during a run (`<stem>.cpu.json`); empty
/// when none was kept.
pub fn read_cpu(stdout_log: &Path) -> Vec<cpustat::Row> {
    let stem = stdout_log.to_string_lossy();
    stem.strip_suffix(".out")
        .and_then(|s| std::fs::read(format!("{s}.cpu.json")).ok())
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .unwrap_or_default()
}
