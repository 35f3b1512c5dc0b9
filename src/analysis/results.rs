//! `results.json`: the analysed outcome of one bench run. Every type of the
//! format is defined here, documented field by field (and in
//! `docs/results-schema.md`); `schema_version` changes on any incompatible
//! change. What fills them is computed beside this file, in the rest of
//! [`crate::analysis`].

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::env::Environment;
use crate::measure::{InstructionCounter, Metric};
use crate::metric::{LoadMetric, MetricId};
use crate::runs::{Judging, VariantInfo};
use crate::stats::{self, Comparison, Summary, Verdict};

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
    pub failures: Vec<Failures>,
    /// Each instance of loads run as several (`instances = N`): asked,
    /// achieved, latency, and whether it kept up with its siblings.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub instances: Vec<Instances>,
    /// A cluster run's blocks, each analysed alone, with its node.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nodes: Vec<Node>,
    /// With `[report] gain_reference` or `[[report.gain]]`: each
    /// variant's share of a reference variant's gain over a base, per
    /// workload and judged metric, with Fieller's interval; one entry per
    /// reference and base. (Runs recorded before `[[report.gain]]` have
    /// one object here, read as a list of one.)
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "one_or_many"
    )]
    pub gain_shares: Vec<GainShares>,
    /// `afterburner race`: who won, tied or dropped when, and what it cost.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub race: Option<super::race::RaceResult>,
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
    /// Whether samples were paired by round (interleaved runs); in a race,
    /// over the rounds both ran (a dropped candidate, the baseline too,
    /// runs no more).
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

/// One load workload's requests on one variant, over its counted runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Failures {
    pub workload: String,
    pub variant: String,
    /// Counted runs added up (warmup and failed runs left out).
    pub runs: usize,
    /// Requests answered successfully.
    pub answered: u64,
    /// Requests that failed: error replies, lost or refused connections.
    pub errors: u64,
    /// Requests unanswered within the load's timeout (in its latency at
    /// the timeout).
    pub timeouts: u64,
    /// The failed requests by kind (`connection`, `protocol`, `server`,
    /// `fatal`); kinds that did not occur are absent.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub by_kind: BTreeMap<String, u64>,
}

impl Failures {
    /// Requests attempted: answered, failed and timed out.
    pub fn attempted(&self) -> u64 {
        self.answered + self.errors + self.timeouts
    }
}

/// An instance is unhealthy below this share of its siblings' median.
pub const HEALTHY_SHARE: f64 = 0.75;

/// The instances of one load run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Instances {
    pub workload: String,
    pub variant: String,
    /// The round of the run they come from.
    pub round: u32,
    /// The percentile `latency_ms` is read at: the SLA's (95 for
    /// `p95<500ms`), else 95.
    pub percentile: f64,
    /// The SLA's bound, in milliseconds, for an `sla` load.
    pub target_latency_ms: Option<f64>,
    pub instances: Vec<Instance>,
}

/// One instance of a load run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Instance {
    /// From 1.
    pub index: usize,
    /// Requests per second asked of it (a paced load, or the rate an SLA
    /// search confirmed).
    pub requested_rps: Option<f64>,
    /// Requests per second answered.
    pub achieved_rps: f64,
    /// Latency at `percentile`, in milliseconds.
    pub latency_ms: f64,
    /// Requests answered.
    pub requests: u64,
    /// Whether it kept up with its siblings (see [`HEALTHY_SHARE`]).
    pub healthy: bool,
    /// Why it is not healthy.
    pub note: Option<String>,
}

/// One block of a cluster run and its comparisons.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Node {
    /// The block (the job array's task index).
    pub block: u32,
    /// The node it ran on (its host name), when captured.
    pub node: Option<String>,
    pub cpu_model: Option<String>,
    pub logical_cpus: usize,
    pub complete_rounds: u32,
    pub planned_rounds: u32,
    /// Each comparison of the merged report, on this block alone.
    pub comparisons: Vec<NodeComparison>,
    /// The node's machine and software, captured when the block began.
    pub environment: crate::env::Environment,
    /// Where the block's load ran when it had a node of its own (`[cluster]
    /// load = "separate"`): the service node (the block's), the load node,
    /// and their addresses on the cluster network.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_path: Option<crate::runs::LoadPath>,
}

/// A variant against the baseline on one block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct NodeComparison {
    pub workload: String,
    pub metric: String,
    pub variant: String,
    /// The ratio that decides (the median per-round ratio where rounds
    /// are paired and the metric noisy, else the ratio of means), and its
    /// interval.
    pub ratio: f64,
    pub ci_low: f64,
    pub ci_high: f64,
    pub verdict: Verdict,
}

/// `gain_shares` as a list, or as the one object (or null) that runs
/// recorded before `[[report.gain]]` have.
fn one_or_many<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<GainShares>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum OneOrMany {
        Many(Vec<GainShares>),
        One(Box<GainShares>),
    }
    Ok(match Option::<OneOrMany>::deserialize(d)? {
        None => Vec::new(),
        Some(OneOrMany::Many(all)) => all,
        Some(OneOrMany::One(one)) => vec![*one],
    })
}

