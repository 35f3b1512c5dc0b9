//! Statistics of repeated runs: summaries (mean, median, STDDEVP, CV), the
//! Mann-Whitney U test, bootstrap intervals of a ratio, and the verdict rule
//! (rank test and interval for noisy metrics, resolution for exact ones).

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::rng::Rng;

/// Summary of one sample set; every field is in the metric's unit except `cv`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Number of samples.
    pub n: usize,
    pub mean: f64,
    pub median: f64,
    pub min: f64,
    pub max: f64,
    /// Population standard deviation (the seeds' STDDEVP).
    pub stddevp: f64,
    /// Coefficient of variation, stddevp / mean (a fraction); 0 when the mean is 0.
    pub cv: f64,
}

/// Summarize samples; `None` when there are none.
pub fn summarize(samples: &[f64]) -> Option<Summary> {
    if samples.is_empty() {
        return None;
    }
    let n = samples.len();
    let mean = mean(samples);
    let variance = samples.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64;
    let stddevp = variance.sqrt();
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    let median = if n % 2 == 1 {
        sorted[n / 2]
    } else {
        f64::midpoint(sorted[n / 2 - 1], sorted[n / 2])
    };
    Some(Summary {
        n,
        mean,
        median,
        min: sorted[0],
        max: sorted[n - 1],
        stddevp,
        cv: if mean == 0.0 {
            0.0
        } else {
            stddevp / mean.abs()
        },
    })
}

fn mean(samples: &[f64]) -> f64 {
    samples.iter().sum::<f64>() / samples.len() as f64
}

/// How the Mann-Whitney p-value was computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum UMethod {
    /// Exact null distribution (small samples without ties).
    Exact,
    /// Normal approximation with tie and continuity corrections.
    Asymptotic,
}

/// A two-sided Mann-Whitney U test.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct MannWhitney {
    /// U statistic of the first sample (as `scipy.stats.mannwhitneyu` reports it).
    pub u: f64,
    /// Two-sided p-value.
    pub p_value: f64,
    pub method: UMethod,
}

/// Two-sided Mann-Whitney U test, matching `scipy.stats.mannwhitneyu(a, b,
/// alternative='two-sided', method='auto')` (scipy 1.17 `_mwu_choose_method`):
/// exact unless both samples are larger than 8 or there are ties, else the
/// normal approximation with tie and continuity corrections. `None` if either
/// is empty.
#[allow(clippy::many_single_char_names)] // the textbook names
pub fn mann_whitney_u(a: &[f64], b: &[f64]) -> Option<MannWhitney> {
    if a.is_empty() || b.is_empty() {
        return None;
    }
    let (n1, n2) = (a.len(), b.len());
    let (ranks, tie_term) = ranks(&[a, b].concat());
    let r1: f64 = ranks[..n1].iter().sum();
    let u1 = r1 - (n1 * (n1 + 1)) as f64 / 2.0;
    let u2 = (n1 * n2) as f64 - u1;
    let u = u1.max(u2);
    let exact = !(n1 > 8 && n2 > 8) && tie_term == 0.0;
    let p = if exact {
        2.0 * exact_sf(u, n1, n2)
    } else {
        let n = (n1 + n2) as f64;
        let mu = (n1 * n2) as f64 / 2.0;
        let variance = (n1 * n2) as f64 / 12.0 * ((n + 1.0) - tie_term / (n * (n - 1.0)));
        if variance <= 0.0 {
            1.0
        } else {
            let z = (u - mu - 0.5) / variance.sqrt();
            2.0 * normal_sf(z)
        }
    };
    Some(MannWhitney {
        u: u1,
        p_value: p.clamp(0.0, 1.0),
        method: if exact {
            UMethod::Exact
        } else {
            UMethod::Asymptotic
        },
    })
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

/// P(U ≥ u) under the null hypothesis, from the exact distribution of U for
/// sample sizes n1, n2 (counting rank subsets by their sum).
fn exact_sf(u: f64, n1: usize, n2: usize) -> f64 {
    // U's null distribution is the same with the samples swapped; build it
    // over the smaller one to keep the table small.
    let (n1, n2) = (n1.min(n2), n1.max(n2));
    let max_u = n1 * n2;
    // counts[k][s]: subsets of size k of the ranks seen so far with U-sum s,
    // built one element at a time (the recurrence of Mann and Whitney, 1947).
    let mut counts = vec![vec![0.0_f64; max_u + 1]; n1 + 1];
    counts[0][0] = 1.0;
    for element in 0..(n1 + n2) {
        for k in (1..=n1.min(element + 1)).rev() {
            // Choosing this element as the k-th smallest of the subset adds
            // (element − (k − 1)) to U: the number of others below it.
            let Some(add) = element.checked_sub(k - 1) else {
                continue;
            };
            if add > n2 {
                continue;
            }
            for s in (add..=max_u).rev() {
                counts[k][s] += counts[k - 1][s - add];
            }
        }
    }
    let total: f64 = counts[n1].iter().sum();
    let at_least: f64 = counts[n1]
        .iter()
        .enumerate()
        .filter(|(s, _)| *s as f64 >= u - 1e-9)
        .map(|(_, c)| c)
        .sum();
    at_least / total
}

extern "C" {
    // From the C math library, which Rust's std already links on Linux.
    fn erfc(x: f64) -> f64;
}

/// P(Z > z) for a standard normal Z.
fn normal_sf(z: f64) -> f64 {
    // SAFETY: erfc is a pure function of a double.
    0.5 * unsafe { erfc(z / std::f64::consts::SQRT_2) }
}

/// How precise a metric is, which decides the verdict rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Precision {
    /// Wall and CPU time, RSS: judged by rank test and bootstrap interval.
    Noisy,
    /// Near-deterministic counts (callgrind instructions): judged by the
    /// difference against the measured spread (resolution).
    Exact,
}

