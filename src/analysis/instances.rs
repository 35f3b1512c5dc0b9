//! Each instance of a load (`instances = N`: copies of the services and
//! the load side by side), from the last counted run of each workload and
//! variant: what it was asked, what it achieved, its latency, read from the
//! per-instance files beside the run's logs. An instance far below its
//! siblings is flagged unhealthy, as seed 004 advises ("one or more
//! instances have significantly lower performance than the others … the
//! experiment is probably unsuccessful"): achieved below 75% of the median
//! of the others.

use std::path::Path;

use super::results::{Instance, Instances, HEALTHY_SHARE};
use crate::load::Summary;
use crate::measure::RunRecord;
use crate::runs::{last_counted_run, read_instances, BenchMeta, SavedLoad};

/// The instances of the last counted run of each load workload and
/// variant that ran more than one.
pub fn read(meta: &BenchMeta, runs: &[RunRecord]) -> Vec<Instances> {
    let mut out = Vec::new();
    for workload in &meta.workloads {
        for variant in &meta.variants {
            let Some(run) = last_counted_run(runs, workload, &variant.name) else {
                continue;
            };
            let Some(mut set) = read_run(&run.stdout_log) else {
                continue;
            };
            set.workload.clone_from(workload);
            set.variant.clone_from(&variant.name);
            set.round = run.round;
            judge(&mut set.instances);
            out.push(set);
        }
    }
    out
}

/// The instances of one run, from its per-instance files
/// (`<stem>-i0.load.json`, …); `None` for a run of one instance.
fn read_run(stdout_log: &Path) -> Option<Instances> {
    let mut set = Instances {
        workload: String::new(),
        variant: String::new(),
        round: 0,
        percentile: 95.0,
        target_latency_ms: None,
        instances: Vec::new(),
    };
    for (index, saved) in read_instances(stdout_log)?.iter().enumerate() {
        let (summary, requested) = match saved {
            SavedLoad::Found(found) => {
                set.percentile = found.percentile.unwrap_or(95.0);
                set.target_latency_ms = found.max_ms;
                (&found.confirm.summary, Some(found.rate_rps))
            }
            SavedLoad::Outcome(outcome) => (&outcome.summary, outcome.summary.requested_rps),
        };
        set.instances.push(Instance {
            index: index + 1,
            requested_rps: requested,
            achieved_rps: summary.achieved_rps,
            latency_ms: latency_at(summary, set.percentile),
            requests: summary.requests,
            healthy: true,
            note: None,
        });
    }
    (set.instances.len() > 1).then_some(set)
}

/// The latency at `percentile` from a summary's table (the nearest
/// recorded percentile at or above it).
fn latency_at(summary: &Summary, percentile: f64) -> f64 {
    summary
        .percentiles
        .iter()
        .find(|p| p.percentile >= percentile - 1e-9)
        .map_or(summary.latency_ms.p95, |p| p.ms)
}

/// Flag the instances that achieved below [`HEALTHY_SHARE`] of the median
/// of their siblings.
pub fn judge(instances: &mut [Instance]) {
    let rates: Vec<f64> = instances.iter().map(|i| i.achieved_rps).collect();
    for (k, instance) in instances.iter_mut().enumerate() {
        let mut others: Vec<f64> = rates
            .iter()
            .enumerate()
            .filter(|(j, _)| *j != k)
            .map(|(_, r)| *r)
            .collect();
        if others.is_empty() {
            continue;
        }
        others.sort_by(f64::total_cmp);
        let mid = others.len() / 2;
        let median = if others.len().is_multiple_of(2) {
            f64::midpoint(others[mid - 1], others[mid])
        } else {
            others[mid]
        };
        if instance.achieved_rps < HEALTHY_SHARE * median {
            instance.healthy = false;
            instance.note = Some(format!(
                "achieved {:.1} requests/s, {:.0}% of its siblings' median {median:.1}: probably killed or starved; rerun",
                instance.achieved_rps,
                100.0 * instance.achieved_rps / median
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(rate: f64) -> Instance {
        Instance {
            index: 1,
            requested_rps: None,
            achieved_rps: rate,
            latency_ms: 1.0,
            requests: 100,
            healthy: true,
            note: None,
        }
    }

    #[test]
    fn an_instance_far_below_its_siblings_is_flagged_and_close_ones_are_not() {
        // Seed 004's four instances: 248.38, 248.98, 249.73, 248.98 q/s.
        let mut close: Vec<Instance> = [248.38, 248.98, 249.73, 248.98].map(at).into();
        judge(&mut close);
        assert!(close.iter().all(|i| i.healthy));
        let mut one_slow: Vec<Instance> = [248.0, 249.0, 120.0, 250.0].map(at).into();
        judge(&mut one_slow);
        let flagged: Vec<bool> = one_slow.iter().map(|i| i.healthy).collect();
        assert_eq!(flagged, [true, true, false, true]);
        assert!(one_slow[2].note.as_deref().unwrap().contains("48%"));
        // Two instances: the slow one is flagged, the fast one is not.
        let mut two: Vec<Instance> = [1000.0, 300.0].map(at).into();
        judge(&mut two);
        assert_eq!(
            two.iter().map(|i| i.healthy).collect::<Vec<_>>(),
            [true, false]
        );
    }
}
