//! Statistics of repeated runs: summaries (mean, median, STDDEVP, CV), the
//! Mann-Whitney U test, bootstrap intervals of a ratio of means, the verdict
//! rule (rank test and interval for noisy metrics, resolution for exact ones)
//! and the warnings a reader needs before trusting a verdict; beside them,
//! the share of a reference variant's gain with Fieller's interval
//! ([`fieller`], on Student's t of [`student_t`]).
//!
//! Samples are finite values in the metric's unit (seconds, KiB, instructions,
//! requests per second). For such input no function here panics or returns a
//! NaN: degenerate cases (one sample, identical samples, all zeros) give "no
//! significant difference", and an undefined ratio (a zero baseline mean with
//! a non-zero variant) gives `None`.

use std::cmp::Ordering;
use std::fmt;

use serde::{Deserialize, Serialize};

use afterburner_leaves::rng::Rng;

/// An exact metric's difference must exceed this many resolutions to count.
const RESOLUTIONS: f64 = 3.0;
/// The resolution of an exact metric is never taken below this fraction of
/// the baseline mean: a spread of 0 in three runs does not prove that one
/// instruction in a billion is a real difference.
const RESOLUTION_FLOOR: f64 = 1e-6;

/// Summary of one sample set; every field is in the metric's unit except `n`
/// and `cv`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
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

/// How precise a metric is, which decides the verdict rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Precision {
    /// Wall and CPU time, RSS, perf counts: judged by rank test and bootstrap
    /// interval together.
    Noisy,
    /// Near-deterministic counts (callgrind instructions): judged by the
    /// difference against the measured spread (resolution).
    Exact,
    /// A share of a load's requests that failed (`error_rate`,
    /// `timeout_rate`, 0 to 1): judged as a noisy metric on the answered
    /// share, 1 − share, whose ratio is defined when the baseline failed
    /// nothing (a clean baseline against 10% timeouts is a ratio of 0.9,
    /// not a division by zero).
    Share,
}

/// The outcome of a comparison, from the user's side: "faster" means better
/// even for a metric where higher is better (throughput).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub enum Verdict {
    /// The variant is significantly better than the baseline, by more than
    /// the equivalence margin or with an interval that reaches beyond it.
    #[serde(rename = "faster")]
    Faster,
    /// The variant is significantly worse than the baseline.
    #[serde(rename = "slower")]
    Slower,
    /// The same within the equivalence margin: the whole interval of the
    /// ratio lies inside 1 ± margin (for an exact metric, the difference).
    #[serde(rename = "same")]
    Same,
    /// Too noisy to tell: the interval straddles 1 and reaches beyond the
    /// margin (the comparison's `resolution_pct` says how far).
    #[serde(rename = "undecided")]
    Undecided,
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Verdict::Faster => "faster",
            Verdict::Slower => "slower",
            Verdict::Same => "same",
            Verdict::Undecided => "undecided",
        })
    }
}

/// Samples a side from which the ratio of means' percentile bootstrap
/// interval is shown beside the deciding estimate: below it that interval
/// undercovers (a fifth of A/A intervals excluded 1 at 3–5 rounds).
pub const MEAN_INTERVAL_MIN: usize = 10;

/// Which estimate of variant / baseline a comparison shows and decided by.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Estimate {
    /// mean(variant) / mean(baseline): exact metrics, and noisy values that
    /// are not all positive (judged by the percentile bootstrap).
    #[default]
    RatioOfMeans,
    /// The median per-round ratio (Hodges–Lehmann) and its
    /// distribution-free interval: paired rounds, enough of them.
    MedianRatio,
    /// The geometric mean of the per-round ratios and Student's paired t
    /// interval: paired rounds too few for the median's interval.
    GeometricMeanRatio,
    /// The ratio of geometric means and Welch's t interval on the log
    /// values: unpaired samples.
    RatioOfGeometricMeans,
}

impl Estimate {
    /// The estimate's name as a reader sees it.
    pub fn label(self) -> &'static str {
        match self {
            Estimate::RatioOfMeans => "ratio of means",
            Estimate::MedianRatio => "median per-round ratio",
            Estimate::GeometricMeanRatio => "geometric mean of per-round ratios",
            Estimate::RatioOfGeometricMeans => "ratio of geometric means",
        }
    }
}

