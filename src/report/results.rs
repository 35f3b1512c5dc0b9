//! `results.json`: the analysed outcome of one bench run. Documented field by
//! field here and in `docs/results-schema.md`; `schema_version` changes on any
//! incompatible change.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::env::Environment;
use crate::measure::{InstructionCounter, Metric, RunRecord};
use crate::runs::{BenchMeta, Progress, VariantInfo};
use crate::stats::{self, CompareOptions, Comparison, Precision, Summary};

/// Everything a report shows, derived from `meta.json` and `raw.jsonl` alone.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Results {
    /// Version of this format (see `docs/results-schema.md`).
    pub schema_version: u32,
    pub run_id: String,
    pub target: String,
    /// The experiment file.
    pub experiment: PathBuf,
    /// Seed of the round order shuffle and the bootstrap.
    pub seed: u64,
    /// Confidence level of intervals and tests, e.g. 0.95.
    pub confidence: f64,
    /// Equivalence margin, a fraction (0.01 = ±1%): an interval of the
    /// ratio wholly inside 1 ± margin is "same".
    #[serde(default = "default_equivalence")]
    pub equivalence: f64,
    /// Where services and workloads ran, when the bench pinned them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pinning: Option<crate::pinning::Pinning>,
    /// Counted repetitions per variant and workload (a sequential plan's
    /// most rounds).
    pub repetitions: u32,
    /// `repetitions = "auto"`: the sequential plan, its looks and levels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sequential: Option<crate::runs::SequentialMeta>,
    /// Why the sequential plan stopped, and after how many rounds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<crate::runs::SequentialStop>,
    /// Uncounted warmup runs per variant and workload.
    pub warmup: u32,
    pub instruction_counter: InstructionCounter,
    pub environment: Environment,
    /// Revision of the target's source (git commit, package version), when known.
    #[serde(default)]
    pub revision: Option<String>,
    /// The baseline variant's name.
    pub baseline: String,
    pub variants: Vec<VariantInfo>,
    /// Workloads that trained the profiles; the others were never seen by them.
    #[serde(default)]
    pub training_workloads: Vec<String>,
    /// Query sets (`each`): the set's name → its workloads, in file order.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub workload_sets: BTreeMap<String, Vec<String>>,
    /// Per bench workload: its headline metric, and whether its runs last a
    /// fixed time (absent in runs recorded before it was).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub judging: BTreeMap<String, crate::runs::Judging>,
    /// Samples and summary per workload, metric and variant.
    pub measurements: Vec<Measurement>,
    /// Each non-baseline variant against the baseline, per workload and metric.
    pub comparisons: Vec<ComparisonEntry>,
    pub warnings: Vec<WarningEntry>,
    /// Counts of the runs in `raw.jsonl`.
    pub runs: RunCounts,
    /// Latency curves and time series of load workloads: one run per
    /// workload and variant (the last counted one).
    #[serde(default)]
    pub loads: Vec<LoadCurves>,
    /// Each load workload's requests per variant over its counted runs:
    /// answered, failed (by kind) and timed out.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failures: Vec<super::failures::Failures>,
    /// Each instance of loads run as several (`instances = N`): asked,
    /// achieved, latency, and whether it kept up with its siblings.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub instances: Vec<super::instances::Instances>,
    /// A cluster run's blocks, each analysed alone, with its node.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nodes: Vec<super::nodes::Node>,
    /// With `[report] gain_reference`: each variant's share of the
    /// reference variant's gain over the baseline, per workload and judged
    /// metric, with Fieller's interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gain_shares: Option<super::share::GainShares>,
    /// Where the instructions went, per function and object, when the
    /// run kept callgrind's files (drawn in report.md and report.html;
    /// not part of results.json: `afterburner explain` redraws it).
    #[serde(skip)]
    #[schemars(skip)]
    pub explained: Option<crate::explain::Explanation>,
    /// What `afterburner explain --simulate` found, when it ran (drawn in
    /// report.md and report.html; not part of results.json).
    #[serde(skip)]
    #[schemars(skip)]
    pub simulated: Option<crate::explain::simulation::Simulation>,
}

