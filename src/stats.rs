//! Statistics of repeated runs: summaries (mean, median, STDDEVP, CV), the
//! Mann-Whitney U test, bootstrap intervals of a ratio of means, the verdict
//! rule (rank test and interval for noisy metrics, resolution for exact ones)
//! and the warnings a reader needs before trusting a verdict.
//!
//! Samples are finite values in the metric's unit (seconds, KiB, instructions,
//! requests per second). For such input no function here panics or returns a
//! NaN: degenerate cases (one sample, identical samples, all zeros) give "no
//! significant difference", and an undefined ratio (a zero baseline mean with
//! a non-zero variant) gives `None`.

use std::cmp::Ordering;
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::rng::Rng;

/// An exact metric's difference must exceed this many resolutions to count.
const RESOLUTIONS: f64 = 3.0;
/// The resolution of an exact metric is never taken below this fraction of
/// the baseline mean: a spread of 0 in three runs does not prove that one
/// instruction in a billion is a real difference.
const RESOLUTION_FLOOR: f64 = 1e-6;
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

/// Summary of one sample set; every field is in the metric's unit except `n`
/// and `cv`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Number of samples (a count).
    pub n: usize,
    /// Arithmetic mean, in the metric's unit.
    pub mean: f64,
    /// Median (the mean of the two middle samples when `n` is even), in the
    /// metric's unit.
    pub median: f64,
    /// Smallest sample, in the metric's unit.
    pub min: f64,
    /// Largest sample, in the metric's unit.
    pub max: f64,
    /// Population standard deviation (divisor n; the seeds' STDDEVP), in the
    /// metric's unit.
    pub stddevp: f64,
    /// Coefficient of variation, stddevp / |mean|, as a fraction (0.05 = 5%);
    /// 0 when the mean is 0.
    pub cv: f64,
}

/// Summarize samples; `None` when there are none.
pub fn summarize(samples: &[f64]) -> Option<Summary> {
    let n = samples.len();
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    let (&min, &max) = (sorted.first()?, sorted.last()?);
    // A sum's rounding can put the mean of [0.1; 3] a hair above 0.1; keep it
    // within the samples so identical samples have exactly zero spread.
    let mean = mean(samples).clamp(min, max);
    let variance = samples.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64;
    let stddevp = variance.sqrt();
    let median = if n % 2 == 1 {
        sorted[n / 2]
    } else {
        f64::midpoint(sorted[n / 2 - 1], sorted[n / 2])
    };
    let cv = if mean == 0.0 {
        0.0
    } else {
        stddevp / mean.abs()
    };
    Some(Summary {
        n,
        mean,
        median,
        min,
        max,
        stddevp,
        cv,
    })
}

fn mean(samples: &[f64]) -> f64 {
    samples.iter().sum::<f64>() / samples.len() as f64
}

/// How the Mann-Whitney p-value was computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum UMethod {
    /// Exact null distribution (at most 8 samples on some side, and no ties).
    Exact,
    /// Normal approximation with tie and continuity corrections.
    Asymptotic,
}

/// A two-sided Mann-Whitney U test.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct MannWhitney {
    /// U statistic of the first sample, as `scipy.stats.mannwhitneyu` reports
    /// it (a count of pairs, ties counting one half).
    pub u: f64,
    /// Two-sided p-value (a probability, 0 to 1).
    pub p_value: f64,
    /// How `p_value` was computed.
    pub method: UMethod,
}

/// Two-sided Mann-Whitney U test, matching `scipy.stats.mannwhitneyu(a, b,
/// alternative='two-sided', method='auto')`. scipy 1.17's
/// `_mwu_choose_method` picks the exact distribution unless *both* samples
/// have more than 8 values or there are ties, else the normal approximation
/// with tie and continuity corrections. All values equal (zero variance)
/// gives p = 1. `None` if either sample is empty.
pub fn mann_whitney_u(a: &[f64], b: &[f64]) -> Option<MannWhitney> {
    if a.is_empty() || b.is_empty() {
        return None;
    }
    let (n1, n2) = (a.len(), b.len());
    let (ranks, tie_term) = ranks(&[a, b].concat());
    let r1: f64 = ranks[..n1].iter().sum();
    let u1 = r1 - (n1 * (n1 + 1)) as f64 / 2.0;
    // scipy tests the larger of U1 and U2 = n1·n2 − U1 against the upper tail.
    let u = u1.max((n1 * n2) as f64 - u1);
    let exact = !(n1 > 8 && n2 > 8) && tie_term == 0.0;
    let (p, method) = if exact {
        (2.0 * exact_sf(u, n1, n2), UMethod::Exact)
    } else {
        (asymptotic_p(u, n1, n2, tie_term), UMethod::Asymptotic)
    };
    Some(MannWhitney {
        u: u1,
        p_value: p.clamp(0.0, 1.0),
        method,
    })
}

