//! A report as a family of tests. Each workload's headline comparison (its
//! primary metric, every variant against the baseline) is tested at the
//! stated level; every other noisy comparison of the report is secondary,
//! and the secondaries are corrected for their number by Holm's step-down,
//! so that a report of two identical builds claims any difference in at
//! most α of trials, not α per metric (ten metrics at 5% each claim
//! something in ~40% of A/A reports). Exact metrics (callgrind counts) are
//! judged by their measured resolution, not a test, and stay outside.

use std::collections::BTreeMap;

use super::results::{judge, options, ComparisonEntry, Measurement};
use crate::runs::{BenchMeta, Judging};
use crate::stats::{holm, Precision, Verdict};

/// Metrics that head a workload when its judging was not recorded (runs
/// before it was): time first, in this order.
const FALLBACK: [&str; 4] = ["sla_rate", "throughput", "p99", "wall"];

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
        .find_map(|name| {
            comparisons
                .iter()
                .find(|c| c.workload == workload && c.metric == *name)
        })
        .or(first)
        .map(|c| c.metric.as_str())
}

/// Mark headline comparisons, and re-judge the secondary ones at Holm's
/// levels: in order of their p-values, the k-th (from 0) of m at
/// α / (m − k); at the first that is then not called faster or slower,
/// the step-down stops, and it and every later one can at most be "same"
/// or undecided.
pub fn correct(
    meta: &BenchMeta,
    measurements: &[Measurement],
    comparisons: &mut [ComparisonEntry],
) {
    let alpha = 1.0 - meta.confidence;
    let heads: Vec<bool> = comparisons
        .iter()
        .map(|c| {
            primary(&meta.judging, measurements, comparisons, &c.workload)
                == Some(c.metric.as_str())
        })
        .collect();
    let mut family = Vec::new();
    for (i, c) in comparisons.iter_mut().enumerate() {
        c.primary = heads[i];
        let tested = c.outcome.p_value.is_some() && !is_exact(measurements, c);
        if c.primary && tested {
            c.level = Some(alpha);
        } else if tested {
            family.push(i);
        }
    }
    let p: Vec<f64> = family
        .iter()
        .map(|&i| decisive_p(&comparisons[i]))
        .collect();
    let levels = holm::levels(&p, alpha);
    let mut rejecting = true;
    for k in holm::order(&p) {
        let c = &mut comparisons[family[k]];
        let level = levels[k];
        c.level = Some(level);
        if let Some(mut judged) = rejudge(meta, measurements, c, level) {
            let claims = matches!(judged.verdict, Verdict::Faster | Verdict::Slower);
            rejecting &= claims;
            if claims && !rejecting {
                judged.verdict = Verdict::Undecided;
                judged.resolution_pct = Some(resolution(&judged));
            }
            judged.rule = format!("{} {}", judged.rule, rule(family.len(), alpha));
            c.outcome = judged;
        }
    }
}

/// The p-value of the test that decides: the signed-rank test's for
/// paired rounds, else the Mann-Whitney U test's.
fn decisive_p(c: &ComparisonEntry) -> f64 {
    c.outcome.signed_rank_p.or(c.outcome.p_value).unwrap_or(1.0)
}

fn is_exact(measurements: &[Measurement], c: &ComparisonEntry) -> bool {
    measurements
        .iter()
        .find(|m| m.workload == c.workload && m.metric.name == c.metric)
        .is_some_and(|m| m.metric.precision == Precision::Exact)
}

/// `c` judged again at significance `level`.
fn rejudge(
    meta: &BenchMeta,
    measurements: &[Measurement],
    c: &ComparisonEntry,
    level: f64,
) -> Option<crate::stats::Comparison> {
    let find = |variant: &str| {
        measurements
            .iter()
            .find(|m| m.workload == c.workload && m.metric.name == c.metric && m.variant == variant)
    };
    let (base, m) = (find(&c.baseline)?, find(&c.variant)?);
    let mut options = options(meta, base, m);
    options.confidence = 1.0 - level;
    judge(meta, base, m, &options)
}

/// The resolution an undecided verdict reached: the farther bound of the
/// deciding interval from 1, in percent.
fn resolution(c: &crate::stats::Comparison) -> f64 {
    let (low, high) = match (c.median_ci_low, c.median_ci_high) {
        (Some(low), Some(high)) => (low, high),
        _ => (c.ci_low, c.ci_high),
    };
    (1.0 - low).max(high - 1.0).max(0.0) * 100.0
}

/// The sentence a secondary comparison's rule ends with.
fn rule(m: usize, alpha: f64) -> String {
    format!(
        "Secondary metric, one of this report's {m} secondary comparisons: corrected by Holm's step-down (Holm 1979), the k-th smallest p-value (from 0) tested at α / ({m} − k) with α = {}, stopping at the first not rejected, so that the report as a whole claims a false difference with probability at most α; its level is results.json's `level`.",
        (alpha * 1e6).round() / 1e6
    )
}