/// What one load run saw, for charts: its latency by percentile and its
/// per-interval time series.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LoadCurves {
    pub workload: String,
    pub variant: String,
    /// The round the run belongs to.
    pub round: u32,
    pub percentiles: Vec<crate::load::Percentile>,
    pub series: Vec<crate::load::SeriesRow>,
    /// CPU utilization during the run, per interval, the machine's and
    /// each CPU's (from /proc/stat).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cpu: Vec<crate::cpustat::Row>,
    /// A load that mixes requests (`request = [A, B]`, `mix = [9, 1]`):
    /// each request, its weight, and what became of the counted requests
    /// that drew it; absent for a load of one request.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mix: Vec<crate::load::MixCount>,
}

/// One variant's samples of one metric on one workload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Measurement {
    pub workload: String,
    pub metric: Metric,
    pub variant: String,
    /// Round of each sample (same order as `samples`).
    pub rounds: Vec<u32>,
    /// Values in the metric's unit, warmup excluded.
    pub samples: Vec<f64>,
    pub summary: Summary,
}

/// A variant against the baseline on one workload and metric.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ComparisonEntry {
    pub workload: String,
    /// Metric name.
    pub metric: String,
    /// Unit of the metric.
    pub unit: String,
    pub variant: String,
    pub baseline: String,
    /// Ratio, interval, p-value, verdict and rule (flattened into this object).
    #[serde(flatten)]
    pub outcome: Comparison,
    /// Whether samples were paired by round (interleaved runs).
    pub paired: bool,
    /// Whether this is its workload's headline comparison, tested at the
    /// stated level; the others are secondary, corrected for their number
    /// (absent when false).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub primary: bool,
    /// The significance level the verdict was taken at (a probability):
    /// 1 − confidence for a headline comparison, Holm's α / (m − k) for a
    /// secondary one; absent for exact metrics (judged by resolution).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub level: Option<f64>,
}

/// A warning about one comparison, or the run as a whole.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct WarningEntry {
    pub workload: Option<String>,
    pub metric: Option<String>,
    pub variant: Option<String>,
    pub message: String,
}

/// How many runs `raw.jsonl` holds, and how far the plan got.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RunCounts {
    pub total: usize,
    pub warmup: usize,
    pub failed: usize,
    /// Rounds in the plan, warmup included (absent before it was recorded).
    #[serde(default)]
    pub planned_rounds: u32,
    /// Rounds in which every workload ran on every variant; fewer than
    /// planned when the bench was stopped (a partial run).
    #[serde(default)]
    pub complete_rounds: u32,
}

/// One workload and metric of a report: each variant's measurement and the
/// comparisons against the baseline.
#[derive(Debug, Clone)]
pub struct Group<'a> {
    pub workload: &'a str,
    pub rows: Vec<&'a Measurement>,
    pub comparisons: Vec<&'a ComparisonEntry>,
}

impl ComparisonEntry {
    /// The estimate and interval that decided, as the headline shows them:
    /// the median ratio's for paired rounds of a noisy metric, else the
    /// ratio of means' (estimate, low, high; unitless ratios).
    pub fn interval(&self) -> (f64, f64, f64) {
        let o = &self.outcome;
        match (o.median_ratio, o.median_ci_low, o.median_ci_high) {
            (Some(m), Some(low), Some(high)) => (m, low, high),
            _ => (o.ratio, o.ci_low, o.ci_high),
        }
    }
}

impl Results {
    /// The headline metric of `workload` (see [`super::family::primary`]):
    /// time unless `[bench] primary = "instructions"` or a declared figure.
    pub fn primary_metric(&self, workload: &str) -> Option<&str> {
        super::family::primary(
            &self.judging,
            &self.measurements,
            &self.comparisons,
            workload,
        )
    }