/// Two-sided p of the normal approximation (scipy's `_get_mwu_z`): z = (U −
/// n1·n2/2 − ½) / σ with the tie-corrected σ; 1 when σ is 0 (all values tied).
fn asymptotic_p(u: f64, n1: usize, n2: usize, tie_term: f64) -> f64 {
    let n = (n1 + n2) as f64;
    let mu = (n1 * n2) as f64 / 2.0;
    let variance = (n1 * n2) as f64 / 12.0 * ((n + 1.0) - tie_term / (n * (n - 1.0)));
    if variance <= 0.0 {
        return 1.0;
    }
    let z = (u - mu - 0.5) / variance.sqrt();
    2.0 * normal_sf(z)
}

/// Midranks (1-based) of `values`, and the tie term Σ(t³ − t) over tie groups.
fn ranks(values: &[f64]) -> (Vec<f64>, f64) {
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_by(|&i, &j| values[i].total_cmp(&values[j]));
    let mut ranks = vec![0.0; values.len()];
    let mut tie_term = 0.0;
    let mut start = 0;
    while start < order.len() {
        let mut end = start + 1;
        #[allow(clippy::float_cmp)] // ties are exactly equal values
        while end < order.len() && values[order[end]] == values[order[start]] {
            end += 1;
        }
        let midrank = (start + end + 1) as f64 / 2.0;
        for &index in &order[start..end] {
            ranks[index] = midrank;
        }
        let t = (end - start) as f64;
        tie_term += t * t * t - t;
        start = end;
    }
    (ranks, tie_term)
}

/// P(U ≥ u) under the null hypothesis for sample sizes n1 and n2 without ties.
///
/// The number of arrangements with U = s is the coefficient of q^s in the
/// Gaussian binomial [m+n choose m]_q = Π_{i=1..m} (1 − q^{n+i}) / (1 − q^i),
/// with m ≤ n (Andrews, *The Theory of Partitions*, 1976, §3.3; scipy's `_MWU`
/// builds the same generating function). By symmetry P(U ≥ u) = P(U ≤ mn − u),
/// so only coefficients up to mn − u are needed: O(m² n) work, exact integers
/// while they fit in 53 bits, and no cancellation below degree n.
fn exact_sf(u: f64, n1: usize, n2: usize) -> f64 {
    let (m, n) = (n1.min(n2), n1.max(n2));
    let lower = (m * n) as f64 - u;
    if lower < 0.0 {
        return 0.0;
    }
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // 0 ≤ lower ≤ mn
    let top = (lower + 1e-9).floor() as usize;
    let mut counts = vec![0.0_f64; top + 1];
    counts[0] = 1.0;
    let mut total = 1.0_f64;
    for i in 1..=m {
        // Divide by (1 − q^i): a running sum with stride i.
        for s in i..=top {
            counts[s] += counts[s - i];
        }
        // Multiply by (1 − q^{n+i}), high degrees first.
        for s in (n + i..=top).rev() {
            counts[s] -= counts[s - n - i];
        }
        // total = C(n + i, i), the sum of all coefficients.
        total = total * (n + i) as f64 / i as f64;
    }
    (counts.iter().sum::<f64>() / total).min(1.0)
}

extern "C" {
    // From the C math library, which Rust's std already links on every
    // platform it supports; accurate to an ulp or so, which the p-values'
    // 1e-9 agreement with scipy needs.
    fn erfc(x: f64) -> f64;
}

/// P(Z > z) for a standard normal Z.
fn normal_sf(z: f64) -> f64 {
    // SAFETY: erfc is a pure function of a double, defined for every input.
    0.5 * unsafe { erfc(z / std::f64::consts::SQRT_2) }
}

/// How precise a metric is, which decides the verdict rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Precision {
    /// Wall and CPU time, RSS, perf counts: judged by rank test and bootstrap
    /// interval together.
    Noisy,
    /// Near-deterministic counts (callgrind instructions): judged by the
    /// difference against the measured spread (resolution).
    Exact,
}

/// The outcome of a comparison, from the user's side: "faster" means better
/// even for a metric where higher is better (throughput).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Verdict {
    /// The variant is significantly better than the baseline.
    #[serde(rename = "faster")]
    Faster,
    /// The variant is significantly worse than the baseline.
    #[serde(rename = "slower")]
    Slower,
    /// The data do not show a difference (which is not proof of none).
    #[serde(rename = "no significant difference")]
    NoSignificantDifference,
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Verdict::Faster => "faster",
            Verdict::Slower => "slower",
            Verdict::NoSignificantDifference => "no significant difference",
        })
    }
}

