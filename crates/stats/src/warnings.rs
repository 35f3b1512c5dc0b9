//! What a reader of a comparison should know before trusting it.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::{resolution, Comparison, Precision, Summary, Verdict};

/// Runs per side below which a rank test only calls near-total separations.
const WEAK_TEST_BELOW: usize = 8;
/// Repetitions to suggest when too few ran (the default of `[bench] repetitions`).
const SUGGESTED_RUNS: usize = 10;
/// Callgrind repetitions to suggest when one ran (the default of
/// `[bench] instruction_repetitions`).
const SUGGESTED_EXACT_RUNS: usize = 3;
/// Cap on the repetitions `NoiseHidesEffect` estimates; beyond it, more runs
/// are not the remedy.
const MAX_SUGGESTED_RUNS: usize = 1000;
/// Noisy effects under 1% are below what timing on a shared machine can hope
/// to resolve; warning about them would only be noise.
const NOISE_WARNING_FLOOR: f64 = 0.01;
/// Exact-metric effects under 0.1% are too small to be worth a warning.
const SPREAD_WARNING_FLOOR: f64 = 0.001;

/// Something a reader of a comparison should know before trusting it. The
/// `Display` text says what to do; reports print it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Warning {
    /// Too few runs for the rule to work: a noisy metric below `minimum` per
    /// side can never be called (or, below 8, only on near-total separation);
    /// an exact metric with one run has no measured spread.
    TooFewRuns {
        /// Runs on the smaller side (a count).
        per_side: usize,
        /// The fewest runs per side with which the rule can call a difference.
        minimum: usize,
        /// Runs per side to set instead.
        suggested: usize,
        /// Which rule, and so which setting, the advice is about.
        precision: Precision,
    },
    /// A noisy metric whose noise is too large for the effect seen.
    NoiseHidesEffect {
        /// The larger coefficient of variation of the two sides, in percent.
        cv_pct: f64,
        /// |ratio − 1|, in percent.
        effect_pct: f64,
        /// Runs on the smaller side (a count).
        per_side: usize,
        /// Runs per side that would detect the effect, n ≈ 16·(cv/effect)²
        /// (Lehr's rule: 80% power at the 5% level), at most 1000.
        needed: usize,
        /// The estimate exceeded the cap: more runs are not the remedy.
        capped: bool,
    },
    /// An exact metric whose run-to-run spread hides the difference seen.
    SpreadHidesEffect {
        /// The resolution as a percentage of the baseline mean.
        spread_pct: f64,
        /// |ratio − 1|, in percent.
        effect_pct: f64,
    },
    /// Every sample of both sets is the same value.
    IdenticalSamples {
        /// That value, in the metric's unit.
        value: f64,
    },
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Warning::TooFewRuns { per_side, suggested, precision: Precision::Exact, .. } => write!(
                f,
                "only {per_side} run per variant of an exact metric: the spread a difference is judged against is unmeasured; set `instruction_repetitions = {suggested}` under [bench]"
            ),
            Warning::TooFewRuns { per_side, minimum, suggested, .. } if per_side < minimum => write!(
                f,
                "too few repetitions ({per_side} per variant): a rank test needs at least {minimum} per side to reach significance, so this metric can never be called faster or slower; set `repetitions = {suggested}` under [bench]"
            ),
            Warning::TooFewRuns { per_side, suggested, .. } => write!(
                f,
                "few repetitions ({per_side} per variant): the rank test calls a difference only when nearly every run of one variant beats every run of the other; set `repetitions = {suggested}` under [bench] for a test that tolerates noise"
            ),
            Warning::NoiseHidesEffect { cv_pct, effect_pct, needed, capped: true, .. } => write!(
                f,
                "noise (CV {cv_pct:.1}%) dwarfs the observed effect ({effect_pct:.1}%): more than {needed} repetitions per variant would be needed; quiet the machine (pin the benchmark to a CPU, stop other load) or judge by instruction counts"
            ),
            Warning::NoiseHidesEffect { cv_pct, effect_pct, per_side, needed, capped: false } => write!(
                f,
                "noise (CV {cv_pct:.1}%) is too high to detect the observed effect ({effect_pct:.1}%) with {per_side} repetitions: about {needed} per variant would be needed (n ≈ 16·(CV/effect)²); set `repetitions = {needed}` under [bench], or quiet the machine (pin the benchmark to a CPU, stop other load)"
            ),
            Warning::SpreadHidesEffect { spread_pct, effect_pct } => write!(
                f,
                "the exact metric varies by {spread_pct:.2}% between runs of the same build, which hides the observed difference ({effect_pct:.2}%): the program does not execute the same instructions every run (threads, timers, randomness); judge it by wall time instead"
            ),
            Warning::IdenticalSamples { value } => write!(
                f,
                "every run of both variants measured exactly {value}: the metric cannot tell them apart; check that it measures this workload (a clock too coarse for it, a command that does nothing) and that the variant really differs from the baseline"
            ),
        }
    }
}