/// Every variant's share of the reference variant's gain.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GainShares {
    /// The base B the gains are measured from: the baseline with
    /// `gain_reference`, a `[[report.gain]]`'s `base` (empty in runs
    /// recorded before it: the baseline).
    #[serde(default)]
    pub base: String,
    /// The reference variant R (`[report] gain_reference`).
    pub reference: String,
    /// How the shares and their intervals were computed, one sentence.
    pub rule: String,
    /// Per workload: its headline metric first, the work (instructions)
    /// next, then the other judged metrics; per metric, the variants in
    /// experiment order.
    pub shares: Vec<ShareEntry>,
    /// Each variant with `recordings = N`: the mean of its recordings'
    /// shares and its interval across them, per workload and metric.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub across_recordings: Vec<RecordedShare>,
}

/// The shares of one variant's recordings (`recordings = N`) on one
/// workload and metric, taken together.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RecordedShare {
    pub workload: String,
    /// Metric name.
    pub metric: String,
    /// The variant as the file names it (its recordings are `NAME.1` …).
    pub variant: String,
    /// Whether this is its workload's headline metric (absent when false).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub primary: bool,
    /// Each recording's share, in recording order.
    pub shares: Vec<f64>,
    /// Their mean, unitless.
    pub share: f64,
    /// Student's t interval of the mean across the recordings, unitless.
    pub ci_low: f64,
    pub ci_high: f64,
    /// Recordings − 1.
    pub df: f64,
}

/// One variant's share of the reference's gain on one workload and metric.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ShareEntry {
    pub workload: String,
    /// Metric name.
    pub metric: String,
    pub variant: String,
    /// Whether this is its workload's headline metric (absent when false).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub primary: bool,
    /// `(mean_B − mean_V) / (mean_B − mean_R)`, unitless: 1 is all of R's
    /// gain, 0 none, below 0 worse than the baseline, above 1 more than R;
    /// absent when R's mean equals the baseline's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub share: Option<f64>,
    /// Lower bound of Fieller's interval of the share, unitless; absent
    /// when the interval is unbounded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ci_low: Option<f64>,
    /// Upper bound of Fieller's interval of the share, unitless.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ci_high: Option<f64>,
    /// False when R's own gain is not significantly different from zero at
    /// the report's confidence: Fieller's set then has no finite bounds.
    pub bounded: bool,
    /// Whether the runs were paired by round (every round ran the
    /// baseline, the variant and the reference): each round's differences
    /// from the baseline are then one observation, and `df` is rounds − 1.
    pub paired: bool,
    /// Degrees of freedom the t quantile was taken with: rounds − 1 when
    /// paired, else Satterthwaite's for the contrast at the estimate.
    pub df: f64,
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
    /// The estimate and interval that decided, as every report shows them
    /// (estimate, low, high; unitless ratios): results.json's `ratio`,
    /// `ci_low` and `ci_high`, whichever estimate `estimate` names.
    pub fn interval(&self) -> (f64, f64, f64) {
        let o = &self.outcome;
        (o.ratio, o.ci_low, o.ci_high)
    }
}

impl Results {
    /// The headline metric of `workload` (see [`primary`]): time unless
    /// `[bench] primary = "instructions"` or a declared figure.
    pub fn primary_metric(&self, workload: &str) -> Option<&str> {
        primary(
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

/// Metrics that head a workload when its judging was not recorded (runs
/// before it was): time first, in this order.
const FALLBACK: [MetricId; 4] = [
    MetricId::Load(LoadMetric::SlaRate),
    MetricId::Load(LoadMetric::Throughput),
    MetricId::Load(LoadMetric::P99),
    MetricId::WALL,
];

/// The headline metric of `workload`: the recorded one, else a figure
/// declared primary, else the first of [`FALLBACK`] compared, else the
/// first compared.
pub fn primary<'a>(
    judging: &'a BTreeMap<String, Judging>,
    measurements: &'a [Measurement],
    comparisons: &'a [ComparisonEntry],
    workload: &str,
) -> Option<&'a str> {
    let compared = |name: &str| {
        comparisons
            .iter()
            .any(|c| c.workload == workload && c.metric == name)
    };
    if let Some(j) = judging.get(workload) {
        return Some(j.primary.as_str());
    }
    if let Some(m) = measurements
        .iter()
        .find(|m| m.workload == workload && m.metric.primary && compared(&m.metric.name))
    {
        return Some(&m.metric.name);
    }
    let first = comparisons.iter().find(|c| c.workload == workload);
    FALLBACK
        .iter()
        .find_map(|id| {
            comparisons
                .iter()
                .find(|c| c.workload == workload && id.is(&c.metric))
        })
        .or(first)
        .map(|c| c.metric.as_str())
}

fn default_equivalence() -> f64 {
    stats::DEFAULT_EQUIVALENCE
}
