//! A paired t-test on the per-round log ratios, for the few rounds the
//! signed-rank test cannot decide (its smallest two-sided p with n pairs is
//! 2/2ⁿ: 0.0625 at 5 rounds, so fewer than 6 can never reach 5%).
//!
//! Each interleaved round gives one ratio variant / baseline; its logarithm
//! is one observation, and the test is Student's one-sample t on their mean
//! (`scipy.stats.ttest_1samp(log_ratios, 0)`, which the tests check), with
//! the interval exp(mean ± t₁₋α/₂,ₙ₋₁ · s/√n) of the geometric mean ratio.
//! It assumes the log ratios are roughly normal, which the signed-rank test
//! does not; it is used only where that test cannot decide at all, and the
//! verdict's rule says which test decided.

use super::{student_t, Comparison, Estimate};

/// The paired t-test of `variant` against `baseline` (sample i of each from
/// round i), at `confidence`; `None` with fewer than 2 rounds, lengths that
/// differ, or a value that is not positive (no ratio).
pub fn compare(
    baseline: &[f64],
    variant: &[f64],
    confidence: f64,
    equivalence: f64,
    lower_is_better: bool,
) -> Option<Comparison> {
    let n = baseline.len();
    if n < 2 || variant.len() != n || baseline.iter().chain(variant).any(|x| *x <= 0.0) {
        return None;
    }
    let logs: Vec<f64> = baseline
        .iter()
        .zip(variant)
        .map(|(b, v)| (v / b).ln())
        .collect();
    let (mean, sd) = mean_sd(&logs);
    let estimate = LogEstimate {
        mean,
        se: sd / (n as f64).sqrt(),
        df: (n - 1) as f64,
    };
    Some(estimate.comparison(
        confidence,
        equivalence,
        lower_is_better,
        rule(n, confidence, equivalence),
    ))
}

/// A ratio's logarithm estimated with a standard error on `df` degrees of
/// freedom: what Student's t judges.
#[derive(Debug, Clone, Copy)]
pub struct LogEstimate {
    pub mean: f64,
    pub se: f64,
    pub df: f64,
}

impl LogEstimate {
    /// The comparison this estimate gives at `confidence`: the interval
    /// exp(mean ± t·se), the two-sided p of t = mean/se, and the verdict
    /// (same within 1 ± `equivalence`, faster or slower when the interval
    /// lies on one side of 1, else undecided), judged by `rule`.
    pub fn comparison(
        self,
        confidence: f64,
        equivalence: f64,
        lower_is_better: bool,
        rule: String,
    ) -> Comparison {
        let LogEstimate { mean, se, df } = self;
        let alpha = 1.0 - confidence;
        let (low, high, p) = if se == 0.0 {
            // Every observation gave the same ratio: the interval is that ratio.
            (mean, mean, if mean == 0.0 { 1.0 } else { 0.0 })
        } else {
            let half = student_t::upper_quantile(alpha / 2.0, df) * se;
            let t = mean / se;
            (mean - half, mean + half, 2.0 * student_t::sf(t.abs(), df))
        };
        let mut c = super::by_interval(
            Estimate::GeometricMeanRatio,
            (mean.exp(), low.exp(), high.exp()),
            lower_is_better,
            equivalence,
            rule,
        );
        c.p_value = Some(p);
        c
    }
}

pub(super) fn mean_sd(x: &[f64]) -> (f64, f64) {
    let n = x.len() as f64;
    let mean = x.iter().sum::<f64>() / n;
    let var = x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, var.sqrt())
}

