//! `repetitions = "auto"`: after each scheduled look, judge every primary
//! comparison (each bench workload's primary time-based metric, every
//! variant against the baseline) by the plan's alpha spending, and stop when
//! all are decided or the budget cannot fit another round. Under `check
//! --rev --budget` the comparisons waited for are the gate's pairs (each
//! variant against itself built from the baseline revision), decided when
//! the gate passes or fails them.

use std::time::Duration;

use crate::experiment::{Experiment, Workload};
use crate::measure::{Metric, RunKind, RunRecord};
use crate::metric::{LoadMetric, MetricId};
use crate::runs::SequentialMeta;
use crate::stats::gate::{default_threshold_pct, paired_looks, PairedGate, Status};
use crate::stats::sequential::Plan;
use crate::stats::{CompareOptions, Precision, Verdict};

/// The plan recorded for an experiment's `repetitions = "auto"`.
pub fn meta(e: &Experiment) -> Option<SequentialMeta> {
    e.bench.sequential.as_ref().map(|s| SequentialMeta {
        plan: Plan::new(e.bench.confidence, s.min, s.max),
        budget_s: s.budget.as_secs_f64(),
    })
}

/// The primary time-based metric of a workload: what the plan waits for.
/// Instructions are exact and decided by themselves; the quiet noisy
/// metric for each kind of workload is the one a reader asks about first.
pub fn primary_metric<'m>(workload: &Workload, metrics: &'m [Metric]) -> Option<&'m Metric> {
    if let Some(f) = workload.figures.iter().find(|f| f.primary) {
        return metrics.iter().find(|m| m.name == f.name);
    }
    let id = match workload.load.as_ref().map(|l| l.model.pacing.headline()) {
        Some(headline) => MetricId::Load(LoadMetric::headline(headline)),
        None => MetricId::WALL,
    };
    metrics.iter().find(|m| m.is(&id)).or_else(|| {
        workload
            .figures
            .first()
            .and_then(|f| metrics.iter().find(|m| m.name == f.name))
    })
}

/// One look: how many primary comparisons are decided.
pub struct Look {
    pub decided: usize,
    pub comparisons: usize,
    /// "workload/metric: variant" of those still undecided.
    pub pending: Vec<String>,
}

/// Judge every primary comparison on the runs so far (`runs`: raw.jsonl).
pub fn look(
    e: &Experiment,
    metrics: &[Metric],
    plan: &Plan,
    runs: &[RunRecord],
    equivalence: f64,
    seed: u64,
) -> Look {
    let baseline = &e.baseline().name;
    let mut out = Look {
        decided: 0,
        comparisons: 0,
        pending: Vec::new(),
    };
    for workload in e.workloads.iter().filter(|w| w.role.benches()) {
        let Some(metric) = primary_metric(workload, metrics) else {
            continue;
        };
        let samples = |variant: &str| -> Vec<(u32, f64)> {
            runs.iter()
                .filter(|r| {
                    r.workload == workload.name
                        && r.variant == variant
                        && !r.warmup
                        && r.success
                        && r.kind == RunKind::Timing
                })
                .filter_map(|r| metric.value(r).map(|v| (r.round, v)))
                .collect()
        };
        if let Some(gate) = e.bench.sequential.as_ref().and_then(|s| s.gate.as_ref()) {
            for (now, before) in &gate.pairs {
                out.comparisons += 1;
                let paired = PairedGate {
                    equivalence,
                    lower_is_better: metric.lower_is_better,
                    threshold_pct: gate
                        .threshold_pct
                        .unwrap_or(default_threshold_pct(metric.precision)),
                };
                let decided = metric.precision == Precision::Exact
                    || paired_looks(plan, &samples(before), &samples(now), paired)
                        .is_some_and(|l| l.status != Status::Inconclusive);
                if decided {
                    out.decided += 1;
                } else {
                    out.pending
                        .push(format!("{} {}: {now}", workload.name, metric.name));
                }
            }
            continue;
        }
        let base = samples(baseline);
        for variant in e.variants.iter().skip(1) {
            out.comparisons += 1;
            let options = CompareOptions {
                confidence: 1.0 - plan.alpha,
                paired: true,
                precision: metric.precision,
                lower_is_better: metric.lower_is_better,
                // The paired verdict is the median ratio's interval; the
                // bootstrap beside it is for the report, not for stopping.
                resamples: 200,
                seed,
                equivalence,
            };
            let decided = plan
                .decide(&base, &samples(&variant.name), &options)
                .is_some_and(|d| d.comparison.verdict != Verdict::Undecided);
            if decided {
                out.decided += 1;
            } else {
                out.pending.push(format!(
                    "{} {}: {}",
                    workload.name, metric.name, variant.name
                ));
            }
        }
    }
    out
}

/// Whether another round fits: the rounds so far took `elapsed`; the next
/// is taken to last as long as the longest of `rounds` so far.
pub fn fits(budget: Duration, elapsed: Duration, rounds: &[Duration]) -> bool {
    let next = rounds.iter().max().copied().unwrap_or_default();
    elapsed + next <= budget
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_round_fits_when_the_longest_so_far_would() {
        let s = Duration::from_secs;
        assert!(fits(s(100), s(50), &[s(10), s(40)]));
        assert!(!fits(s(100), s(61), &[s(10), s(40)]));
        assert!(fits(s(100), s(0), &[]));
    }
}