/// Warnings for one comparison made by [`compare`] at `confidence` (the same
/// fraction as [`CompareOptions::confidence`]). Identical samples give only
/// [`Warning::IdenticalSamples`]: more runs of a constant would not help.
pub fn warnings(
    baseline: &Summary,
    variant: &Summary,
    comparison: &Comparison,
    precision: Precision,
    confidence: f64,
) -> Vec<Warning> {
    #[allow(clippy::float_cmp)] // identical means exactly equal
    let identical =
        baseline.min == baseline.max && variant.min == variant.max && baseline.min == variant.min;
    if identical {
        return vec![Warning::IdenticalSamples {
            value: baseline.min,
        }];
    }
    let per_side = baseline.n.min(variant.n);
    let undecided = comparison.verdict == Verdict::Undecided;
    // The sample sizes below are those of a difference of means.
    let effect = (comparison.mean_ratio.unwrap_or(comparison.ratio) - 1.0).abs();
    let mut out = Vec::new();
    out.extend(too_few_runs(per_side, undecided, precision, confidence));
    if undecided {
        out.extend(match precision {
            Precision::Noisy | Precision::Share => {
                noise_hides_effect(baseline, variant, effect, per_side)
            }
            Precision::Exact => spread_hides_effect(baseline, variant, effect),
        });
    }
    out
}

fn too_few_runs(
    per_side: usize,
    undecided: bool,
    precision: Precision,
    confidence: f64,
) -> Option<Warning> {
    let (minimum, suggested, warn) = match precision {
        Precision::Noisy | Precision::Share => {
            let minimum = min_runs_for(confidence);
            let weak = per_side < WEAK_TEST_BELOW && undecided;
            (
                minimum,
                SUGGESTED_RUNS.max(minimum),
                per_side < minimum || weak,
            )
        }
        Precision::Exact => (2, SUGGESTED_EXACT_RUNS, per_side < 2),
    };
    warn.then_some(Warning::TooFewRuns {
        per_side,
        minimum,
        suggested,
        precision,
    })
}

fn noise_hides_effect(b: &Summary, v: &Summary, effect: f64, per_side: usize) -> Option<Warning> {
    if effect < NOISE_WARNING_FLOOR {
        return None;
    }
    let cv = b.cv.max(v.cv);
    let estimate = (16.0 * (cv / effect).powi(2)).ceil();
    let capped = estimate > MAX_SUGGESTED_RUNS as f64;
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // 0 ≤ estimate ≤ cap
    let needed = estimate.min(MAX_SUGGESTED_RUNS as f64) as usize;
    (needed > per_side).then_some(Warning::NoiseHidesEffect {
        cv_pct: cv * 100.0,
        effect_pct: effect * 100.0,
        per_side,
        needed,
        capped,
    })
}

fn spread_hides_effect(b: &Summary, v: &Summary, effect: f64) -> Option<Warning> {
    if effect < SPREAD_WARNING_FLOOR || b.mean == 0.0 {
        return None;
    }
    Some(Warning::SpreadHidesEffect {
        spread_pct: resolution(b, v) / b.mean.abs() * 100.0,
        effect_pct: effect * 100.0,
    })
}

/// The fewest runs per side for which an exact two-sided rank test can get
/// below 1 − confidence: with n per side the smallest p is 2 / C(2n, n).
pub fn min_runs_for(confidence: f64) -> usize {
    let alpha = 1.0 - confidence;
    (1..64)
        .find(|&n| {
            let mut c = 1.0_f64;
            for i in 0..n {
                c = c * (2 * n - i) as f64 / (i + 1) as f64;
            }
            2.0 / c < alpha
        })
        .unwrap_or(64)
}
