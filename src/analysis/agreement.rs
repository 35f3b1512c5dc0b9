//! Where the quiet metric and the clock disagree. A variant that executes
//! significantly fewer instructions yet takes significantly more wall time
//! (or the reverse) moved the cost, not the work: a reader who judged it by
//! instruction counts alone would be wrong, so the report says so.
//! (gcc's PGO, -O3, LTO and BOLT stack ran `speedtest1` with 10.2% fewer
//! instructions and 6.2% more wall time than gcc -O2.)

use super::results::{ComparisonEntry, WarningEntry};
use crate::metric::MetricId;
use crate::stats::Verdict;

/// The metric counting executed work.
const WORK: MetricId = MetricId::INSTRUCTIONS;
/// The metric a user feels.
const TIME: MetricId = MetricId::WALL;

/// A warning for each workload and variant whose instruction count and wall
/// time were both called, in opposite directions.
pub fn work_versus_time(comparisons: &[ComparisonEntry]) -> Vec<WarningEntry> {
    comparisons
        .iter()
        .filter(|c| WORK.is(&c.metric))
        .filter_map(|work| {
            let time = comparisons.iter().find(|t| {
                TIME.is(&t.metric) && t.workload == work.workload && t.variant == work.variant
            })?;
            let message = disagreement(work, time)?;
            Some(WarningEntry {
                workload: Some(work.workload.clone()),
                metric: Some(format!("{WORK} and {TIME}")),
                variant: Some(work.variant.clone()),
                message,
            })
        })
        .collect()
}

fn disagreement(work: &ComparisonEntry, time: &ComparisonEntry) -> Option<String> {
    let (w, t) = (&work.outcome, &time.outcome);
    let instructions = (w.ratio - 1.0).abs() * 100.0;
    let wall = (t.ratio - 1.0).abs() * 100.0;
    let baseline = &work.baseline;
    match (w.verdict, t.verdict) {
        (Verdict::Faster, Verdict::Slower) => Some(format!(
            "executes {instructions:.1}% fewer instructions than `{baseline}` yet takes {wall:.1}% more wall time (wall-time ratio interval {:.3}–{:.3}): it removed work but added cost elsewhere (cache or TLB misses, branch mispredictions, code layout, a lower clock); judge its speed by the clock. To see where the time went, compare `perf stat -e cycles,instructions,branch-misses,cache-misses` of both builds where counters exist, or `valgrind --tool=callgrind --cache-sim=yes --branch-sim=yes` (a simulation) where they do not",
            t.ci_low, t.ci_high
        )),
        (Verdict::Slower, Verdict::Faster) => Some(format!(
            "executes {instructions:.1}% more instructions than `{baseline}` yet takes {wall:.1}% less wall time (wall-time ratio interval {:.3}–{:.3}): it does more work in less time (fewer cache misses or mispredictions, wider instructions); judge its speed by the clock, not by the instruction count",
            t.ci_low, t.ci_high
        )),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::Comparison;

    fn entry(metric: &str, variant: &str, ratio: f64, verdict: Verdict) -> ComparisonEntry {
        ComparisonEntry {
            workload: "speedtest1".to_owned(),
            metric: metric.to_owned(),
            unit: String::new(),
            variant: variant.to_owned(),
            baseline: "baseline".to_owned(),
            outcome: Comparison {
                ratio,
                improvement_pct: (1.0 - ratio) * 100.0,
                ci_low: ratio - 0.02,
                ci_high: ratio + 0.02,
                estimate: crate::stats::Estimate::RatioOfMeans,
                p_value: Some(0.01),
                mann_whitney_p: None,
                mean_ratio: None,
                mean_ci_low: None,
                mean_ci_high: None,
                median_ratio: None,
                median_ci_low: None,
                median_ci_high: None,
                signed_rank_p: None,
                verdict,
                equivalence_pct: 1.0,
                resolution_pct: None,
                rule: String::new(),
            },
            paired: true,
            primary: TIME.is(metric),
            level: None,
        }
    }

    /// The figures of run 20261123-200218 (recipes/sqlite-fdo.toml).
    #[test]
    fn fewer_instructions_but_more_time_is_flagged() {
        let comparisons = [
            entry("wall", "gcc-stack", 1.062, Verdict::Slower),
            entry("instructions", "gcc-stack", 0.898, Verdict::Faster),
            entry("wall", "clang-stack", 0.872, Verdict::Faster),
            entry("instructions", "clang-stack", 0.919, Verdict::Faster),
        ];
        let found = work_versus_time(&comparisons);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].variant.as_deref(), Some("gcc-stack"));
        assert!(
            found[0].message.starts_with(
                "executes 10.2% fewer instructions than `baseline` yet takes 6.2% more wall time"
            ),
            "{}",
            found[0].message
        );
    }

    #[test]
    fn more_instructions_but_less_time_is_flagged_and_undecided_time_is_not() {
        let reverse = [
            entry("instructions", "v3", 1.05, Verdict::Slower),
            entry("wall", "v3", 0.9, Verdict::Faster),
        ];
        let found = work_versus_time(&reverse);
        assert_eq!(found.len(), 1);
        assert!(found[0].message.contains("5.0% more instructions"));
        assert!(found[0].message.contains("10.0% less wall time"));
        // Time the bench could not call: nothing to contradict.
        let undecided = [
            entry("instructions", "pgo", 0.93, Verdict::Faster),
            entry("wall", "pgo", 1.035, Verdict::Undecided),
        ];
        assert!(work_versus_time(&undecided).is_empty());
        // Another workload's wall time is not this one's.
        let mut elsewhere = entry("wall", "pgo", 1.1, Verdict::Slower);
        elsewhere.workload = "other".to_owned();
        let mixed = [
            entry("instructions", "pgo", 0.9, Verdict::Faster),
            elsewhere,
        ];
        assert!(work_versus_time(&mixed).is_empty());
    }
}
