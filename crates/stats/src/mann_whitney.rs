//! The two-sided Mann-Whitney U test, matching `scipy.stats.mannwhitneyu`.

use serde::{Deserialize, Serialize};

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
    2.0 * super::normal::normal_sf(z)
}

/// Midranks (1-based) of `values`, and the tie term Σ(t³ − t) over tie
/// groups; the signed-rank test ranks magnitudes with it too.
pub(super) fn ranks(values: &[f64]) -> (Vec<f64>, f64) {
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
