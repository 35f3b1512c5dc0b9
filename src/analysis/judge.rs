//! One comparison judged: the options a variant's samples are compared to
//! the baseline's with, and the verdict at a level, all at once or, for a
//! sequential plan, look by look as the bench stopped.

use super::results::Measurement;
use crate::runs::BenchMeta;
use crate::stats::{self, CompareOptions, Comparison};

/// The runs a comparison of `m` against `base` takes, where they are not
/// all of both: in a race, where a dropped candidate (the baseline too)
/// stops running, those of the rounds both ran, paired (a survivor's later
/// rounds have no partner, and their drift would bias an unpaired ratio).
/// `None`: all of both (any other bench, the same rounds, or no round in
/// common).
pub(super) fn in_common(
    meta: &BenchMeta,
    base: &Measurement,
    m: &Measurement,
) -> Option<(Measurement, Measurement)> {
    if meta.race.is_none() || base.rounds == m.rounds {
        return None;
    }
    let keep = |x: &Measurement, other: &Measurement| -> Option<Measurement> {
        let (rounds, samples): (Vec<u32>, Vec<f64>) = x
            .rounds
            .iter()
            .zip(&x.samples)
            .filter(|(r, _)| other.rounds.contains(r))
            .map(|(r, v)| (*r, *v))
            .unzip();
        Some(Measurement {
            summary: stats::summarize(&samples)?,
            rounds,
            samples,
            ..x.clone()
        })
    };
    Some((keep(base, m)?, keep(m, base)?))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::{InstructionCounter, Metric};
    use crate::metric::Builtin;
    use crate::runs::RaceMeta;
    use crate::stats::race::RacePlan;

    fn wall(variant: &str, rounds: &[u32]) -> Measurement {
        let samples: Vec<f64> = rounds.iter().map(|r| 1.0 + f64::from(*r) / 10.0).collect();
        Measurement {
            workload: "w".to_owned(),
            metric: Metric::builtin(Builtin::WALL, InstructionCounter::Callgrind),
            variant: variant.to_owned(),
            rounds: rounds.to_vec(),
            summary: stats::summarize(&samples).unwrap(),
            samples,
        }
    }

    /// A race's baseline dropped after 3 rounds: a survivor is set against
    /// it on those 3 rounds, paired; a bench of the full design keeps every
    /// run (a round missing there unpairs, as before).
    #[test]
    fn a_race_pairs_the_rounds_both_ran() {
        let mut meta = BenchMeta::for_tests(&["base", "v"], &["w"], 10, Vec::new());
        let (base, v) = (
            wall("base", &[0, 1, 2]),
            wall("v", &(0..10).collect::<Vec<_>>()),
        );
        assert!(in_common(&meta, &base, &v).is_none());
        meta.race = Some(RaceMeta {
            plan: RacePlan::new(0.95, 2, 2, 10, 0.02),
            budget_s: 60.0,
            full_rounds: 10,
            screen: None,
            left_out: Vec::new(),
        });
        let (b, m) = in_common(&meta, &base, &v).unwrap();
        assert_eq!(
            (b.rounds.as_slice(), m.rounds.as_slice()),
            (&[0, 1, 2][..], &[0, 1, 2][..])
        );
        assert_eq!(m.samples, [1.0, 1.1, 1.2]);
        assert_eq!(m.summary.n, 3);
        assert!(options(&meta, &b, &m).paired);
        assert!(in_common(&meta, &v, &v).is_none());
    }
}