fn rule(n: usize, confidence: f64, equivalence: f64) -> String {
    let tidy = |x: f64| (x * 1e6).round() / 1e6;
    format!(
        "Noisy metric, {n} paired rounds (too few for the signed-rank test's interval at {c}%: at 95% it needs 6): each round's log ratio (variant / baseline of the same round) is one observation; Student's paired t-test on their mean, the estimate shown is the geometric mean ratio with its {c}% interval exp(mean ± t·s/√n); same when that interval lies within 1 ± {e}%; faster or slower when it lies on one side of 1 (the t-test's p is then below {a}); otherwise undecided, with the resolution reached.",
        a = tidy(1.0 - confidence),
        c = tidy(confidence * 100.0),
        e = tidy(equivalence * 100.0),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Verdict;

    fn close(a: f64, b: f64, tolerance: f64) -> bool {
        (a - b).abs() <= tolerance * b.abs().max(1e-300)
    }

    /// Reference values from SciPy 1.x: `scipy.stats.ttest_1samp(
    /// np.log(v / b), 0).pvalue` and `np.exp(mean ∓ t.ppf(0.975, n−1)·se)`.
    /// Baseline, variant, then SciPy's p, ratio, low and high, and the verdict.
    type Case<'a> = (&'a [f64], &'a [f64], f64, f64, f64, f64, Verdict);

    #[test]
    fn matches_scipy_on_a_regression_a_small_shift_and_noise() {
        let cases: [Case; 3] = [
            (
                &[11.06, 11.2, 10.9],
                &[21.38, 21.0, 22.1],
                0.001_169_566_896_604_025,
                1.944_195_232_826_925_4,
                1.762_851_015_161_965_2,
                2.144_194_302_772_465,
                Verdict::Slower,
            ),
            (
                &[10.0, 11.5, 9.8, 10.7, 10.1],
                &[10.4, 11.0, 10.2, 10.5, 10.3],
                0.693_127_675_318_474_9,
                1.007_128_139_556_751_7,
                0.961_396_825_476_217_3,
                1.055_034_781_277_354_8,
                Verdict::Undecided,
            ),
            (
                &[100.0, 102.0, 98.0, 101.0],
                &[105.0, 106.5, 103.2, 106.0],
                0.000_110_678_250_524_878_63,
                1.049_166_009_523_774_5,
                1.043_261_885_323_612_6,
                1.055_103_546_889_951,
                Verdict::Slower,
            ),
        ];
        for (b, v, p, ratio, low, high, verdict) in cases {
            let c = compare(b, v, 0.95, 0.01, true).unwrap();
            assert!(
                close(c.p_value.unwrap(), p, 1e-6),
                "p {:?} vs {p}",
                c.p_value
            );
            assert!(close(c.ratio, ratio, 1e-9), "{} vs {ratio}", c.ratio);
            assert!(close(c.ci_low, low, 1e-6), "{} vs {low}", c.ci_low);
            assert!(close(c.ci_high, high, 1e-6), "{} vs {high}", c.ci_high);
            assert_eq!(c.verdict, verdict);
        }
    }

    #[test]
    fn a_throughput_that_drops_is_slower_and_nothing_is_judged_from_one_round() {
        let c = compare(
            &[100.0, 101.0, 99.0],
            &[80.0, 81.0, 79.5],
            0.95,
            0.01,
            false,
        )
        .unwrap();
        assert_eq!(c.verdict, Verdict::Slower);
        assert!(compare(&[1.0], &[2.0], 0.95, 0.01, true).is_none());
        assert!(compare(&[1.0, 0.0], &[2.0, 1.0], 0.95, 0.01, true).is_none());
        let same = compare(&[5.0, 5.0, 5.0], &[5.0, 5.0, 5.0], 0.95, 0.01, true).unwrap();
        assert_eq!(same.verdict, Verdict::Same);
    }

    /// By simulation: two identical builds (log-normal noise, CV 10%, the
    /// rounds sharing a common drift) are called faster or slower in about
    /// α of 4,000 trials at 3 and 5 rounds, and a 2× regression is caught
    /// nearly always at 3.
    #[test]
    fn its_false_alarm_rate_is_the_level_and_a_doubling_is_caught() {
        let mut rng = afterburner_leaves::rng::Rng::new(7);
        let mut normal = || rng.normal();
        for rounds in [3_usize, 5] {
            let trials = 4000;
            let mut claims = 0;
            for _ in 0..trials {
                let mut b = Vec::new();
                let mut v = Vec::new();
                for _ in 0..rounds {
                    let drift = 0.2 * normal();
                    b.push((drift + 0.1 * normal()).exp());
                    v.push((drift + 0.1 * normal()).exp());
                }
                let c = compare(&b, &v, 0.95, 0.0, true).unwrap();
                claims += usize::from(matches!(c.verdict, Verdict::Faster | Verdict::Slower));
            }
            let rate = f64::from(u32::try_from(claims).unwrap()) / f64::from(trials);
            assert!((0.03..0.07).contains(&rate), "{rounds} rounds: {rate}");
        }
        let mut caught = 0;
        for _ in 0..1000 {
            let (mut b, mut v) = (Vec::new(), Vec::new());
            for _ in 0..3 {
                let drift = 0.2 * normal();
                b.push((drift + 0.1 * normal()).exp());
                v.push((drift + 0.1 * normal() + 2.0_f64.ln()).exp());
            }
            caught +=
                usize::from(compare(&b, &v, 0.95, 0.0, true).unwrap().verdict == Verdict::Slower);
        }
        assert!(caught > 900, "{caught} of 1000");
    }
}