/// The outcome of a comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Verdict {
    #[serde(rename = "faster")]
    Faster,
    #[serde(rename = "slower")]
    Slower,
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
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CompareOptions {
    /// Confidence level, e.g. 0.95.
    pub confidence: f64,
    /// Sample i of both sets came from round i of an interleaved bench.
    pub paired: bool,
    pub precision: Precision,
    /// For times and counts; false for throughput.
    pub lower_is_better: bool,
    /// Bootstrap resamples, e.g. 10 000.
    pub resamples: usize,
    pub seed: u64,
}

/// A variant against the baseline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// mean(variant) / mean(baseline): the seeds' Opt/Default.
    pub ratio: f64,
    /// Improvement in percent; positive is better whatever the direction.
    pub improvement_pct: f64,
    /// Lower bound of the ratio's bootstrap confidence interval.
    pub ci_low: f64,
    /// Upper bound of the ratio's bootstrap confidence interval.
    pub ci_high: f64,
    /// Two-sided Mann-Whitney U p-value (computed for both precisions; only
    /// noisy metrics are judged by it).
    pub p_value: Option<f64>,
    pub verdict: Verdict,
    /// The rule that decided the verdict, in words.
    pub rule: String,
}

/// Compare `variant` with `baseline`. `None` when either is empty, or when
/// the baseline's mean is zero but the variant's is not (the ratio is
/// undefined); two all-zero sets compare as equal.
pub fn compare(baseline: &[f64], variant: &[f64], options: &CompareOptions) -> Option<Comparison> {
    let (b, v) = (summarize(baseline)?, summarize(variant)?);
    let ratio = if b.mean == 0.0 {
        if v.mean == 0.0 {
            1.0
        } else {
            return None;
        }
    } else {
        v.mean / b.mean
    };
    let improvement_pct = if options.lower_is_better {
        (1.0 - ratio) * 100.0
    } else {
        (ratio - 1.0) * 100.0
    };
    let (ci_low, ci_high) = bootstrap_ratio(baseline, variant, options).unwrap_or((ratio, ratio));
    let p_value = mann_whitney_u(baseline, variant).map(|m| m.p_value);
    let (better, worse) = match options.precision {
        Precision::Noisy => {
            let alpha = 1.0 - options.confidence;
            let significant = p_value.is_some_and(|p| p < alpha);
            (significant && ci_high < 1.0, significant && ci_low > 1.0)
        }
        Precision::Exact => {
            let difference = v.mean - b.mean;
            let significant = difference.abs() > 3.0 * resolution(&b, &v);
            (
                significant && difference < 0.0,
                significant && difference > 0.0,
            )
        }
    };
    // `better`/`worse` above are in "ratio below/above 1"; flip for throughput.
    let (faster, slower) = if options.lower_is_better {
        (better, worse)
    } else {
        (worse, better)
    };
    let verdict = match (faster, slower) {
        (true, _) => Verdict::Faster,
        (_, true) => Verdict::Slower,
        _ => Verdict::NoSignificantDifference,
    };
    Some(Comparison {
        ratio,
        improvement_pct,
        ci_low,
        ci_high,
        p_value,
        verdict,
        rule: rule(options),
    })
}