    /// The mean of `metric` for `variant` on `workload`, if measured.
    pub fn mean(&self, workload: &str, variant: &str, metric: &str) -> Option<f64> {
        self.measurement(workload, variant, metric)
            .map(|m| m.summary.mean)
    }

    /// The samples of `metric` for `variant` on `workload`, if measured.
    pub fn measurement(&self, workload: &str, variant: &str, metric: &str) -> Option<&Measurement> {
        self.measurements
            .iter()
            .find(|m| m.workload == workload && m.variant == variant && m.metric.name == metric)
    }

    /// Measurements grouped by workload and metric, in the order they were
    /// measured (workload first), for every report format.
    pub fn groups(&self) -> Vec<Group<'_>> {
        let mut keys: Vec<(&str, &str)> = Vec::new();
        for m in &self.measurements {
            if !keys.contains(&(m.workload.as_str(), m.metric.name.as_str())) {
                keys.push((m.workload.as_str(), m.metric.name.as_str()));
            }
        }
        keys.into_iter()
            .map(|(workload, metric)| Group {
                workload,
                rows: self
                    .measurements
                    .iter()
                    .filter(|m| m.workload == workload && m.metric.name == metric)
                    .collect(),
                comparisons: self
                    .comparisons
                    .iter()
                    .filter(|c| c.workload == workload && c.metric == metric)
                    .collect(),
            })
            .collect()
    }

    /// Each verdict rule used, once, in order of first use.
    pub fn rules(&self) -> Vec<&str> {
        let mut rules: Vec<&str> = Vec::new();
        for c in &self.comparisons {
            if !rules.contains(&c.outcome.rule.as_str()) {
                rules.push(&c.outcome.rule);
            }
        }
        rules
    }
}

/// Analyse a bench run.
pub fn analyze(meta: &BenchMeta, runs: &[RunRecord]) -> Results {
    let baseline = meta
        .variants
        .first()
        .map(|v| v.name.clone())
        .unwrap_or_default();
    let (measurements, mut comparisons, mut warnings) = compare_all(meta, runs, &baseline);
    super::family::correct(meta, &measurements, &mut comparisons);
    warnings.extend(super::agreement::work_versus_time(&comparisons));
    if let Some(message) = meta.environment.frequency_warning() {
        warnings.push(WarningEntry {
            workload: None,
            metric: None,
            variant: None,
            message,
        });
    }
    let failed = runs.iter().filter(|r| !r.success).count();
    if failed > 0 {
        warnings.push(WarningEntry {
            workload: None,
            metric: None,
            variant: None,
            message: format!("{failed} run(s) failed and are left out of the statistics; see raw.jsonl and logs/"),
        });
    }
    let progress = Progress::of(meta, runs);
    if progress.is_partial() {
        warnings.push(WarningEntry {
            workload: None,
            metric: None,
            variant: None,
            message: format!(
                "partial: {} of {} rounds (the bench was stopped; `afterburner bench --resume` finishes it)",
                progress.complete_rounds, progress.planned_rounds
            ),
        });
    }
    Results {
        schema_version: crate::runs::SCHEMA_VERSION,
        run_id: meta.run_id.clone(),
        target: meta.target.clone(),
        experiment: meta.experiment.clone(),
        seed: meta.seed,
        confidence: meta.confidence,
        equivalence: meta.equivalence,
        pinning: meta.pinning.clone(),
        repetitions: meta.stopped.as_ref().map_or(meta.repetitions, |s| s.rounds),
        sequential: meta.sequential.clone(),
        stopped: meta.stopped.clone(),
        warmup: meta.warmup,
        instruction_counter: meta.instruction_counter,
        environment: meta.environment.clone(),
        revision: meta.revision.clone(),
        baseline,
        variants: meta.variants.clone(),
        training_workloads: meta.training_workloads.clone(),
        workload_sets: meta.workload_sets.clone(),
        judging: meta.judging.clone(),
        measurements,
        comparisons,
        warnings,
        runs: RunCounts {
            total: runs.len(),
            warmup: runs.iter().filter(|r| r.warmup).count(),
            failed,
            planned_rounds: progress.planned_rounds,
            complete_rounds: progress.complete_rounds,
        },
        loads: Vec::new(),
        failures: super::failures::tally(meta, runs),
        instances: Vec::new(),
        nodes: Vec::new(),
        gain_shares: None,
        explained: None,
        simulated: None,
    }
}

