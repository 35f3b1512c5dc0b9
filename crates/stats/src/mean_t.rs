//! Student's t interval for the mean of a few independent observations:
//! `x̄ ± t₁₋α/₂,ₙ₋₁ · s/√n` (`scipy.stats.t.interval(c, n − 1, loc=x̄,
//! scale=scipy.stats.sem(x))`, which the tests check). It assumes the
//! observations are drawn independently from one roughly normal
//! distribution; with three of them its quantile is 4.30 at 95%, so the
//! interval is wide unless they agree.

/// The mean of the observations and its interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MeanInterval {
    pub mean: f64,
    pub low: f64,
    pub high: f64,
    /// Degrees of freedom: observations − 1.
    pub df: f64,
}

/// The `confidence` (e.g. 0.95) interval of the mean of `values`; `None`
/// with fewer than two values or a value that is not finite.
pub fn interval(values: &[f64], confidence: f64) -> Option<MeanInterval> {
    if values.len() < 2 || values.iter().any(|v| !v.is_finite()) {
        return None;
    }
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let variance = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
    let df = n - 1.0;
    let t = super::student_t::upper_quantile((1.0 - confidence) / 2.0, df);
    let half = t * (variance / n).sqrt();
    Some(MeanInterval {
        mean,
        low: mean - half,
        high: mean + half,
        df,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reference values from SciPy 1.17: `scipy.stats.t.interval(c,
    /// len(x) − 1, loc=mean(x), scale=scipy.stats.sem(x))`.
    #[test]
    fn matches_scipy() {
        let cases: [(&[f64], f64, [f64; 3]); 3] = [
            (
                &[0.74, 0.58, 0.51],
                0.95,
                [0.61, 0.317_124_483_139_904_1, 0.902_875_516_860_095_9],
            ),
            (
                &[0.12, -0.05, 0.33, 0.21, 0.18],
                0.95,
                [0.158, -0.014_810_011_612_501_395, 0.330_810_011_612_501_4],
            ),
            (
                &[0.81, 0.87, 0.83, 0.80],
                0.90,
                [0.8275, 0.791_073_511_884_946_2, 0.863_926_488_115_054],
            ),
        ];
        for (values, confidence, [mean, low, high]) in cases {
            let got = interval(values, confidence).unwrap();
            for (g, want) in [(got.mean, mean), (got.low, low), (got.high, high)] {
                assert!((g - want).abs() < 1e-9, "{values:?}: {got:?}");
            }
            assert!((got.df - (values.len() as f64 - 1.0)).abs() < 1e-12);
        }
    }

    #[test]
    fn one_value_or_a_non_finite_one_has_no_interval() {
        assert_eq!(interval(&[0.5], 0.95), None);
        assert_eq!(interval(&[0.5, f64::NAN], 0.95), None);
        let same = interval(&[0.5, 0.5, 0.5], 0.95).unwrap();
        assert!((same.low - 0.5).abs() < 1e-15 && (same.high - 0.5).abs() < 1e-15);
    }
}