/// The smallest difference an exact metric can resolve: the larger
/// within-variant range, and never below a millionth of the baseline mean.
fn resolution(b: &Summary, v: &Summary) -> f64 {
    (b.max - b.min).max(v.max - v.min).max(1e-6 * b.mean.abs())
}

fn rule(options: &CompareOptions) -> String {
    let level = options.confidence * 100.0;
    match options.precision {
        Precision::Noisy => format!(
            "Noisy metrics (times, RSS): a verdict of faster or slower needs both the whole {level:.0}% bootstrap interval of the ratio of means ({}) on one side of 1 and a two-sided Mann-Whitney U p-value below {:.2}; otherwise no significant difference.",
            if options.paired { "resampling whole interleaved rounds" } else { "resampling each variant independently" },
            1.0 - options.confidence
        ),
        Precision::Exact => "Exact metrics (callgrind instruction counts): a difference counts when it exceeds 3× the resolution, the larger within-variant range of the samples (at least a millionth of the baseline mean); identical samples give no significant difference.".to_owned(),
    }
}

/// Percentile bootstrap interval of mean(variant) / mean(baseline).
fn bootstrap_ratio(
    baseline: &[f64],
    variant: &[f64],
    options: &CompareOptions,
) -> Option<(f64, f64)> {
    let mut rng = Rng::new(options.seed);
    let paired = options.paired && baseline.len() == variant.len();
    let mut ratios = Vec::with_capacity(options.resamples);
    for _ in 0..options.resamples {
        let (sb, sv) = if paired {
            let mut sb = 0.0;
            let mut sv = 0.0;
            for _ in 0..baseline.len() {
                let i = rng.below(baseline.len());
                sb += baseline[i];
                sv += variant[i];
            }
            (sb, sv)
        } else {
            (
                resample_sum(baseline, &mut rng),
                resample_sum(variant, &mut rng),
            )
        };
        // Means over equal counts: the ratio of sums is the ratio of means.
        let scale = baseline.len() as f64 / variant.len() as f64;
        if sb != 0.0 {
            ratios.push(sv / sb * scale);
        }
    }
    if ratios.is_empty() {
        return None;
    }
    ratios.sort_by(f64::total_cmp);
    let tail = (1.0 - options.confidence) / 2.0;
    Some((quantile(&ratios, tail), quantile(&ratios, 1.0 - tail)))
}

fn resample_sum(samples: &[f64], rng: &mut Rng) -> f64 {
    (0..samples.len())
        .map(|_| samples[rng.below(samples.len())])
        .sum()
}

/// Linear-interpolation quantile of sorted data (numpy's default method).
fn quantile(sorted: &[f64], q: f64) -> f64 {
    let position = q * (sorted.len() - 1) as f64;
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let low = position.floor() as usize;
    let high = (low + 1).min(sorted.len() - 1);
    let fraction = position - low as f64;
    sorted[low] + (sorted[high] - sorted[low]) * fraction
}

/// Something a reader of a comparison should know.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Warning {
    /// So few runs that the rank test cannot reach significance at all.
    TooFewRuns { per_side: usize, needed: usize },
    /// The noise (CV) is larger than the effect seen; `needed` estimates the
    /// repetitions that would detect it (n ≈ 16·(cv/effect)², capped).
    NoiseHidesEffect {
        cv_pct: f64,
        effect_pct: f64,
        needed: usize,
    },
    /// Every sample of both sets is the same value.
    IdenticalSamples { value: f64 },
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Warning::TooFewRuns { per_side, needed } => write!(
                f,
                "too few repetitions ({per_side} per variant): the rank test cannot reach significance with so few; set repetitions = {needed} or more"
            ),
            Warning::NoiseHidesEffect { cv_pct, effect_pct, needed } => write!(
                f,
                "noise (CV {cv_pct:.1}%) is larger than the effect seen ({effect_pct:.1}%): about {needed} repetitions would be needed to detect it; or quiet the machine (pin the CPU, stop other load)"
            ),
            Warning::IdenticalSamples { value } => write!(
                f,
                "every sample is {value}: the metric may not measure this workload (too coarse a clock, or a command that does nothing)"
            ),
        }
    }
}

