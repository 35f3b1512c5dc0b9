//! The headline's rows: per workload and variant, the one comparison that
//! answers "is it faster?" — time — and the work (counted instructions)
//! beside it, with what the variant failed more than the baseline. Time is
//! wall for a command (or its declared primary figure), and for a load the
//! highest rate meeting the SLA, p99 or throughput ([`Results::primary_metric`]);
//! instructions head only where `[bench] primary = "instructions"` asked.

use super::results::{ComparisonEntry, Results};
use crate::metric::{LoadMetric, MetricId};

/// One headline row: a comparison of a workload's primary metric, and the
/// instruction count of the same variant where it was compared.
pub struct Row<'a> {
    pub workload: &'a str,
    pub comparison: &'a ComparisonEntry,
    /// The work (instructions, or a service's instructions per request)
    /// beside a time headline.
    pub work: Option<&'a ComparisonEntry>,
    /// The variant failed a larger share of its requests than the
    /// baseline (errors or timeouts): what the row must say beside a
    /// "faster", e.g. "timed out 10.0% of requests against 0.0%
    /// (`timeout_rate` slower)".
    pub failed_more: Option<String>,
    /// Whether a ratio below 1 is the better way for the row's metric
    /// (time) or above 1 (throughput, a rate under an SLA).
    pub lower_is_better: bool,
}

impl Row<'_> {
    /// Which way is better, in words: "lower is better".
    pub fn direction(&self) -> &'static str {
        direction(self.lower_is_better)
    }
}

/// Which way is better for a metric, in words.
pub fn direction(lower_is_better: bool) -> &'static str {
    if lower_is_better {
        "lower is better"
    } else {
        "higher is better"
    }
}

/// The judged shares of failed requests, and how a row names each.
const FAILURES: [(LoadMetric, &str); 2] = [
    (LoadMetric::ErrorRate, "failed"),
    (LoadMetric::TimeoutRate, "timed out"),
];

/// What `variant` failed more than the baseline on `workload`, in words;
/// `None` when it failed no larger share of its requests.
fn failed_more(results: &Results, workload: &str, variant: &str, baseline: &str) -> Option<String> {
    let said: Vec<String> = FAILURES
        .iter()
        .filter_map(|(id, verb)| {
            let metric = id.name();
            let mine = results.mean(workload, variant, metric)?;
            let theirs = results.mean(workload, baseline, metric).unwrap_or(0.0);
            if mine <= theirs {
                return None;
            }
            let judged = results
                .comparisons
                .iter()
                .find(|c| c.workload == workload && c.variant == variant && c.metric == metric)
                .map_or_else(|| "not judged".to_owned(), |c| c.outcome.verdict_text());
            Some(format!(
                "{verb} {:.1}% of requests against {:.1}% ({metric} {judged})",
                mine * 100.0,
                theirs * 100.0
            ))
        })
        .collect();
    (!said.is_empty()).then(|| said.join(" and "))
}

/// Metrics that count executed work, in the order a headline shows them.
pub const WORK: [MetricId; 2] = [MetricId::INSTRUCTIONS, MetricId::InstructionsPerRequest];

/// Whether `metric` names one that counts executed work.
pub fn counts_work(metric: &str) -> bool {
    MetricId::parse(metric).counts_work()
}

/// The headline rows, workloads in results order.
pub fn rows(results: &Results) -> Vec<Row<'_>> {
    let mut workloads: Vec<&str> = Vec::new();
    for c in &results.comparisons {
        if !workloads.contains(&c.workload.as_str()) {
            workloads.push(&c.workload);
        }
    }
    let mut out = Vec::new();
    for workload in workloads {
        let Some(metric) = results.primary_metric(workload) else {
            continue;
        };
        for c in results
            .comparisons
            .iter()
            .filter(|c| c.workload == workload && c.metric == metric)
        {
            let work = (!counts_work(metric))
                .then(|| {
                    WORK.iter().find_map(|w| {
                        results.comparisons.iter().find(|x| {
                            x.workload == workload && x.variant == c.variant && w.is(&x.metric)
                        })
                    })
                })
                .flatten();
            let lower_is_better = results
                .measurements
                .iter()
                .find(|m| m.workload == workload && m.metric.name == metric)
                .is_none_or(|m| m.metric.lower_is_better);
            out.push(Row {
                workload,
                comparison: c,
                work,
                failed_more: failed_more(results, workload, &c.variant, &c.baseline),
                lower_is_better,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Time heads the summary of a run recorded before judging was (wall
    /// here), with the instruction count beside it; a declared figure
    /// (here: user, standing in for a sysbench TPS) heads it instead.
    #[test]
    fn time_or_a_declared_primary_metric_heads_the_summary() {
        let mut results: Results =
            serde_json::from_str(include_str!("../../tests/fixtures/results/hotpath.json"))
                .unwrap();
        let metric = |r: &Results| rows(r).first().map(|row| row.comparison.metric.clone());
        assert_eq!(metric(&results).as_deref(), Some("wall"));
        assert!(rows(&results)[0]
            .work
            .is_some_and(|w| MetricId::INSTRUCTIONS.is(&w.metric)));
        for m in results.measurements.iter_mut().filter(|m| {
            m.metric
                .is(&MetricId::Builtin(crate::metric::Builtin::USER))
        }) {
            m.metric.primary = true;
        }
        assert_eq!(metric(&results).as_deref(), Some("user"));
    }
}