/// How to compare a variant with the baseline.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CompareOptions {
    /// Confidence level of the interval and test, a fraction (0.95); the
    /// test's significance level is 1 − confidence.
    pub confidence: f64,
    /// Sample i of both sets came from round i of an interleaved bench, so the
    /// bootstrap resamples whole rounds; ignored when the lengths differ.
    pub paired: bool,
    /// Which verdict rule applies.
    pub precision: Precision,
    /// True for times and counts; false for throughput.
    pub lower_is_better: bool,
    /// Bootstrap resamples (a count, e.g. 10 000); 0 gives no interval, and so
    /// no noisy verdict but "no significant difference".
    pub resamples: usize,
    /// Seed of the bootstrap's [`Rng`]; the same seed gives the same interval.
    pub seed: u64,
}

/// A variant against the baseline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// mean(variant) / mean(baseline), a unitless ratio: the seeds' Opt/Default.
    /// 1 when both means are 0.
    pub ratio: f64,
    /// Improvement in percent; positive is better whatever the direction:
    /// (1 − ratio)·100 when lower is better, (ratio − 1)·100 otherwise.
    pub improvement_pct: f64,
    /// Lower bound of the ratio's percentile bootstrap confidence interval
    /// (unitless); equals `ratio` when no resample had a non-zero baseline.
    pub ci_low: f64,
    /// Upper bound of the ratio's percentile bootstrap confidence interval
    /// (unitless).
    pub ci_high: f64,
    /// Two-sided Mann-Whitney U p-value (a probability). Always present from
    /// [`compare`], for exact metrics too, but only noisy metrics are judged
    /// by it.
    pub p_value: Option<f64>,
    /// Faster, slower, or no significant difference.
    pub verdict: Verdict,
    /// The rule that decided the verdict, one sentence for reports.
    pub rule: String,
}

/// Compare `variant` with `baseline` (samples in the metric's unit).
///
/// Noisy metrics are faster (or slower) when the whole bootstrap interval of
/// the ratio lies on the better (worse) side of 1 *and* the Mann-Whitney p is
/// below 1 − confidence: both, so that an A/A pair is called different less
/// than 5% of the time. Exact metrics are judged by the difference of means
/// against 3× the [`resolution`].
///
/// `None` when either set is empty, or when the baseline's mean is zero but
/// the variant's is not (the ratio is undefined; the caller reports why). Two
/// all-zero sets compare as equal, with ratio 1.
pub fn compare(baseline: &[f64], variant: &[f64], options: &CompareOptions) -> Option<Comparison> {
    let (b, v) = (summarize(baseline)?, summarize(variant)?);
    let ratio = ratio_of_means(&b, &v)?;
    let improvement_pct = if options.lower_is_better {
        (1.0 - ratio) * 100.0
    } else {
        (ratio - 1.0) * 100.0
    };
    let paired = options.paired && baseline.len() == variant.len();
    let interval = bootstrap_ratio(baseline, variant, paired, options);
    let p_value = mann_whitney_u(baseline, variant).map(|m| m.p_value);
    let direction = match options.precision {
        Precision::Noisy => noisy_direction(interval, p_value, options.confidence),
        Precision::Exact => exact_direction(&b, &v),
    };
    let verdict = match (direction, options.lower_is_better) {
        (Ordering::Less, true) | (Ordering::Greater, false) => Verdict::Faster,
        (Ordering::Greater, true) | (Ordering::Less, false) => Verdict::Slower,
        (Ordering::Equal, _) => Verdict::NoSignificantDifference,
    };
    let (ci_low, ci_high) = interval.unwrap_or((ratio, ratio));
    Some(Comparison {
        ratio,
        improvement_pct,
        ci_low,
        ci_high,
        p_value,
        verdict,
        rule: rule(options, paired),
    })
}

/// mean(variant) / mean(baseline); 1 for two zero means; `None` when only the
/// baseline's is zero (or the ratio overflows).
fn ratio_of_means(b: &Summary, v: &Summary) -> Option<f64> {
    if b.mean == 0.0 {
        return (v.mean == 0.0).then_some(1.0);
    }
    let ratio = v.mean / b.mean;
    ratio.is_finite().then_some(ratio)
}

/// Where the variant's values lie against the baseline's, for a noisy metric:
/// `Less` or `Greater` only when the interval excludes 1 and the test agrees.
fn noisy_direction(
    interval: Option<(f64, f64)>,
    p_value: Option<f64>,
    confidence: f64,
) -> Ordering {
    let significant = p_value.is_some_and(|p| p < 1.0 - confidence);
    match interval {
        Some((_, high)) if significant && high < 1.0 => Ordering::Less,
        Some((low, _)) if significant && low > 1.0 => Ordering::Greater,
        _ => Ordering::Equal,
    }
}