/// Warnings for one comparison.
pub fn warnings(
    baseline: &Summary,
    variant: &Summary,
    comparison: &Comparison,
    precision: Precision,
    confidence: f64,
) -> Vec<Warning> {
    let mut out = Vec::new();
    if precision == Precision::Exact {
        return out;
    }
    let per_side = baseline.n.min(variant.n);
    let needed = min_runs_for(confidence);
    if per_side < needed {
        out.push(Warning::TooFewRuns { per_side, needed });
    }
    #[allow(clippy::float_cmp)] // identical means exactly identical
    let identical =
        baseline.stddevp == 0.0 && variant.stddevp == 0.0 && baseline.mean == variant.mean;
    if identical {
        out.push(Warning::IdenticalSamples {
            value: baseline.mean,
        });
        return out;
    }
    let effect = (comparison.ratio - 1.0).abs();
    let cv = baseline.cv.max(variant.cv);
    // Effects under 1% are below what a timing on a shared machine can hope
    // to resolve; warning about them would only be noise.
    if comparison.verdict == Verdict::NoSignificantDifference && effect >= 0.01 && cv > effect {
        let estimate = (16.0 * (cv / effect).powi(2)).ceil().min(10_000.0);
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let needed = (estimate as usize).max(per_side + 1);
        out.push(Warning::NoiseHidesEffect {
            cv_pct: cv * 100.0,
            effect_pct: effect * 100.0,
            needed,
        });
    }
    out
}

