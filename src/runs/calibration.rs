//! `calibration.json`: what `afterburner calibrate` found on this machine —
//! its A/A bench's noise, how often A/A reports claimed a difference, and
//! what the file's repetitions can decide — beside that bench's
//! `meta.json` and `raw.jsonl`.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};
use serde::{Deserialize, Serialize};

use crate::workdir::CALIBRATION_FILE;

/// Version of `calibration.json`.
pub const CALIBRATION_VERSION: u32 = 1;

/// A calibration: the baseline's binaries run as two variants (A and its
/// twin A′), interleaved as a bench runs them, and judged in trials as a
/// report would judge them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Calibration {
    /// Version of this format ([`CALIBRATION_VERSION`]).
    pub schema_version: u32,
    /// The A/A bench's run id (its directory under `calibrations/`).
    pub run_id: String,
    pub target: String,
    /// The experiment file.
    pub experiment: PathBuf,
    /// When the environment was captured (RFC 3339 UTC).
    pub captured_at: String,
    /// The machine class it speaks for (CPU model and usable CPUs): a
    /// report on the same class cites it.
    pub machine_class: String,
    /// The variant whose binaries ran as both A and A′.
    pub baseline: String,
    /// A′'s name in the A/A bench's records.
    pub twin: String,
    /// The time the rounds could take, in seconds (warmup included).
    pub budget_s: f64,
    /// Confidence level the trials were judged at, e.g. 0.95.
    pub confidence: f64,
    /// Rounds per trial: the experiment's repetitions, what a report of
    /// the file judges.
    pub trial_rounds: u32,
    /// Counted rounds the A/A bench ran.
    pub rounds: u32,
    /// Whole reports (every workload and metric, the family corrected as a
    /// report corrects it) that claimed any difference: disjoint trials.
    pub reports: TrialCounts,
    /// The same over random subsets of `trial_rounds` rounds.
    pub reports_subsampled: TrialCounts,
    /// Per bench workload, its headline metric.
    pub workloads: Vec<WorkloadCalibration>,
    /// The rules the figures follow, one sentence each, for the table.
    pub rules: Vec<String>,
}

/// One workload's headline metric, calibrated.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkloadCalibration {
    pub workload: String,
    /// The headline metric judged (e.g. `wall`).
    pub metric: String,
    /// Rounds in which both A and A′ measured it.
    pub pairs: u32,
    /// Noise within rounds: the standard deviation of the per-round log
    /// ratios A′/A over every round, ×100 (≈ percent); what a paired
    /// verdict sees; absent below 2 pairs.
    pub within_round_pct: Option<f64>,
    /// Noise between rounds: the coefficient of variation of A's per-round
    /// values, in percent; absent below 2 values.
    pub cv_baseline_pct: Option<f64>,
    /// The same for A′, in percent.
    pub cv_twin_pct: Option<f64>,
    /// Noise between runs: the coefficient of variation of A's mean over
    /// the disjoint trials (each a run of the file), in percent; absent
    /// with fewer than two trials.
    pub between_trials_pct: Option<f64>,
    /// Disjoint trials of `trial_rounds` consecutive rounds, each judged.
    pub disjoint: TrialCounts,
    /// Random subsets of `trial_rounds` rounds (without replacement), each
    /// judged: more trials, not independent ones.
    pub subsampled: TrialCounts,
    /// The smallest true change the file's repetitions decide with 80%
    /// power, in percent; absent when the noise is unknown (fewer than
    /// 2 pairs).
    pub min_effect_pct: Option<f64>,
    /// Rounds a paired verdict needs to decide each effect with 80% power.
    pub rounds_for: Vec<RoundsFor>,
}

/// How many trials ran, claimed a difference, and had an interval that
/// held 1 (the true A/A ratio).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrialCounts {
    pub trials: u32,
    /// Verdict faster or slower: a false claim, since A and A′ are one build.
    pub claims: u32,
    /// The printed interval of the ratio contained 1 (per workload only).
    pub held: u32,
}

/// The rounds one true change needs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RoundsFor {
    /// The change, in percent (1 = 1%).
    pub effect_pct: f64,
    /// Rounds needed at 80% power; absent beyond reach.
    pub rounds: Option<u32>,
}

/// Write `calibration.json` into the A/A bench's run directory.
pub fn write_calibration(run_dir: &Path, calibration: &Calibration) -> Result<PathBuf> {
    let path = run_dir.join(CALIBRATION_FILE);
    fs_err::write(&path, serde_json::to_vec_pretty(calibration)?)?;
    Ok(path)
}

/// Read a run directory's `calibration.json`.
pub fn read_calibration(run_dir: &Path) -> Result<Calibration> {
    let path = run_dir.join(CALIBRATION_FILE);
    serde_json::from_slice(&fs_err::read(&path)?).with_context(|| {
        format!(
            "{} is not a calibration\nhint: it is written by `afterburner calibrate`; run it again",
            path.display()
        )
    })
}