/// Default equivalence margin: 1%.
pub const DEFAULT_EQUIVALENCE: f64 = 0.01;

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
    /// no noisy verdict but "undecided".
    pub resamples: usize,
    /// Equivalence margin, a fraction (0.01 = ±1%): a ratio interval wholly
    /// inside 1 ± margin is "same".
    pub equivalence: f64,
    /// Seed of the bootstrap's [`Rng`]; the same seed gives the same interval.
    pub seed: u64,
}

/// A variant against the baseline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Comparison {
    /// The estimate of variant / baseline that decided the verdict (unitless;
    /// [`Comparison::estimate`] names it): the median per-round ratio, the
    /// geometric mean ratio of the paired t, the ratio of geometric means of
    /// Welch's t, or the ratio of means (exact metrics; 1 when both means
    /// are 0). For a share of failed requests ([`Precision::Share`]), that of
    /// the answered shares (1 − share).
    pub ratio: f64,
    /// Improvement in percent; positive is better whatever the direction:
    /// (1 − ratio)·100 when lower is better, (ratio − 1)·100 otherwise.
    pub improvement_pct: f64,
    /// Lower bound of the interval of `ratio` at the comparison's confidence
    /// (unitless): the interval that decided the verdict. For an exact
    /// metric, which its resolution decides, the percentile bootstrap's.
    pub ci_low: f64,
    /// Upper bound of that interval (unitless).
    pub ci_high: f64,
    /// Which estimate `ratio`, `ci_low` and `ci_high` are: the one that
    /// decided the verdict, shown everywhere beside it.
    #[serde(default)]
    pub estimate: Estimate,
    /// Two-sided p-value of the test dual to the deciding interval (a
    /// probability): the signed-rank test's, the t-test's, or for the ratio
    /// of means the Mann-Whitney U test's.
    pub p_value: Option<f64>,
    /// Two-sided Mann-Whitney U p-value (a probability), whatever decided.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mann_whitney_p: Option<f64>,
    /// mean(variant) / mean(baseline), the seeds' Opt/Default (unitless),
    /// beside the deciding estimate; equal to `ratio` where the ratio of
    /// means decided.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_ratio: Option<f64>,
    /// Lower bound of the ratio of means' percentile bootstrap interval,
    /// given only from [`MEAN_INTERVAL_MIN`] samples a side (below, its
    /// coverage does not hold).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_ci_low: Option<f64>,
    /// Upper bound of that interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_ci_high: Option<f64>,
    /// Paired rounds of a noisy metric: the Hodges–Lehmann estimate of the
    /// median per-round ratio (variant / baseline of the same round).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub median_ratio: Option<f64>,
    /// Lower bound of the distribution-free interval of the median ratio
    /// (from the Walsh averages of the per-round log ratios).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub median_ci_low: Option<f64>,
    /// Upper bound of that interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub median_ci_high: Option<f64>,
    /// Two-sided Wilcoxon signed-rank p-value of the per-round log ratios.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signed_rank_p: Option<f64>,
    /// Faster, slower, same (within the margin) or undecided.
    pub verdict: Verdict,
    /// The equivalence margin the verdict used, in percent (1 = ±1%).
    #[serde(default)]
    pub equivalence_pct: f64,
    /// For an undecided verdict, the resolution reached, in percent: the
    /// farther interval bound's distance from 1, the smallest margin within
    /// which the data would have said "same".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolution_pct: Option<f64>,
    /// The rule that decided the verdict, one sentence for reports.
    pub rule: String,
}

