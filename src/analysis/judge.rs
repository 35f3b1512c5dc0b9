//! One comparison judged: the options a variant's samples are compared to
//! the baseline's with, and the verdict at a level, all at once or, for a
//! sequential plan, look by look as the bench stopped.

use super::results::Measurement;
use crate::runs::BenchMeta;
use crate::stats::{self, CompareOptions, Comparison};

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
                at_level =
                    stats::sequential::Plan::new(options.confidence, plan.plan.min, plan.plan.max);
                &at_level
            };
            plan.decide(&tagged(base), &tagged(m), options)
                .map(|d| d.comparison)
        }
        None => stats::compare(&base.samples, &m.samples, options),
    }
}