/// Every workload's metrics per variant, and each variant against the
/// baseline at the stated level (before the secondaries are corrected).
fn compare_all(
    meta: &BenchMeta,
    runs: &[RunRecord],
    baseline: &str,
) -> (Vec<Measurement>, Vec<ComparisonEntry>, Vec<WarningEntry>) {
    let mut measurements = Vec::new();
    let mut comparisons = Vec::new();
    let mut warnings = Vec::new();
    for workload in &meta.workloads {
        for metric in &meta.metrics {
            let per_variant: Vec<Measurement> = meta
                .variants
                .iter()
                .filter_map(|v| measurement(workload, metric, &v.name, runs))
                .collect();
            let Some(base) = per_variant.iter().find(|m| m.variant == baseline).cloned() else {
                measurements.extend(per_variant);
                continue;
            };
            if metric.cumulative && meta.judging.get(workload).is_some_and(|j| j.fixed_duration) {
                // A total over a fixed time grows with the work done: shown,
                // not judged; its per-request twin is.
                measurements.extend(per_variant);
                continue;
            }
            for m in per_variant.iter().filter(|m| m.variant != baseline) {
                if metric.precision == Precision::Share
                    && base.summary.max == 0.0
                    && m.summary.max == 0.0
                {
                    // Neither failed a request: nothing to judge, and no
                    // test to spend the report's level on.
                    continue;
                }
                match compare(meta, &base, m) {
                    Ok((entry, found)) => {
                        comparisons.push(entry);
                        warnings.extend(found);
                    }
                    Err(warning) => warnings.push(warning),
                }
            }
            measurements.extend(per_variant);
        }
    }
    (measurements, comparisons, warnings)
}

/// The curves of the last counted run of each load workload and variant,
/// read from the `<stem>.load.json` files beside the runs' logs.
pub fn load_curves(meta: &BenchMeta, runs: &[RunRecord]) -> Vec<LoadCurves> {
    let mut out = Vec::new();
    for workload in &meta.workloads {
        for variant in &meta.variants {
            let Some(run) = last_counted_run(runs, workload, &variant.name) else {
                continue;
            };
            let Some(outcome) = read_load(&run.stdout_log) else {
                continue;
            };
            out.push(LoadCurves {
                workload: workload.clone(),
                variant: variant.name.clone(),
                round: run.round,
                percentiles: outcome.summary.percentiles,
                series: outcome.series,
                cpu: read_cpu(&run.stdout_log),
                mix: outcome.summary.mix,
            });
        }
    }
    out
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
            && r.kind == crate::measure::RunKind::Timing
            && r.workload == workload
            && r.variant == variant
    })
}

/// The CPU utilization sampled during a run (`<stem>.cpu.json`); empty
/// when none was kept.
fn read_cpu(stdout_log: &std::path::Path) -> Vec<crate::cpustat::Row> {
    let stem = stdout_log.to_string_lossy();
    stem.strip_suffix(".out")
        .and_then(|s| std::fs::read(format!("{s}.cpu.json")).ok())
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .unwrap_or_default()
}

/// The load outcome saved beside a run's stdout log (`<stem>.out`): the
/// run's own, or its first instance's; an sla search's confirming run.
fn read_load(stdout_log: &std::path::Path) -> Option<crate::load::Outcome> {
    let stem = stdout_log.to_string_lossy();
    let stem = stem.strip_suffix(".out")?;
    let text = [format!("{stem}.load.json"), format!("{stem}-i0.load.json")]
        .iter()
        .find_map(|p| std::fs::read_to_string(p).ok())?;
    serde_json::from_str::<super::instances::Saved>(&text)
        .ok()
        .map(super::instances::Saved::outcome)
}