/// Compare `variant` with `baseline` (samples in the metric's unit).
///
/// One estimate decides, and it is the one `ratio`, `ci_low` and `ci_high`
/// carry ([`Estimate`] names it): for a noisy metric's paired rounds the
/// median per-round ratio with its distribution-free interval where the
/// rounds allow one at `confidence` (6 at 95%), else Student's paired t on
/// the per-round log ratios; unpaired samples, Welch's t on the log values;
/// faster (or slower) when the interval lies on the better (worse) side of 1,
/// the test dual to it then rejecting at 1 − confidence. Only where a value
/// is not positive (no logarithm) does the percentile bootstrap of the ratio
/// of means decide, with the Mann-Whitney U test agreeing. Exact metrics are
/// judged by the difference of means against 3× the [`resolution`]. The
/// ratio of means is kept beside it (`mean_ratio`), with its bootstrap
/// interval only from [`MEAN_INTERVAL_MIN`] samples a side, where its
/// coverage holds.
///
/// `None` when either set is empty, or when the baseline's mean is zero but
/// the variant's is not (the ratio is undefined; the caller reports why). Two
/// all-zero sets compare as equal, with ratio 1.
pub fn compare(baseline: &[f64], variant: &[f64], options: &CompareOptions) -> Option<Comparison> {
    if options.precision == Precision::Share {
        return compare_share(baseline, variant, options);
    }
    let (b, v) = (summarize(baseline)?, summarize(variant)?);
    let mean_ratio = ratio_of_means(&b, &v)?;
    let paired = options.paired && baseline.len() == variant.len();
    let p_value = mann_whitney_u(baseline, variant).map(|m| m.p_value);
    let enough_for_mean_interval = b.n.min(v.n) >= MEAN_INTERVAL_MIN;
    // The bootstrap (10,000 resamples in a report) only where it is shown
    // or decides.
    let bootstrap = || bootstrap_ratio(baseline, variant, paired, options);
    let (mut c, interval) = match options.precision {
        Precision::Noisy | Precision::Share => {
            if let Some(c) = noisy(baseline, variant, paired, options) {
                (c, enough_for_mean_interval.then(bootstrap).flatten())
            } else {
                let interval = bootstrap();
                let c = by_bootstrap(mean_ratio, interval, p_value, paired, options);
                (c, interval)
            }
        }
        Precision::Exact => {
            let interval = bootstrap();
            (exact(&b, &v, mean_ratio, interval, options), interval)
        }
    };
    let shown_mean_interval = interval.filter(|_| enough_for_mean_interval);
    c.mean_ratio = Some(mean_ratio);
    c.mean_ci_low = shown_mean_interval.map(|(low, _)| low);
    c.mean_ci_high = shown_mean_interval.map(|(_, high)| high);
    if c.p_value.is_none() {
        c.p_value = p_value;
    }
    c.mann_whitney_p = p_value;
    Some(c)
}

/// A noisy metric judged on log ratios (every value positive): the median
/// per-round ratio where the rounds allow its interval, else the paired t;
/// unpaired, Welch's t. `None` when a value is not positive or a side has
/// fewer than 2 samples.
fn noisy(
    baseline: &[f64],
    variant: &[f64],
    paired: bool,
    options: &CompareOptions,
) -> Option<Comparison> {
    if baseline.iter().chain(variant).any(|x| *x <= 0.0) {
        return None;
    }
    let (confidence, equivalence) = (options.confidence, options.equivalence);
    if !paired {
        return welch::compare(
            baseline,
            variant,
            confidence,
            equivalence,
            options.lower_is_better,
        );
    }
    if let Some(m) = paired_median(baseline, variant, confidence) {
        return Some(m.comparison(options));
    }
    paired_t::compare(
        baseline,
        variant,
        confidence,
        equivalence,
        options.lower_is_better,
    )
}

/// The percentile bootstrap of the ratio of means with the Mann-Whitney U
/// test agreeing: only for values that are not all positive.
fn by_bootstrap(
    ratio: f64,
    interval: Option<(f64, f64)>,
    p_value: Option<f64>,
    paired: bool,
    options: &CompareOptions,
) -> Comparison {
    let (low, high) = interval.unwrap_or((ratio, ratio));
    let margin = options.equivalence.max(0.0);
    let same = interval.is_some() && low >= 1.0 - margin && high <= 1.0 + margin;
    let direction = noisy_direction(interval, p_value, options.confidence);
    let rule = rule(options, paired);
    verdict_of(
        ratio,
        (low, high),
        same,
        direction,
        (options.lower_is_better, options.equivalence),
        Estimate::RatioOfMeans,
        rule,
    )
}

/// An exact metric: the ratio of means, judged by its resolution.
fn exact(
    b: &Summary,
    v: &Summary,
    ratio: f64,
    interval: Option<(f64, f64)>,
    options: &CompareOptions,
) -> Comparison {
    let margin = options.equivalence.max(0.0);
    let same = ratio >= 1.0 - margin && ratio <= 1.0 + margin;
    let rule = rule(options, false);
    let mut c = verdict_of(
        ratio,
        (ratio, ratio),
        same,
        exact_direction(b, v),
        (options.lower_is_better, options.equivalence),
        Estimate::RatioOfMeans,
        rule,
    );
    // The bootstrap's spread is shown, though the resolution decides.
    let (low, high) = interval.unwrap_or((ratio, ratio));
    (c.ci_low, c.ci_high) = (low, high);
    c
}

