//! The power of a paired t-test on per-round log ratios, the smallest effect
//! a number of rounds decides, and the rounds an effect needs: what
//! `afterburner calibrate` sizes a plan by.
//!
//! The paired t's statistic under a true mean log ratio δ with per-round
//! spread σ is noncentral t with n − 1 degrees of freedom and noncentrality
//! λ = (δ/σ)·√n, so its two-sided power at level α is
//! P(T' > c) + P(T' < −c), c the t quantile at 1 − α/2. Written as
//! T' = (Z + λ)/S with S = √(χ²ᵥ/ν), that is the mean over S of
//! Φ(λ − cS) + Φ(−λ − cS),
//! an integral over S's density taken here by Simpson's rule (the same
//! quantity as `statsmodels.stats.power.TTestPower().power`).

use super::normal::normal_sf;
use super::student_t::{ln_gamma, upper_quantile};

/// The conventional power a plan is sized for.
pub const POWER: f64 = 0.8;

/// Most rounds [`rounds_needed`] looks at; beyond it an effect is "out of
/// reach" of the noise measured.
pub const MAX_ROUNDS: u32 = 100_000;

/// The two-sided power of a paired t-test at level `alpha` with `n` pairs
/// (n ≥ 2), for a standardized effect `d` = δ/σ (the true mean difference
/// over the differences' standard deviation).
pub fn paired_t_power(d: f64, n: u32, alpha: f64) -> f64 {
    if n < 2 {
        return f64::NAN;
    }
    let nu = f64::from(n - 1);
    let lambda = d.abs() * f64::from(n).sqrt();
    let c = upper_quantile(alpha / 2.0, nu);
    // S = √(χ²ᵥ/ν) has mean ≈ 1 and standard deviation ≈ 1/√(2ν); its
    // density is negligible 12 of those away (and S = |Z| at ν = 1).
    let spread = 12.0 / (2.0 * nu).sqrt();
    let (low, high) = ((1.0 - spread).max(0.0), 1.0 + spread);
    let ln_norm = (nu / 2.0) * 2f64.ln() + ln_gamma(nu / 2.0);
    let density = |s: f64| {
        if s <= 0.0 {
            // The density at 0 is 0 but at ν = 1, where it is √(2/π).
            return if n == 2 {
                (2.0 / std::f64::consts::PI).sqrt()
            } else {
                0.0
            };
        }
        let v = nu * s * s;
        ((2.0 * nu * s).ln() + (nu / 2.0 - 1.0) * v.ln() - v / 2.0 - ln_norm).exp()
    };
    let integrand = |s: f64| density(s) * (normal_sf(c * s - lambda) + normal_sf(c * s + lambda));
    simpson(integrand, low, high, 4000)
}

/// ∫ f over [a, b] by Simpson's rule on `steps` (even) intervals.
fn simpson(f: impl Fn(f64) -> f64, a: f64, b: f64, steps: u32) -> f64 {
    let h = (b - a) / f64::from(steps);
    let inner: f64 = (1..steps)
        .map(|i| {
            let weight = if i % 2 == 1 { 4.0 } else { 2.0 };
            weight * f(a + h * f64::from(i))
        })
        .sum();
    (f(a) + inner + f(b)) * h / 3.0
}

/// The smallest standardized effect d = δ/σ that a two-sided paired t with
/// `n` pairs at level `alpha` detects with probability `power` (bisection:
/// the power rises with d).
pub fn min_detectable_d(n: u32, alpha: f64, power: f64) -> f64 {
    if n < 2 {
        return f64::INFINITY;
    }
    let (mut low, mut high) = (0.0_f64, 1.0_f64);
    while paired_t_power(high, n, alpha) < power {
        high *= 2.0;
        if high > 1e6 {
            return f64::INFINITY;
        }
    }
    for _ in 0..60 {
        let mid = f64::midpoint(low, high);
        if paired_t_power(mid, n, alpha) < power {
            low = mid;
        } else {
            high = mid;
        }
    }
    high
}

/// The fewest pairs (at least 2) with which a two-sided paired t at level
/// `alpha` detects the standardized effect `d` with probability `power`;
/// `None` beyond [`MAX_ROUNDS`].
pub fn rounds_needed(d: f64, alpha: f64, power: f64) -> Option<u32> {
    let reaches = |n: u32| paired_t_power(d, n, alpha) >= power;
    let mut high = 2;
    while !reaches(high) {
        if high >= MAX_ROUNDS {
            return None;
        }
        high = (high * 2).min(MAX_ROUNDS);
    }
    let mut low = high / 2; // does not reach (or is below 2)
    if low < 2 {
        return Some(high);
    }
    while high - low > 1 {
        let mid = u32::midpoint(low, high);
        if reaches(mid) {
            high = mid;
        } else {
            low = mid;
        }
    }
    Some(high)
}

#[cfg(test)]
mod tests {
    use super::*;

    // Reference values from statsmodels 0.15.0 (`statsmodels.stats.power.
    // TTestPower`, a one-sample or paired t on the noncentral t
    // distribution, two-sided):
    //   TTestPower().power(effect_size=1.0, nobs=10, alpha=0.05)  = 0.8030969
    //   TTestPower().power(effect_size=0.5, nobs=20, alpha=0.05)  = 0.5645044
    //   TTestPower().power(effect_size=2.0, nobs=3,  alpha=0.05)  = 0.4707494
    //   TTestPower().power(effect_size=1.5, nobs=2,  alpha=0.05)  = 0.1329521
    //   TTestPower().solve_power(nobs=10, alpha=0.05, power=0.8)  = 0.9960019
    //   TTestPower().solve_power(effect_size=0.5, alpha=0.05, power=0.8) = 33.367
    #[test]
    fn power_matches_statsmodels_ttest_power() {
        let cases = [
            (1.0, 10, 0.803_096_9),
            (0.5, 20, 0.564_504_4),
            (2.0, 3, 0.470_749_4),
            (1.5, 2, 0.132_952_1),
        ];
        for (d, n, expected) in cases {
            let power = paired_t_power(d, n, 0.05);
            assert!(
                (power - expected).abs() < 1e-5,
                "d {d}, n {n}: {power} against {expected}"
            );
        }
    }

    #[test]
    fn the_smallest_effect_and_the_rounds_needed_match_statsmodels() {
        let d = min_detectable_d(10, 0.05, POWER);
        assert!((d - 0.996_001_9).abs() < 1e-4, "{d}");
        // statsmodels solves for a fractional 33.37 pairs: 34 is the first whole.
        assert_eq!(rounds_needed(0.5, 0.05, POWER), Some(34));
    }

    #[test]
    fn no_effect_has_the_level_as_its_power_and_two_pairs_still_integrate() {
        // Under the null a test's rejection rate is its level.
        assert!((paired_t_power(0.0, 8, 0.05) - 0.05).abs() < 1e-5);
        assert!((paired_t_power(0.0, 2, 0.05) - 0.05).abs() < 1e-4);
        assert_eq!(rounds_needed(1e-9, 0.05, POWER), None);
    }
}
