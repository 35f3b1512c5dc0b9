//! Two runs side by side: for every workload, metric and variant present
//! in both, B's samples judged against A's with the same statistics and
//! verdict rule as a bench (unpaired: the runs were not interleaved with
//! each other). `afterburner compare A B` draws it as a table (the
//! report's `compare.rs`); `afterburner check` judges a run against its
//! baseline run with it.

use super::results::{Measurement, Results};
use crate::stats::{self, CompareOptions, Comparison};

/// One workload, metric and variant measured in both runs, B judged
/// against A.
pub struct Across<'a> {
    /// A's measurement (the earlier run, or the baseline run of a check).
    pub a: &'a Measurement,
    /// B's measurement of the same workload, metric and variant.
    pub b: &'a Measurement,
    /// B against A: ratio B/A, interval, p-value, verdict and its rule.
    pub outcome: Comparison,
}

/// Every workload, metric and variant present in both runs, B's samples
/// judged against A's (unpaired bootstrap, Mann-Whitney U for noisy
/// metrics, the resolution for exact ones; A's confidence and margin), in
/// A's order. Left out: what only one run measured, and a baseline mean of
/// zero (no ratio).
pub fn across<'a>(a: &'a Results, b: &'a Results) -> Vec<Across<'a>> {
    let mut out = Vec::new();
    for ma in &a.measurements {
        let Some(mb) = b.measurements.iter().find(|m| {
            m.workload == ma.workload && m.metric.name == ma.metric.name && m.variant == ma.variant
        }) else {
            continue;
        };
        let options = CompareOptions {
            confidence: a.confidence,
            paired: false,
            precision: ma.metric.precision,
            lower_is_better: ma.metric.lower_is_better,
            resamples: 10_000,
            seed: a.seed ^ b.seed,
            equivalence: a.equivalence,
        };
        if let Some(outcome) = stats::compare(&ma.samples, &mb.samples, &options) {
            out.push(Across {
                a: ma,
                b: mb,
                outcome,
            });
        }
    }
    out
}
