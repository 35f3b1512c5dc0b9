//! Moderated variances (Smyth, "Linear models and empirical Bayes methods
//! for assessing differential expression in microarray experiments",
//! Statistical Applications in Genetics and Molecular Biology 3, 2004; the
//! method of limma's `squeezeVar` without covariates): several groups'
//! variances, each on `df` degrees of freedom, are taken as draws from a
//! scaled inverse-χ² prior whose degrees of freedom d₀ and scale s₀² are
//! estimated from their spread; each group's posterior variance
//! (d₀·s₀² + df·s²)/(d₀ + df) then rests on d₀ + df degrees of freedom.
//! Where the variances agree, d₀ is large and every group borrows the
//! common one (a pooled test's power); where one group is noisier, d₀ is
//! small and its own variance counts (a pooled test would judge it by
//! the others' and err far beyond its level).
//!
//! The race no longer uses them (issue 47): for a fixed noisier candidate
//! the prior is wrong, its variance shrinks toward the quiet ones' and its
//! pairs' intervals miss far beyond their level ([`super::race`]).
//!
//! ψ and its derivatives by recurrence to x ≥ 10 and their asymptotic
//! series; checked against `scipy.special.polygamma`.

/// Digamma ψ(x), x > 0.
pub fn digamma(mut x: f64) -> f64 {
    let mut shift = 0.0;
    while x < 10.0 {
        shift -= 1.0 / x;
        x += 1.0;
    }
    let r = 1.0 / (x * x);
    shift + x.ln()
        - 0.5 / x
        - r * (1.0 / 12.0 - r * (1.0 / 120.0 - r * (1.0 / 252.0 - r * (1.0 / 240.0 - r / 132.0))))
}

/// Trigamma ψ′(x), x > 0.
pub fn trigamma(mut x: f64) -> f64 {
    let mut shift = 0.0;
    while x < 10.0 {
        shift += 1.0 / (x * x);
        x += 1.0;
    }
    let r = 1.0 / (x * x);
    shift + 1.0 / x + r / 2.0 + r / x * (1.0 / 6.0 - r * (1.0 / 30.0 - r * (1.0 / 42.0 - r / 30.0)))
}

/// Tetragamma ψ″(x), x > 0.
fn tetragamma(mut x: f64) -> f64 {
    let mut shift = 0.0;
    while x < 10.0 {
        shift -= 2.0 / (x * x * x);
        x += 1.0;
    }
    let r = 1.0 / (x * x);
    shift
        - r / x
        - r * (1.0 + r * (0.5 - r * (1.0 / 6.0 - r * (1.0 / 6.0 - r * (0.3 - r * 5.0 / 6.0)))))
}

/// The y with ψ′(y) = x, x > 0, by Newton's method from limma's start.
pub fn trigamma_inverse(x: f64) -> f64 {
    if x > 1e7 {
        return 1.0 / x.sqrt();
    }
    if x < 1e-6 {
        return 1.0 / x;
    }
    let mut y = 0.5 + 1.0 / x;
    for _ in 0..100 {
        let tri = trigamma(y);
        let step = tri * (1.0 - tri / x) / tetragamma(y);
        y += step;
        if -step / y < 1e-8 {
            break;
        }
    }
    y
}

/// The prior of a set of variances: its degrees of freedom (∞ when the
/// variances agree no more than sampling alone makes them) and scale.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Prior {
    pub df: f64,
    pub scale: f64,
}

/// The prior estimated from `variances` (all > 0), each on `df` > 0
/// degrees of freedom; `None` with fewer than two or a variance ≤ 0.
pub fn prior(variances: &[f64], df: f64) -> Option<Prior> {
    if variances.len() < 2
        || variances.iter().any(|v| v.is_nan() || *v <= 0.0)
        || df.is_nan()
        || df <= 0.0
    {
        return None;
    }
    let half = df / 2.0;
    let e: Vec<f64> = variances
        .iter()
        .map(|v| v.ln() - digamma(half) + half.ln())
        .collect();
    let n = e.len() as f64;
    let mean = e.iter().sum::<f64>() / n;
    let spread = e.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0) - trigamma(half);
    Some(if spread > 0.0 {
        let d0 = 2.0 * trigamma_inverse(spread);
        Prior {
            df: d0,
            scale: (mean + digamma(d0 / 2.0) - (d0 / 2.0).ln()).exp(),
        }
    } else {
        Prior {
            df: f64::INFINITY,
            scale: mean.exp(),
        }
    })
}

