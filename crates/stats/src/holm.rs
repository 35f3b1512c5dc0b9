//! Holm's step-down correction for a family of tests (S. Holm, "A simple
//! sequentially rejective multiple test procedure", Scandinavian Journal of
//! Statistics 6(2), 1979, 65–70): the k-th smallest of m p-values (from 0)
//! is tested at α / (m − k), and testing stops at the first that is not
//! rejected. The family-wise error rate (the chance of any false claim) is
//! then at most α whatever the dependence between the tests, which is what
//! a report with ten metrics of one pair of builds needs: they are far
//! from independent.

/// Holm's level of each test, in the order given: α / (m − k) for the test
/// whose p-value is the k-th smallest (ties in the order given).
pub fn levels(p_values: &[f64], alpha: f64) -> Vec<f64> {
    let m = p_values.len();
    let mut out = vec![alpha; m];
    for (k, &i) in order(p_values).iter().enumerate() {
        out[i] = alpha / (m - k) as f64;
    }
    out
}

/// The truncated Holm procedure's level of each test, in the order given:
/// α·(γ / (m − k) + (1 − γ) / m) for the k-th smallest p-value (from 0),
/// with truncation `gamma` in [0, 1] (0: Bonferroni, 1: Holm). Below 1 it
/// is separable, so a family behind it in a gatekeeping chain may be
/// tested at the α it leaves, [`truncated_leftover`] (Dmitrienko, Tamhane
/// & Wiens, "General multistage gatekeeping procedures", Biometrical
/// Journal 50(5), 2008, 667–677, section 3.2).
pub fn truncated_levels(p_values: &[f64], alpha: f64, gamma: f64) -> Vec<f64> {
    let m = p_values.len();
    let mut out = vec![alpha; m];
    for (k, &i) in order(p_values).iter().enumerate() {
        out[i] = alpha * (gamma / (m - k) as f64 + (1.0 - gamma) / m as f64);
    }
    out
}

/// The α a truncated Holm family of `m` tests with `rejected` of them
/// rejected passes on to the next family: all of α when every test was
/// rejected, else α·(1 − γ)·rejected / m (α less the procedure's error
/// rate function at the accepted set; Dmitrienko, Tamhane & Wiens 2008).
pub fn truncated_leftover(m: usize, rejected: usize, alpha: f64, gamma: f64) -> f64 {
    if m == 0 || rejected >= m {
        alpha
    } else {
        alpha * (1.0 - gamma) * rejected as f64 / m as f64
    }
}

/// The indices of `p_values`, smallest p first (a NaN sorts last).
pub fn order(p_values: &[f64]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..p_values.len()).collect();
    order.sort_by(|&a, &b| p_values[a].total_cmp(&p_values[b]));
    order
}

/// Holm-adjusted p-values, in the order given: the running maximum of
/// (m − k)·p₍ₖ₎, capped at 1. A test is rejected at level α exactly when
/// its adjusted p-value is below α (as statsmodels' `multipletests(…,
/// method="holm")` computes them).
pub fn adjusted(p_values: &[f64]) -> Vec<f64> {
    let m = p_values.len();
    let mut out = vec![1.0; m];
    let mut running: f64 = 0.0;
    for (k, &i) in order(p_values).iter().enumerate() {
        running = running.max(((m - k) as f64 * p_values[i]).min(1.0));
        out[i] = running;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Truncated Holm's critical values by Dmitrienko, Tamhane & Wiens's
    /// (2008) formula for m = 3, γ = 0.5, α = 0.05: α(γ/(m − k) + (1 −
    /// γ)/m) = 0.016667, 0.020833, 0.033333 for k = 0, 1, 2; γ = 0 is
    /// Bonferroni's α/m throughout, γ = 1 Holm's.
    #[test]
    fn truncated_holm_spans_bonferroni_to_holm() {
        let p = [0.03, 0.001, 0.2];
        let close = |a: &[f64], b: &[f64]| a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-6);
        let t = truncated_levels(&p, 0.05, 0.5);
        assert!(close(&t, &[0.020_833, 0.016_667, 0.033_333]), "{t:?}");
        assert!(close(&truncated_levels(&p, 0.05, 0.0), &[0.05 / 3.0; 3]));
        assert!(close(&truncated_levels(&p, 0.05, 1.0), &levels(&p, 0.05)));
        assert!((truncated_leftover(3, 3, 0.05, 0.5) - 0.05).abs() < 1e-12);
        assert!((truncated_leftover(3, 2, 0.05, 0.5) - 0.05 * 0.5 * 2.0 / 3.0).abs() < 1e-12);
        assert!(truncated_leftover(3, 0, 0.05, 0.5).abs() < 1e-12);
    }

    /// Reference values from statsmodels 0.14
    /// (`multipletests(p, alpha=0.05, method="holm")[1]`).
    #[test]
    fn adjusted_p_values_match_statsmodels() {
        let cases: [(&[f64], &[f64]); 2] = [
            (&[0.01, 0.04, 0.03, 0.005], &[0.03, 0.06, 0.06, 0.02]),
            (
                &[0.001, 0.02, 0.2, 0.04, 0.013, 0.5, 0.0101, 0.6, 0.03],
                &[0.009, 0.12, 0.6, 0.16, 0.091, 1.0, 0.0808, 1.0, 0.15],
            ),
        ];
        for (p, expected) in cases {
            let got = adjusted(p);
            for (g, e) in got.iter().zip(expected) {
                assert!((g - e).abs() < 1e-12, "{got:?} vs {expected:?}");
            }
        }
    }

    #[test]
    fn levels_step_down_from_alpha_over_m() {
        let l = levels(&[0.01, 0.04, 0.03, 0.005], 0.05);
        assert_eq!(l, vec![0.05 / 3.0, 0.05, 0.05 / 2.0, 0.05 / 4.0]);
        assert!(levels(&[], 0.05).is_empty());
    }

    /// By simulation: ten independent null tests (uniform p-values) at
    /// α = 0.05 reject at least one in ~40% of families uncorrected
    /// (1 − 0.95¹⁰), and in at most 5% with Holm.
    #[test]
    fn family_wise_error_stays_below_alpha_under_the_null() {
        let mut rng = afterburner_leaves::rng::Rng::new(7);
        let families: u32 = 20_000;
        let (mut raw, mut corrected) = (0, 0);
        for _ in 0..families {
            let p: Vec<f64> = (0..10).map(|_| rng.next_f64()).collect();
            raw += usize::from(p.iter().any(|&x| x < 0.05));
            corrected += usize::from(adjusted(&p).iter().any(|&x| x < 0.05));
        }
        let (raw, corrected) = (
            raw as f64 / f64::from(families),
            corrected as f64 / f64::from(families),
        );
        assert!((raw - 0.401).abs() < 0.02, "uncorrected {raw}");
        assert!(corrected <= 0.055, "Holm {corrected}");
        assert!(corrected >= 0.04, "Holm {corrected}");
    }
}