/// Where the variant's values lie against the baseline's, for an exact metric:
/// `Less` or `Greater` only when the difference exceeds 3 resolutions.
fn exact_direction(b: &Summary, v: &Summary) -> Ordering {
    let difference = v.mean - b.mean;
    if difference.abs() <= RESOLUTIONS * resolution(b, v) {
        Ordering::Equal
    } else if difference < 0.0 {
        Ordering::Less
    } else {
        Ordering::Greater
    }
}

/// The smallest difference an exact metric can resolve, in its unit: the
/// larger within-variant range (max − min), and never below a millionth of the
/// baseline's |mean|. Zero only when every sample is 0.
pub fn resolution(baseline: &Summary, variant: &Summary) -> f64 {
    (baseline.max - baseline.min)
        .max(variant.max - variant.min)
        .max(RESOLUTION_FLOOR * baseline.mean.abs())
}

/// The verdict rule in one sentence; `paired` is whether rounds were
/// resampled together.
fn rule(options: &CompareOptions, paired: bool) -> String {
    match options.precision {
        Precision::Noisy => format!(
            "Noisy metric: faster or slower only when the whole {}% bootstrap interval of the ratio of means ({}) lies on one side of 1 and the two-sided Mann-Whitney U p-value is below {}; otherwise no significant difference.",
            tidy(options.confidence * 100.0),
            if paired { "resampling whole interleaved rounds" } else { "resampling each variant independently" },
            tidy(1.0 - options.confidence),
        ),
        Precision::Exact => format!(
            "Exact metric (callgrind instruction counts): faster or slower only when the difference of means exceeds {RESOLUTIONS}× the resolution, the larger within-variant range of the samples (at least a millionth of the baseline mean); otherwise, identical samples included, no significant difference."
        ),
    }
}

/// A level like 0.95 or 95.0 without float noise (0.050000000000000044).
fn tidy(x: f64) -> f64 {
    (x * 1e6).round() / 1e6
}

/// Percentile bootstrap interval of mean(variant) / mean(baseline) at
/// `options.confidence`; `None` without resamples, or when every resample of
/// the baseline summed to zero.
fn bootstrap_ratio(
    baseline: &[f64],
    variant: &[f64],
    paired: bool,
    options: &CompareOptions,
) -> Option<(f64, f64)> {
    let mut rng = Rng::new(options.seed);
    // Means over fixed counts: the ratio of sums, scaled, is the ratio of means.
    let scale = baseline.len() as f64 / variant.len() as f64;
    let mut ratios = Vec::with_capacity(options.resamples);
    for _ in 0..options.resamples {
        let (sb, sv) = if paired {
            // Resample rounds: a round's baseline and variant stay together,
            // so drift shared by both (a busy neighbour) cancels in the ratio.
            (0..baseline.len()).fold((0.0, 0.0), |(sb, sv), _| {
                let i = rng.below(baseline.len());
                (sb + baseline[i], sv + variant[i])
            })
        } else {
            (
                resample_sum(baseline, &mut rng),
                resample_sum(variant, &mut rng),
            )
        };
        let ratio = sv / sb * scale;
        if ratio.is_finite() {
            ratios.push(ratio);
        }
    }
    if ratios.is_empty() {
        return None;
    }
    ratios.sort_by(f64::total_cmp);
    let tail = ((1.0 - options.confidence) / 2.0).clamp(0.0, 0.5);
    Some((quantile(&ratios, tail), quantile(&ratios, 1.0 - tail)))
}

fn resample_sum(samples: &[f64], rng: &mut Rng) -> f64 {
    (0..samples.len())
        .map(|_| samples[rng.below(samples.len())])
        .sum()
}