impl Prior {
    /// A variance on `df` degrees of freedom moderated by this prior, and
    /// the degrees of freedom it rests on.
    pub fn moderate(self, variance: f64, df: f64) -> (f64, f64) {
        if self.df.is_infinite() {
            return (self.scale, f64::INFINITY);
        }
        (
            (self.df * self.scale + df * variance) / (self.df + df),
            self.df + df,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tolerance: f64) -> bool {
        (a - b).abs() <= tolerance * b.abs()
    }

    /// scipy.special.digamma and polygamma(1 and 2, x), SciPy 1.17.1.
    #[test]
    fn polygamma_matches_scipy() {
        let cases = [
            (
                0.5,
                -1.963_510_026_021_423_5,
                4.934_802_200_544_68,
                -16.828_796_644_234_316,
            ),
            (
                1.0,
                -0.577_215_664_901_532_9,
                1.644_934_066_848_226_6,
                -2.404_113_806_319_188,
            ),
            (
                2.5,
                0.703_156_640_645_243_2,
                0.490_357_756_100_234_9,
                -0.236_204_051_641_727_36,
            ),
            (
                7.0,
                1.872_784_335_098_467,
                0.153_545_177_959_337_56,
                -0.023_530_472_985_855_234,
            ),
            (
                30.0,
                3.384_438_132_685_525,
                0.033_895_060_357_739_946,
                -0.001_148_765_203_728_599_7,
            ),
        ];
        for (x, psi, psi1, psi2) in cases {
            assert!(close(digamma(x), psi, 1e-10), "ψ({x}) = {}", digamma(x));
            assert!(close(trigamma(x), psi1, 1e-10), "ψ′({x}) = {}", trigamma(x));
            assert!(
                close(tetragamma(x), psi2, 1e-10),
                "ψ″({x}) = {}",
                tetragamma(x)
            );
        }
        for x in [0.3, 2.0, 0.01, 50.0] {
            assert!(close(trigamma(trigamma_inverse(x)), x, 1e-8), "{x}");
        }
        // limma's trigammaInverse(0.3) and (2), by the same Newton steps
        // on SciPy's polygamma.
        assert!(close(trigamma_inverse(0.3), 3.808_719_012_051_166_7, 1e-8));
        assert!(close(trigamma_inverse(2.0), 0.876_664_077_460_164_2, 1e-8));
    }

    /// limma's squeezeVar, written out on SciPy's polygamma: variances
    /// that agree get an infinite prior df (every group borrows the common
    /// scale); scattered ones a small one.
    #[test]
    fn the_prior_matches_limma() {
        let agree = prior(&[0.01, 0.02, 0.015, 0.03, 0.012], 4.0).unwrap();
        assert!(agree.df.is_infinite());
        assert!(close(agree.scale, 0.021_091_226_857_662_862, 1e-10));
        let agree = prior(&[1.0, 1.1, 0.9, 1.05], 6.0).unwrap();
        assert!(agree.df.is_infinite());
        assert!(close(agree.scale, 1.203_835_741_975_071_6, 1e-10));
        let scattered = prior(&[0.5, 4.0, 0.2, 1.0, 9.0, 0.1], 3.0).unwrap();
        assert!(
            close(scattered.df, 1.722_219_892_907_542_7, 1e-7),
            "{scattered:?}"
        );
        assert!(
            close(scattered.scale, 0.616_323_982_932_337, 1e-7),
            "{scattered:?}"
        );
        let (v, df) = scattered.moderate(9.0, 3.0);
        assert!(v < 9.0 && v > scattered.scale && close(df, 4.722_219_892_907_543, 1e-7));
        assert!(prior(&[1.0, 0.0], 3.0).is_none());
    }
}