/// The comparison an interval decides alone, `(ratio, low, high)`: same
/// when it lies within 1 ± `equivalence`, faster or slower when it lies on
/// one side of 1 (the test dual to it then rejects), else undecided.
pub fn by_interval(
    estimate: Estimate,
    (ratio, low, high): (f64, f64, f64),
    lower_is_better: bool,
    equivalence: f64,
    rule: String,
) -> Comparison {
    let margin = equivalence.max(0.0);
    let same = low >= 1.0 - margin && high <= 1.0 + margin;
    let direction = if high < 1.0 {
        Ordering::Less
    } else if low > 1.0 {
        Ordering::Greater
    } else {
        Ordering::Equal
    };
    verdict_of(
        ratio,
        (low, high),
        same,
        direction,
        (lower_is_better, equivalence),
        estimate,
        rule,
    )
}

/// The comparison of an estimate whose deciding interval is `(low, high)`.
fn verdict_of(
    ratio: f64,
    (low, high): (f64, f64),
    same: bool,
    direction: Ordering,
    (lower_is_better, equivalence): (bool, f64),
    estimate: Estimate,
    rule: String,
) -> Comparison {
    let verdict = match (same, direction, lower_is_better) {
        (true, _, _) => Verdict::Same,
        (false, Ordering::Less, true) | (false, Ordering::Greater, false) => Verdict::Faster,
        (false, Ordering::Greater, true) | (false, Ordering::Less, false) => Verdict::Slower,
        (false, Ordering::Equal, _) => Verdict::Undecided,
    };
    Comparison {
        ratio,
        improvement_pct: improvement(ratio, lower_is_better),
        ci_low: low,
        ci_high: high,
        estimate,
        p_value: None,
        mann_whitney_p: None,
        mean_ratio: None,
        mean_ci_low: None,
        mean_ci_high: None,
        median_ratio: None,
        median_ci_low: None,
        median_ci_high: None,
        signed_rank_p: None,
        verdict,
        equivalence_pct: tidy(equivalence.max(0.0) * 100.0),
        resolution_pct: (verdict == Verdict::Undecided)
            .then(|| (1.0 - low).max(high - 1.0).max(0.0) * 100.0),
        rule,
    }
}

/// Improvement in percent, positive when better whatever the direction.
pub fn improvement(ratio: f64, lower_is_better: bool) -> f64 {
    if lower_is_better {
        (1.0 - ratio) * 100.0
    } else {
        (ratio - 1.0) * 100.0
    }
}

/// A failure share judged on its complement, the answered share: the
/// ratio, interval and verdict are the answered share's (a variant that
/// failed more answered a smaller share: "slower"); the rule says so.
fn compare_share(
    baseline: &[f64],
    variant: &[f64],
    options: &CompareOptions,
) -> Option<Comparison> {
    let answered = |s: &[f64]| s.iter().map(|x| 1.0 - x).collect::<Vec<f64>>();
    let noisy = CompareOptions {
        precision: Precision::Noisy,
        lower_is_better: !options.lower_is_better,
        ..*options
    };
    let mut c = compare(&answered(baseline), &answered(variant), &noisy)?;
    c.rule = format!(
        "Share of requests that failed (error_rate, timeout_rate): judged on the answered share, 1 − share, so that a baseline that failed nothing still gives a ratio; its ratio, interval and verdict are the answered share's (below 1: the variant failed more). {}",
        c.rule
    );
    Some(c)
}

/// The median per-round ratio of paired rounds, its interval, and the
/// signed-rank test it is dual to.
struct PairedMedian {
    estimate: f64,
    low: f64,
    high: f64,
    p_value: Option<f64>,
}

impl PairedMedian {
    /// The comparison this median decides: same when its interval lies
    /// within 1 ± margin, faster or slower when it lies on one side of 1.
    fn comparison(&self, options: &CompareOptions) -> Comparison {
        let mut c = by_interval(
            Estimate::MedianRatio,
            (self.estimate, self.low, self.high),
            options.lower_is_better,
            options.equivalence,
            median_rule(options),
        );
        c.p_value = self.p_value;
        c.signed_rank_p = self.p_value;
        c.median_ratio = Some(self.estimate);
        c.median_ci_low = Some(self.low);
        c.median_ci_high = Some(self.high);
        c
    }
}

