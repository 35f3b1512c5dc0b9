//! Welch's t-test on the logarithms of two unpaired sample sets: the ratio
//! of their geometric means, with its interval, for samples that are not
//! paired by round (lengths that differ, runs of separate benches).
//!
//! The log values of each side have their own variance; the standard error
//! of the difference of log means is √(s²(b)/n(b) + s²(v)/n(v)) on
//! Welch–Satterthwaite's degrees of freedom (Welch 1947, "The
//! generalization of Student's problem when several different population
//! variances are involved", Biometrika 34; Satterthwaite 1946), as
//! `scipy.stats.ttest_ind(np.log(v), np.log(b), equal_var=False)`, which
//! the tests check. It is exact under log-normal noise and robust to
//! unequal noise, where a pooled variance is not.

use super::paired_t::{mean_sd, LogEstimate};
use super::{Comparison, Estimate};

/// Welch's t of `variant` against `baseline` on their log values, at
/// `confidence`; `None` with fewer than 2 samples a side or a value that is
/// not positive.
pub fn compare(
    baseline: &[f64],
    variant: &[f64],
    confidence: f64,
    equivalence: f64,
    lower_is_better: bool,
) -> Option<Comparison> {
    let (nb, nv) = (baseline.len(), variant.len());
    if nb < 2 || nv < 2 || baseline.iter().chain(variant).any(|x| *x <= 0.0) {
        return None;
    }
    let logs = |x: &[f64]| x.iter().map(|v| v.ln()).collect::<Vec<f64>>();
    let (mb, sb) = mean_sd(&logs(baseline));
    let (mv, sv) = mean_sd(&logs(variant));
    let (qb, qv) = (sb * sb / nb as f64, sv * sv / nv as f64);
    let se = (qb + qv).sqrt();
    let df = if se == 0.0 {
        (nb + nv - 2) as f64
    } else {
        (qb + qv).powi(2) / (qb * qb / (nb - 1) as f64 + qv * qv / (nv - 1) as f64)
    };
    let estimate = LogEstimate {
        mean: mv - mb,
        se,
        df,
    };
    let mut c = estimate.comparison(
        confidence,
        equivalence,
        lower_is_better,
        rule(nb, nv, confidence, equivalence),
    );
    c.estimate = Estimate::RatioOfGeometricMeans;
    Some(c)
}

fn rule(nb: usize, nv: usize, confidence: f64, equivalence: f64) -> String {
    let tidy = |x: f64| (x * 1e6).round() / 1e6;
    format!(
        "Noisy metric, unpaired ({nb} baseline and {nv} variant samples, not paired by round): Welch's t-test on the log values, the estimate shown is the ratio of geometric means with its {c}% interval exp(difference of log means ± t·se) on Welch–Satterthwaite's degrees of freedom; same when that interval lies within 1 ± {e}%; faster or slower when it lies on one side of 1 (the t-test's p is then below {a}); otherwise undecided, with the resolution reached.",
        c = tidy(confidence * 100.0),
        e = tidy(equivalence * 100.0),
        a = tidy(1.0 - confidence),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Verdict;

    fn close(a: f64, b: f64, tolerance: f64) -> bool {
        (a - b).abs() <= tolerance * b.abs().max(1e-300)
    }

    /// Reference values from SciPy 1.17: `scipy.stats.ttest_ind(np.log(v),
    /// np.log(b), equal_var=False).pvalue`, and the interval
    /// `np.exp(d ∓ t.ppf(0.975, df)·se)` with d the difference of log means,
    /// se² = var(log b)/n(b) + var(log v)/n(v) (ddof 1) and Welch–
    /// Satterthwaite's df (5.567).
    #[test]
    fn matches_scipy_welch_on_log_values() {
        let b = [10.0, 11.5, 9.8, 10.7, 10.1];
        let v = [12.4, 13.0, 12.2, 12.5];
        let c = compare(&b, &v, 0.95, 0.01, true).unwrap();
        assert!(close(c.p_value.unwrap(), P, 1e-6), "{:?}", c.p_value);
        assert!(close(c.ratio, RATIO, 1e-9), "{}", c.ratio);
        assert!(close(c.ci_low, LOW, 1e-6), "{}", c.ci_low);
        assert!(close(c.ci_high, HIGH, 1e-6), "{}", c.ci_high);
        assert_eq!(c.verdict, Verdict::Slower);
        assert_eq!(c.estimate, Estimate::RatioOfGeometricMeans);
        assert!(compare(&[1.0], &[2.0, 3.0], 0.95, 0.01, true).is_none());
        assert!(compare(&[1.0, 0.0], &[2.0, 3.0], 0.95, 0.01, true).is_none());
    }

    const P: f64 = 0.001_499_455_384_052_638_7;
    const RATIO: f64 = 1.203_740_594_570_824_2;
    const LOW: f64 = 1.111_417_569_999_973;
    const HIGH: f64 = 1.303_732_690_691_362_9;
}