fn measurement(
    workload: &str,
    metric: &Metric,
    variant: &str,
    runs: &[RunRecord],
) -> Option<Measurement> {
    let mut pairs: Vec<(u32, f64)> = runs
        .iter()
        .filter(|r| r.workload == workload && r.variant == variant && !r.warmup && r.success)
        .filter_map(|r| metric.value(r).map(|v| (r.round, v)))
        .collect();
    pairs.sort_by_key(|p| p.0);
    let samples: Vec<f64> = pairs.iter().map(|p| p.1).collect();
    let summary = stats::summarize(&samples)?;
    Some(Measurement {
        workload: workload.to_owned(),
        metric: metric.clone(),
        variant: variant.to_owned(),
        rounds: pairs.iter().map(|p| p.0).collect(),
        samples,
        summary,
    })
}

fn default_equivalence() -> f64 {
    stats::DEFAULT_EQUIVALENCE
}

fn compare(
    meta: &BenchMeta,
    base: &Measurement,
    m: &Measurement,
) -> Result<(ComparisonEntry, Vec<WarningEntry>), WarningEntry> {
    let options = options(meta, base, m);
    let paired = options.paired;
    let judged = judge(meta, base, m, &options);
    let Some(c) = judged else {
        let warning = WarningEntry {
            workload: Some(m.workload.clone()),
            metric: Some(m.metric.name.clone()),
            variant: Some(m.variant.clone()),
            message: format!("no ratio: the baseline's mean {} is zero", m.metric.name),
        };
        return Err(warning);
    };
    let warnings = stats::warnings(
        &base.summary,
        &m.summary,
        &c,
        m.metric.precision,
        meta.confidence,
    )
    .into_iter()
    .map(|w| WarningEntry {
        workload: Some(m.workload.clone()),
        metric: Some(m.metric.name.clone()),
        variant: Some(m.variant.clone()),
        message: w.to_string(),
    })
    .collect();
    let entry = ComparisonEntry {
        workload: m.workload.clone(),
        metric: m.metric.name.clone(),
        unit: m.metric.unit.clone(),
        variant: m.variant.clone(),
        baseline: base.variant.clone(),
        outcome: c,
        paired,
        primary: false,
        level: None,
    };
    Ok((entry, warnings))
}

/// The options a comparison of `m` against `base` is judged with.
pub(super) fn options(meta: &BenchMeta, base: &Measurement, m: &Measurement) -> CompareOptions {
    CompareOptions {
        confidence: meta.confidence,
        paired: base.rounds == m.rounds,
        precision: m.metric.precision,
        lower_is_better: m.metric.lower_is_better,
        resamples: 10_000,
        seed: meta.seed,
        equivalence: meta.equivalence,
    }
}

/// Judge `m` against `base` at `options.confidence`: a sequential run look
/// by look, as it was stopped (its plan's spending at that level), else
/// all at once.
pub(super) fn judge(
    meta: &BenchMeta,
    base: &Measurement,
    m: &Measurement,
    options: &CompareOptions,
) -> Option<Comparison> {
    match &meta.sequential {
        Some(plan) => {
            let tagged = |x: &Measurement| -> Vec<(u32, f64)> {
                x.rounds
                    .iter()
                    .copied()
                    .zip(x.samples.iter().copied())
                    .collect()
            };
            let at_level;
            let plan = if (options.confidence - meta.confidence).abs() < 1e-12 {
                &plan.plan
            } else {
                at_level = crate::stats::sequential::Plan::new(
                    options.confidence,
                    plan.plan.min,
                    plan.plan.max,
                );
                &at_level
            };
            plan.decide(&tagged(base), &tagged(m), options)
                .map(|d| d.comparison)
        }
        None => stats::compare(&base.samples, &m.samples, options),
    }
}