/// Hodges–Lehmann on the per-round log ratios; `None` unless every sample
/// is positive (a ratio needs it) and the rounds are enough for an interval
/// at `confidence`.
fn paired_median(baseline: &[f64], variant: &[f64], confidence: f64) -> Option<PairedMedian> {
    if baseline.len() < 2 || baseline.iter().chain(variant).any(|x| *x <= 0.0) {
        return None;
    }
    let logs: Vec<f64> = baseline
        .iter()
        .zip(variant)
        .map(|(b, v)| (v / b).ln())
        .collect();
    let hl = hodges_lehmann_interval(&logs, confidence)?;
    if !hl.attained {
        // Too few rounds for any interval at this level (fewer than 6 at
        // 95%): the caller falls back to the paired t.
        return None;
    }
    Some(PairedMedian {
        estimate: hl.estimate.exp(),
        low: hl.low.exp(),
        high: hl.high.exp(),
        // All rounds equal: no test, nothing to reject.
        p_value: Some(wilcoxon_signed_rank(&logs).map_or(1.0, |t| t.p_value)),
    })
}

impl Comparison {
    /// The verdict as a reader wants it: "faster", "slower", "same within
    /// ±1%", "undecided (±3.2% resolution)".
    pub fn verdict_text(&self) -> String {
        match (self.verdict, self.resolution_pct) {
            (Verdict::Same, _) => format!("same within ±{}%", self.equivalence_pct),
            (Verdict::Undecided, Some(r)) => format!("undecided (±{r:.1}% resolution)"),
            (verdict, _) => verdict.to_string(),
        }
    }
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

/// The rule of the median per-round ratio, in one sentence.
fn median_rule(options: &CompareOptions) -> String {
    format!(
        "Noisy metric, paired rounds: each round's ratio (variant / baseline of the same round) is one observation; the estimate shown is their median (Hodges–Lehmann, from the Walsh averages of the per-round log ratios) with its {c}% distribution-free interval (dual to the two-sided Wilcoxon signed-rank test); same when that interval lies within 1 ± {e}%; otherwise faster or slower when it lies on one side of 1 (the signed-rank p-value is then below {a}); otherwise undecided, with the resolution reached (the farther bound's distance from 1). The ratio of means is shown beside it, labelled.",
        c = tidy(options.confidence * 100.0),
        e = tidy(options.equivalence * 100.0),
        a = tidy(1.0 - options.confidence),
    )
}

/// The verdict rule of the ratio of means in one sentence: a noisy metric
/// with a value that is not positive (`paired`: rounds resampled
/// together), or an exact one.
fn rule(options: &CompareOptions, paired: bool) -> String {
    match options.precision {
        Precision::Noisy | Precision::Share => format!(
            "Noisy metric with values that are not all positive (no log ratio){}: same when the whole {}% percentile bootstrap interval of the ratio of means ({}) lies within 1 ± {}%; otherwise faster or slower when the interval lies on one side of 1 and the two-sided Mann-Whitney U p-value is below {}; otherwise undecided, with the resolution reached (the farther bound's distance from 1).",
            if paired { ", paired rounds" } else { ", unpaired" },
            tidy(options.confidence * 100.0),
            if paired { "resampling whole interleaved rounds" } else { "resampling each variant independently" },
            tidy(options.equivalence * 100.0),
            tidy(1.0 - options.confidence),
        ),
        Precision::Exact => format!(
            "Exact metric (callgrind instruction counts): the estimate is the ratio of means; same when it lies within 1 ± {}%; otherwise faster or slower when the difference of means exceeds {RESOLUTIONS}× the resolution, the larger within-variant range of the samples (at least a millionth of the baseline mean); otherwise undecided.",
            tidy(options.equivalence * 100.0),
        ),
    }
}

/// A level like 0.95 or 95.0 without float noise (0.050000000000000044).
pub fn tidy(x: f64) -> f64 {
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

pub mod fieller;
pub mod gate;
pub mod holm;
pub mod lookback;
mod mann_whitney;
pub mod mean_t;
mod normal;
pub mod paired_t;
pub mod power;
pub mod race;
pub mod sequential;
pub mod student_t;
mod warnings;
pub mod welch;
mod wilcoxon;

pub use mann_whitney::{mann_whitney_u, MannWhitney, UMethod};
pub use warnings::{min_runs_for, warnings, Warning};
pub use wilcoxon::{
    hodges_lehmann_interval, wilcoxon_signed_rank, HodgesLehmannInterval, IntervalMethod, Wilcoxon,
    WilcoxonMethod,
};

#[cfg(test)]
mod tests;