/// Linear-interpolation quantile of sorted, non-empty data (numpy's default
/// method); `q` is clamped to [0, 1].
fn quantile(sorted: &[f64], q: f64) -> f64 {
    let position = q.clamp(0.0, 1.0) * (sorted.len() - 1) as f64;
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // 0 ≤ position < len
    let low = position.floor() as usize;
    let high = (low + 1).min(sorted.len() - 1);
    let fraction = position - low as f64;
    sorted[low] + (sorted[high] - sorted[low]) * fraction
}

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
    let undecided = comparison.verdict == Verdict::NoSignificantDifference;
    let effect = (comparison.ratio - 1.0).abs();
    let mut out = Vec::new();
    out.extend(too_few_runs(per_side, undecided, precision, confidence));
    if undecided {
        out.extend(match precision {
            Precision::Noisy => noise_hides_effect(baseline, variant, effect, per_side),
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
        Precision::Noisy => {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1e-12)
    }

    fn all_finite(c: &Comparison) -> bool {
        [c.ratio, c.improvement_pct, c.ci_low, c.ci_high]
            .into_iter()
            .chain(c.p_value)
            .all(f64::is_finite)
    }

    // Reference values from SciPy 1.17.1 / NumPy 2.4.6 (Python 3), each case
    // printed by
    //   r = scipy.stats.mannwhitneyu(a, b, alternative='two-sided', method='auto')
    //   print(repr(float(r.statistic)), repr(float(r.pvalue)))
    // and the method from scipy.stats._mannwhitneyu._mwu_choose_method(n1, n2, ties).
    // Generated inputs: `range(200)` is [float(i) for i in range(200)], etc.
    #[test]
    fn mann_whitney_matches_scipy() {
        type Case<'a> = (&'a [f64], &'a [f64], f64, f64, UMethod);
        let range = |n: usize| (0..n).map(|i| i as f64).collect::<Vec<_>>();
        let (r200, r1000) = (range(200), range(1000));
        let cases: [Case; 13] = [
            // 3 vs 3, no ties: exact, the smallest p a 3 vs 3 test can give.
            (&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0], 0.0, 0.1, UMethod::Exact),
            // 5 vs 6, no ties: exact.
            (
                &[1.1, 2.3, 0.7, 4.2, 3.3],
                &[2.9, 5.1, 6.0, 4.8, 3.9, 7.2],
                3.0,
                0.030_303_030_303_030_304,
                UMethod::Exact,
            ),
            // 5 vs 12: exact, since only one side exceeds 8.
            (
                &[3.1, 4.7, 2.2, 5.9, 4.1],
                &[5.5, 6.1, 7.3, 4.9, 6.6, 8.0, 5.2, 7.7, 6.9, 5.8, 7.1, 6.4],
                4.0,
                0.003_878_474_466_709_760_5,
                UMethod::Exact,
            ),
            // 9 vs 8 without ties is still exact (scipy's rule is "both > 8").
            (
                &[0.5, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5, 8.5],
                &[4.1, 5.1, 6.1, 7.1, 8.1, 9.1, 10.1, 11.1],
                15.0,
                0.046_400_658_165_364_046,
                UMethod::Exact,
            ),
            // 7 vs 7 interleaved: exact, near the middle of the distribution.
            (
                &[2.0, 4.0, 6.0, 8.0, 10.0, 12.0, 14.0],
                &[1.0, 3.0, 5.0, 7.0, 9.0, 11.0, 13.0],
                28.0,
                0.710_372_960_372_960_5,
                UMethod::Exact,
            ),
            // 8 vs 200 and 3 vs 1000: exact with one large side.
            (
                &[12.5, 40.5, 41.5, 77.5, 150.5, 151.5, 152.5, 199.5],
                &r200,
                830.0,
                0.862_334_694_481_889_7,
                UMethod::Exact,
            ),
            (
                &[5.5, 20.5, 30.5],
                &r1000,
                58.0,
                7.699_716_955_184_088e-5,
                UMethod::Exact,
            ),
            // 7 vs 7 with ties: asymptotic with tie correction.
            (
                &[1.0, 2.0, 2.0, 3.0, 3.0, 3.0, 4.0],
                &[3.0, 3.0, 4.0, 4.0, 5.0, 5.0, 6.0],
                6.0,
                0.017_854_292_789_382_96,
                UMethod::Asymptotic,
            ),
            // 12 vs 10, no ties: asymptotic, both sides exceed 8.
            (
                &[
                    10.2, 11.5, 9.8, 10.9, 12.1, 10.4, 11.8, 9.9, 10.7, 11.2, 10.1, 12.4,
                ],
                &[11.9, 12.6, 13.1, 12.2, 11.4, 13.5, 12.8, 12.0, 13.3, 12.5],
                9.0,
                0.000_868_861_059_834_744_9,
                UMethod::Asymptotic,
            ),
            // All values equal: zero variance, p = 1 (scipy clips 2·sf(−inf)).
            (&[5.0; 4], &[5.0; 4], 8.0, 1.0, UMethod::Asymptotic),
            (&[2.0; 5], &[2.0; 5], 12.5, 1.0, UMethod::Asymptotic),
            // One sample each.
            (&[1.0], &[3.0], 0.0, 1.0, UMethod::Exact),
            (&[1.0], &[1.0], 0.5, 1.0, UMethod::Asymptotic),
        ];
        for (a, b, u, p, method) in cases {
            let got = mann_whitney_u(a, b).unwrap();
            let (na, nb) = (a.len(), b.len());
            assert!(close(got.u, u), "U {} != {u} for {na} vs {nb}", got.u);
            assert!(
                close(got.p_value, p),
                "p {} != {p} for {na} vs {nb}",
                got.p_value
            );
            assert_eq!(got.method, method, "{na} vs {nb}");
        }
        assert!(mann_whitney_u(&[], &[1.0]).is_none());
        assert!(mann_whitney_u(&[1.0], &[]).is_none());
    }

    // np.mean(x), np.std(x) (ddof=0), np.median(x), np.std(x)/np.mean(x) with
    // x = [1.5, 2.5, 2.0, 8.0, 3.0, 4.5], NumPy 2.4.6.
    #[test]
    fn summary_matches_numpy() {
        let s = summarize(&[1.5, 2.5, 2.0, 8.0, 3.0, 4.5]).unwrap();
        assert!(close(s.mean, 3.583_333_333_333_333_5));
        assert!(close(s.stddevp, 2.187_400_791_401_114_7));
        assert!(close(s.median, 2.75));
        assert!(close(s.cv, 0.610_437_430_158_450_5));
        assert_eq!((s.min, s.max, s.n), (1.5, 8.0, 6));
        let odd = summarize(&[3.0, 1.0, 2.0]).unwrap();
        assert_eq!((odd.median, odd.mean), (2.0, 2.0));
        assert!(summarize(&[]).is_none());
    }

    /// Regression: the mean of [0.1; 3] sums to 0.30000000000000004, which
    /// gave identical samples a tiny non-zero spread.
    #[test]
    fn identical_samples_have_exactly_zero_spread() {
        let s = summarize(&[0.1; 3]).unwrap();
        assert_eq!((s.mean, s.median, s.stddevp, s.cv), (0.1, 0.1, 0.0, 0.0));
    }

    fn options(precision: Precision, seed: u64) -> CompareOptions {
        CompareOptions {
            confidence: 0.95,
            paired: true,
            precision,
            lower_is_better: true,
            resamples: 2000,
            seed,
        }
    }

    /// A noisy timing sample: lognormal jitter (5%) with an occasional 2×
    /// outlier, like wall time on a shared 2-core machine.
    fn noisy(rng: &mut Rng, center: f64, n: usize) -> Vec<f64> {
        (0..n)
            .map(|_| {
                let outlier = if rng.next_f64() < 0.05 { 2.0 } else { 1.0 };
                center * (0.05 * rng.normal()).exp() * outlier
            })
            .collect()
    }

    #[test]
    fn a_a_pairs_are_called_equal_at_least_95_percent_of_the_time() {
        for paired in [true, false] {
            let mut rng = Rng::new(2026);
            let trials = 1000;
            let equal = (0..trials)
                .filter(|&t| {
                    let (a, b) = (noisy(&mut rng, 1.0, 10), noisy(&mut rng, 1.0, 10));
                    let o = CompareOptions {
                        paired,
                        ..options(Precision::Noisy, t)
                    };
                    compare(&a, &b, &o).unwrap().verdict == Verdict::NoSignificantDifference
                })
                .count();
            assert!(
                equal >= 950,
                "only {equal}/{trials} A/A pairs called equal (paired: {paired})"
            );
        }
    }

    #[test]
    fn a_true_20_percent_gain_is_found() {
        let mut rng = Rng::new(7);
        let trials = 1000;
        let lognormal = |rng: &mut Rng, center: f64| -> Vec<f64> {
            (0..10)
                .map(|_| center * (0.05 * rng.normal()).exp())
                .collect()
        };
        let found = (0..trials)
            .filter(|&t| {
                let (a, b) = (lognormal(&mut rng, 1.0), lognormal(&mut rng, 0.8));
                compare(&a, &b, &options(Precision::Noisy, t))
                    .unwrap()
                    .verdict
                    == Verdict::Faster
            })
            .count();
        assert!(found >= 900, "only {found}/{trials} found");
    }

    #[test]
    fn exact_metric_needs_only_three_samples() {
        let base = [1e9, 1e9 + 3.0, 1e9 - 2.0];
        let pgo: Vec<f64> = base.iter().map(|x| x * 0.93).collect();
        let c = compare(&base, &pgo, &options(Precision::Exact, 1)).unwrap();
        assert_eq!(c.verdict, Verdict::Faster);
        assert!((c.improvement_pct - 7.0).abs() < 1e-6);
        assert!(c.ci_high < 1.0);
        assert!(
            c.p_value.unwrap() > 0.05,
            "the rank test alone could not call it"
        );
        let worse = compare(&pgo, &base, &options(Precision::Exact, 1)).unwrap();
        assert_eq!(worse.verdict, Verdict::Slower);
        let same = compare(&base, &base, &options(Precision::Exact, 1)).unwrap();
        assert_eq!(same.verdict, Verdict::NoSignificantDifference);
        let tiny: Vec<f64> = base.iter().map(|x| x + 3.0).collect();
        assert_eq!(
            compare(&base, &tiny, &options(Precision::Exact, 1))
                .unwrap()
                .verdict,
            Verdict::NoSignificantDifference
        );
        let constant = [1e9; 3];
        let c = compare(&constant, &constant, &options(Precision::Exact, 1)).unwrap();
        assert_eq!(c.verdict, Verdict::NoSignificantDifference);
        assert!(all_finite(&c), "{c:?}");
    }

    #[test]
    fn throughput_direction_flips_the_verdict() {
        let mut o = options(Precision::Noisy, 3);
        o.lower_is_better = false;
        let base = [100.0, 101.0, 99.0, 100.5, 99.5, 100.2, 99.8, 100.1];
        let more: Vec<f64> = base.iter().map(|x| x * 1.2).collect();
        let c = compare(&base, &more, &o).unwrap();
        assert_eq!(c.verdict, Verdict::Faster);
        assert!(c.improvement_pct > 19.0);
        assert_eq!(compare(&more, &base, &o).unwrap().verdict, Verdict::Slower);
        o.precision = Precision::Exact;
        assert_eq!(compare(&base, &more, &o).unwrap().verdict, Verdict::Faster);
    }

    #[test]
    fn degenerate_inputs_never_panic_or_give_nan() {
        for precision in [Precision::Noisy, Precision::Exact] {
            for paired in [true, false] {
                let o = CompareOptions {
                    paired,
                    ..options(precision, 5)
                };
                for (a, b) in [
                    (&[2.0; 5][..], &[2.0; 5][..]),
                    (&[0.1; 3][..], &[0.1; 3][..]),
                    (&[1.0][..], &[3.0][..]),
                    (&[1.0][..], &[1.0][..]),
                    (&[0.0, 0.0][..], &[0.0, 0.0][..]),
                    (&[0.0, 2.0][..], &[1.0, 1.0][..]),
                    (&[1.0, 2.0, 3.0][..], &[2.0][..]),
                ] {
                    let c = compare(a, b, &o).unwrap();
                    assert!(all_finite(&c), "{a:?} {b:?} {c:?}");
                    if precision == Precision::Noisy || a == b {
                        assert_eq!(
                            c.verdict,
                            Verdict::NoSignificantDifference,
                            "{a:?} {b:?} {c:?}"
                        );
                    }
                    let (sa, sb) = (summarize(a).unwrap(), summarize(b).unwrap());
                    for w in warnings(&sa, &sb, &c, precision, 0.95) {
                        assert!(!w.to_string().contains("NaN"), "{w}");
                    }
                }
                assert!(
                    compare(&[0.0, 0.0], &[1.0, 2.0], &o).is_none(),
                    "undefined ratio"
                );
                assert!(compare(&[], &[1.0], &o).is_none());
                assert!(compare(&[1.0], &[], &o).is_none());
            }
        }
    }

    #[test]
    fn without_an_interval_a_noisy_metric_is_not_called() {
        let base = [1.0, 1.01, 0.99, 1.02, 0.98, 1.0, 1.01, 0.99, 1.0, 1.0];
        let fast: Vec<f64> = base.iter().map(|x| x * 0.5).collect();
        let mut o = options(Precision::Noisy, 1);
        o.resamples = 0;
        let c = compare(&base, &fast, &o).unwrap();
        assert_eq!(c.verdict, Verdict::NoSignificantDifference);
        assert!(close(c.ci_low, 0.5) && close(c.ci_high, 0.5));
        // A confidence outside (0, 1) must not index past the resamples.
        o.resamples = 100;
        o.confidence = 1.5;
        assert!(all_finite(&compare(&base, &fast, &o).unwrap()));
    }

    #[test]
    fn rule_states_the_pairing_actually_used() {
        let o = options(Precision::Noisy, 1);
        let paired = compare(&[1.0, 2.0], &[1.0, 2.0], &o).unwrap().rule;
        assert!(paired.contains("whole interleaved rounds"), "{paired}");
        assert!(
            paired.contains("95%") && paired.contains("below 0.05"),
            "{paired}"
        );
        let unequal = compare(&[1.0, 2.0], &[1.0, 2.0, 3.0], &o).unwrap().rule;
        assert!(unequal.contains("independently"), "{unequal}");
    }

    fn json<T: Serialize>(value: &T) -> String {
        serde_json::to_string(value).unwrap()
    }

    #[test]
    fn serialized_names_are_the_documented_ones() {
        assert_eq!(json(&Verdict::Faster), "\"faster\"");
        assert_eq!(
            json(&Verdict::NoSignificantDifference),
            "\"no significant difference\""
        );
        assert_eq!(json(&UMethod::Asymptotic), "\"asymptotic\"");
        assert_eq!(json(&Precision::Exact), "\"exact\"");
        for v in [
            Verdict::Faster,
            Verdict::Slower,
            Verdict::NoSignificantDifference,
        ] {
            assert_eq!(json(&v), format!("\"{v}\""));
        }
    }

    fn warnings_for(base: &[f64], variant: &[f64], precision: Precision) -> Vec<Warning> {
        let (b, v) = (summarize(base).unwrap(), summarize(variant).unwrap());
        let c = compare(base, variant, &options(precision, 1)).unwrap();
        warnings(&b, &v, &c, precision, 0.95)
    }

    #[test]
    fn warnings_say_what_to_do() {
        let w = warnings_for(&[1.0, 1.1, 0.9], &[0.95, 1.08, 0.88], Precision::Noisy);
        assert!(
            matches!(
                w[0],
                Warning::TooFewRuns {
                    per_side: 3,
                    minimum: 4,
                    suggested: 10,
                    ..
                }
            ),
            "{w:?}"
        );
        let text = w[0].to_string();
        assert!(
            text.contains("at least 4") && text.contains("repetitions = 10"),
            "{text}"
        );
        let Some(Warning::NoiseHidesEffect { needed, capped, .. }) = w.get(1) else {
            panic!("no noise warning: {w:?}");
        };
        // Variant CV 8.54%, effect 3%: ceil(16·(8.54/3)²) = 130.
        assert_eq!((*needed, *capped), (130, false));
        assert!(w[1].to_string().contains("repetitions = 130"), "{}", w[1]);
    }

    #[test]
    fn few_runs_warn_only_while_undecided() {
        let base = [1.0, 1.2, 0.8, 1.1, 0.9];
        let noisy_same = [1.05, 0.85, 1.15, 0.95, 1.0];
        let w = warnings_for(&base, &noisy_same, Precision::Noisy);
        assert!(
            matches!(w[0], Warning::TooFewRuns { per_side: 5, .. }),
            "{w:?}"
        );
        assert!(w[0].to_string().starts_with("few repetitions"), "{}", w[0]);
        let fast: Vec<f64> = base.iter().map(|x| x * 0.5).collect();
        assert!(warnings_for(&base, &fast, Precision::Noisy).is_empty());
    }

    #[test]
    fn huge_noise_advises_a_quieter_machine() {
        let base = [1.0, 2.0, 0.5, 1.5, 1.0, 2.5, 0.6, 1.2, 0.9, 1.8];
        let variant: Vec<f64> = base.iter().rev().map(|x| x * 1.02).collect();
        let w = warnings_for(&base, &variant, Precision::Noisy);
        assert!(
            matches!(
                w[..],
                [Warning::NoiseHidesEffect {
                    needed: 1000,
                    capped: true,
                    ..
                }]
            ),
            "{w:?}"
        );
        assert!(w[0].to_string().contains("quiet the machine"), "{}", w[0]);
    }

    #[test]
    fn effects_under_one_percent_get_no_noise_warning() {
        let base = [100.0, 110.0, 90.0, 105.0, 95.0, 100.0, 102.0, 98.0];
        let variant: Vec<f64> = base.iter().map(|x| x + 0.5).collect();
        let w = warnings_for(&base, &variant, Precision::Noisy);
        assert!(
            !w.iter()
                .any(|w| matches!(w, Warning::NoiseHidesEffect { .. })),
            "{w:?}"
        );
    }

    #[test]
    fn identical_samples_get_one_warning_whatever_the_precision() {
        for precision in [Precision::Noisy, Precision::Exact] {
            let w = warnings_for(&[2.0; 3], &[2.0; 3], precision);
            assert_eq!(w, [Warning::IdenticalSamples { value: 2.0 }]);
            assert!(w[0].to_string().contains("exactly 2"), "{}", w[0]);
        }
    }

    #[test]
    fn exact_metric_warnings() {
        let base = [1e9, 1e9 + 3.0, 1e9 - 2.0];
        let pgo: Vec<f64> = base.iter().map(|x| x * 0.93).collect();
        assert!(warnings_for(&base, &pgo, Precision::Exact).is_empty());
        // One run each: the spread is unmeasured.
        let w = warnings_for(&[1e9], &[0.93e9], Precision::Exact);
        assert!(
            matches!(
                w[..],
                [Warning::TooFewRuns {
                    per_side: 1,
                    precision: Precision::Exact,
                    ..
                }]
            ),
            "{w:?}"
        );
        assert!(w[0].to_string().contains("instruction_repetitions = 3"));
        // A threaded program: counts vary by 5%, hiding a 3% difference.
        let unstable = [1.0e9, 1.05e9, 1.02e9];
        let shifted: Vec<f64> = unstable.iter().map(|x| x * 0.97).collect();
        let w = warnings_for(&unstable, &shifted, Precision::Exact);
        assert!(
            matches!(w[..], [Warning::SpreadHidesEffect { .. }]),
            "{w:?}"
        );
        assert!(w[0].to_string().contains("wall time"), "{}", w[0]);
    }

    #[test]
    fn min_runs_follow_the_exact_test() {
        // 2 / C(6,3) = 0.1, 2 / C(8,4) = 0.029, 2 / C(10,5) = 0.0079.
        assert_eq!(min_runs_for(0.95), 4);
        assert_eq!(min_runs_for(0.99), 5);
    }
}