/// The fewest runs per side for which an exact two-sided rank test can get
/// below 1 − confidence: the smallest p is 2 / C(2n, n).
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

    // Reference values below come from SciPy 1.17.1 / NumPy 2.4.6:
    //   scipy.stats.mannwhitneyu(a, b, alternative='two-sided', method='auto')
    // printing (statistic, pvalue); and np.mean, np.std (ddof=0), np.median.
    #[test]
    fn mann_whitney_matches_scipy() {
        type Case<'a> = (&'a [f64], &'a [f64], f64, f64, UMethod);
        let cases: [Case; 6] = [
            (&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0], 0.0, 0.1, UMethod::Exact),
            (
                &[1.1, 2.3, 0.7, 4.2, 3.3],
                &[2.9, 5.1, 6.0, 4.8, 3.9, 7.2],
                3.0,
                0.030_303_030_303_030_304,
                UMethod::Exact,
            ),
            (
                &[3.1, 4.7, 2.2, 5.9, 4.1],
                &[5.5, 6.1, 7.3, 4.9, 6.6, 8.0, 5.2, 7.7, 6.9, 5.8, 7.1, 6.4],
                4.0,
                0.003_878_474_466_709_760_5,
                UMethod::Exact,
            ),
            (
                &[1.0, 2.0, 2.0, 3.0, 3.0, 3.0, 4.0],
                &[3.0, 3.0, 4.0, 4.0, 5.0, 5.0, 6.0],
                6.0,
                0.017_854_292_789_382_96,
                UMethod::Asymptotic,
            ),
            (
                &[
                    10.2, 11.5, 9.8, 10.9, 12.1, 10.4, 11.8, 9.9, 10.7, 11.2, 10.1, 12.4,
                ],
                &[11.9, 12.6, 13.1, 12.2, 11.4, 13.5, 12.8, 12.0, 13.3, 12.5],
                9.0,
                0.000_868_861_059_834_744_9,
                UMethod::Asymptotic,
            ),
            (&[5.0; 4], &[5.0; 4], 8.0, 1.0, UMethod::Asymptotic),
        ];
        for (a, b, u, p, method) in cases {
            let got = mann_whitney_u(a, b).unwrap();
            assert!(close(got.u, u), "U {} != {u} for {a:?} {b:?}", got.u);
            assert!(
                close(got.p_value, p),
                "p {} != {p} for {a:?} {b:?}",
                got.p_value
            );
            assert_eq!(got.method, method);
        }
        assert!(mann_whitney_u(&[], &[1.0]).is_none());
    }

    #[test]
    fn summary_matches_numpy() {
        let s = summarize(&[1.5, 2.5, 2.0, 8.0, 3.0, 4.5]).unwrap();
        assert!(close(s.mean, 3.583_333_333_333_333_5));
        assert!(close(s.stddevp, 2.187_400_791_401_114_7));
        assert!(close(s.median, 2.75));
        assert!(close(s.cv, 0.610_437_430_158_450_5));
        assert_eq!((s.min, s.max, s.n), (1.5, 8.0, 6));
        assert!(summarize(&[]).is_none());
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

    /// A noisy timing sample: lognormal jitter with an occasional 2× outlier.
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
        let mut rng = Rng::new(2026);
        let trials = 1000;
        let equal = (0..trials)
            .filter(|&t| {
                let (a, b) = (noisy(&mut rng, 1.0, 10), noisy(&mut rng, 1.0, 10));
                compare(&a, &b, &options(Precision::Noisy, t))
                    .unwrap()
                    .verdict
                    == Verdict::NoSignificantDifference
            })
            .count();
        assert!(equal >= 950, "only {equal}/{trials} A/A pairs called equal");
    }

    #[test]
    fn a_true_20_percent_gain_is_found() {
        let mut rng = Rng::new(7);
        let trials = 200;
        let found = (0..trials)
            .filter(|&t| {
                let a: Vec<f64> = (0..10).map(|_| 1.0 + 0.05 * rng.normal()).collect();
                let b: Vec<f64> = (0..10).map(|_| 0.8 + 0.04 * rng.normal()).collect();
                compare(&a, &b, &options(Precision::Noisy, t))
                    .unwrap()
                    .verdict
                    == Verdict::Faster
            })
            .count();
        assert!(found >= 180, "only {found}/{trials} found");
    }

    #[test]
    fn exact_metric_needs_only_three_samples() {
        let base = [1e9, 1e9 + 3.0, 1e9 - 2.0];
        let pgo: Vec<f64> = base.iter().map(|x| x * 0.93).collect();
        let c = compare(&base, &pgo, &options(Precision::Exact, 1)).unwrap();
        assert_eq!(c.verdict, Verdict::Faster);
        assert!((c.improvement_pct - 7.0).abs() < 1e-6);
        assert!(c.ci_high < 1.0);
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
    }

    #[test]
    fn degenerate_inputs_never_panic_or_give_nan() {
        for precision in [Precision::Noisy, Precision::Exact] {
            let o = options(precision, 5);
            for (a, b) in [
                (&[2.0; 5][..], &[2.0; 5][..]),
                (&[1.0][..], &[3.0][..]),
                (&[0.0, 0.0][..], &[0.0, 0.0][..]),
            ] {
                let c = compare(a, b, &o).unwrap();
                for x in [
                    c.ratio,
                    c.improvement_pct,
                    c.ci_low,
                    c.ci_high,
                    c.p_value.unwrap(),
                ] {
                    assert!(x.is_finite(), "{c:?}");
                }
                if precision == Precision::Noisy || a == b {
                    assert_eq!(
                        c.verdict,
                        Verdict::NoSignificantDifference,
                        "{a:?} {b:?} {c:?}"
                    );
                }
            }
            assert!(
                compare(&[0.0, 0.0], &[1.0, 2.0], &o).is_none(),
                "undefined ratio"
            );
            assert!(compare(&[], &[1.0], &o).is_none());
        }
    }

    #[test]
    fn warnings_say_what_to_do() {
        let (base, variant) = ([1.0, 1.1, 0.9], [0.95, 1.08, 0.88]);
        let (b, v) = (summarize(&base).unwrap(), summarize(&variant).unwrap());
        let c = compare(&base, &variant, &options(Precision::Noisy, 1)).unwrap();
        let w = warnings(&b, &v, &c, Precision::Noisy, 0.95);
        assert!(
            w.iter().any(|w| matches!(
                w,
                Warning::TooFewRuns {
                    per_side: 3,
                    needed: 4
                }
            )),
            "{w:?}"
        );
        assert!(
            w.iter()
                .any(|w| matches!(w, Warning::NoiseHidesEffect { .. })),
            "{w:?}"
        );
        assert!(w[0].to_string().contains("repetitions = 4"));
        let same = summarize(&[2.0; 5]).unwrap();
        let c = compare(&[2.0; 5], &[2.0; 5], &options(Precision::Noisy, 1)).unwrap();
        assert!(matches!(
            warnings(&same, &same, &c, Precision::Noisy, 0.95)[..],
            [Warning::IdenticalSamples { .. }]
        ));
        assert!(warnings(&same, &same, &c, Precision::Exact, 0.95).is_empty());
    }

    #[test]
    fn effects_under_one_percent_get_no_noise_warning() {
        let (base, variant) = (
            [100.0, 110.0, 90.0, 105.0, 95.0],
            [100.5, 110.5, 90.5, 105.5, 95.5],
        );
        let (b, v) = (summarize(&base).unwrap(), summarize(&variant).unwrap());
        let c = compare(&base, &variant, &options(Precision::Noisy, 1)).unwrap();
        assert_eq!(c.verdict, Verdict::NoSignificantDifference);
        assert!(warnings(&b, &v, &c, Precision::Noisy, 0.95).is_empty());
    }

    #[test]
    fn min_runs_follow_the_exact_test() {
        // 2 / C(6,3) = 0.1, 2 / C(8,4) = 0.029, 2 / C(10,5) = 0.0079.
        assert_eq!(min_runs_for(0.95), 4);
        assert_eq!(min_runs_for(0.99), 5);
    }
}
