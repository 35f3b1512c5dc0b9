//! Paired statistics: the two-sided Wilcoxon signed-rank test of paired
//! differences, matching `scipy.stats.wilcoxon`, and the Hodges–Lehmann
//! estimate of their median with its distribution-free confidence interval
//! (Hollander & Wolfe, *Nonparametric Statistical Methods*, §3.2–3.3; R's
//! `wilcox.test(d, conf.int = TRUE)`).
//!
//! Differences are finite values in any unit; the caller passes per-round log
//! ratios ln(variant / baseline), so an estimate or bound `x` reads as the
//! ratio e^x. Estimates and bounds are in the differences' unit; p-values and
//! coverages are probabilities (0 to 1). For finite input nothing here panics
//! or returns a NaN; a NaN or infinite difference gives `None`.

use serde::{Deserialize, Serialize};

use super::normal::{erfc_safe, normal_sf, normal_upper_quantile};

/// SciPy's `method='auto'` is exact (or a permutation test) only while the
/// input, zeros included, has at most this many differences.
const EXACT_UP_TO: usize = 50;
/// With ties or zeros, SciPy enumerates all 2^n sign patterns (a permutation
/// test that is exact since 2^13 < its default 9999 resamples) up to this
/// many differences, zeros included; above, the normal approximation.
const PERMUTATION_UP_TO: usize = 13;
/// The interval's rank comes from the exact null distribution up to this many
/// differences (O(n³) work, about 2·10⁶ steps at 200), from the normal
/// approximation above, whose stated coverage is then within 3·10⁻⁴ of the
/// exact one.
const EXACT_INTERVAL_UP_TO: usize = 200;
/// Slack when comparing a tail probability with α/2: the level 1 − 0.95 is
/// 0.050000000000000044 in floating point.
const LEVEL_SLACK: f64 = 1e-12;

/// How the signed-rank p-value was computed (SciPy 1.17's choice for
/// `method='auto'`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum WilcoxonMethod {
    /// Exact null distribution of the rank sum over ranks 1..n: at most 50
    /// differences, none zero, no tied magnitudes.
    Exact,
    /// Exact distribution over all 2^n sign patterns of the actual (average)
    /// ranks: ties or zeros among at most 13 differences (SciPy's
    /// `PermutationMethod`, which enumerates them all at that size).
    Permutation,
    /// Normal approximation with the tie correction and no continuity
    /// correction: more than 50 differences (zeros included), or ties or
    /// zeros among more than 13.
    Asymptotic,
}

/// A two-sided Wilcoxon signed-rank test of paired differences.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Wilcoxon {
    /// Non-zero differences used (a count); zeros are dropped.
    pub n: usize,
    /// Sum of the (average) ranks of |d| over the positive differences, a
    /// rank sum between 0 and n(n+1)/2.
    pub r_plus: f64,
    /// SciPy's two-sided statistic, min(r₊, r₋) with r₋ = n(n+1)/2 − r₊.
    pub statistic: f64,
    /// Two-sided p-value (a probability, 0 to 1); 1 when every difference
    /// is zero.
    pub p_value: f64,
    /// How `p_value` was computed.
    pub method: WilcoxonMethod,
}

/// Two-sided Wilcoxon signed-rank test of the paired differences `d`,
/// matching `scipy.stats.wilcoxon(d, zero_method='wilcox', correction=False,
/// alternative='two-sided', method='auto')` of SciPy 1.17.
///
/// Zeros are dropped ('wilcox'); the magnitudes of the rest get average
/// ranks. The p-value is 2·min(P(T₊ ≤ r₊), P(T₊ ≥ r₊)), at most 1, under the
/// null distribution [`WilcoxonMethod`] names; SciPy decides by the length of
/// `d` *with* its zeros (more than 50: asymptotic, even if fewer non-zero
/// differences remain).
///
/// Every difference zero gives p = 1 and n = 0 ("no difference"; SciPy gives
/// 1 for at most 13 values and NaN above). `None` when `d` is empty or holds a
/// NaN or an infinity.
pub fn wilcoxon_signed_rank(d: &[f64]) -> Option<Wilcoxon> {
    if d.is_empty() || d.iter().any(|x| !x.is_finite()) {
        return None;
    }
    let nonzero: Vec<f64> = d.iter().copied().filter(|x| *x != 0.0).collect();
    let n = nonzero.len();
    let magnitudes: Vec<f64> = nonzero.iter().map(|x| x.abs()).collect();
    let (ranks, tie_term) = super::mann_whitney::ranks(&magnitudes);
    let r_plus: f64 = nonzero
        .iter()
        .zip(&ranks)
        .filter(|(x, _)| **x > 0.0)
        .map(|(_, r)| r)
        .sum();
    let total = (n * (n + 1)) as f64 / 2.0;
    let statistic = r_plus.min(total - r_plus);
    let method = if d.len() > EXACT_UP_TO {
        WilcoxonMethod::Asymptotic
    } else if tie_term == 0.0 && n == d.len() {
        WilcoxonMethod::Exact
    } else if d.len() <= PERMUTATION_UP_TO {
        WilcoxonMethod::Permutation
    } else {
        WilcoxonMethod::Asymptotic
    };
    let p_value = if n == 0 {
        1.0
    } else {
        match method {
            // Without ties the ranks are 1..n: the same enumeration gives
            // SciPy's tabulated exact distribution.
            WilcoxonMethod::Exact | WilcoxonMethod::Permutation => exact_p(&ranks, r_plus),
            WilcoxonMethod::Asymptotic => asymptotic_p(r_plus, n, tie_term),
        }
    };
    Some(Wilcoxon {
        n,
        r_plus,
        statistic,
        p_value: p_value.clamp(0.0, 1.0),
        method,
    })
}

/// Two-sided p of the rank sum `r_plus` under the distribution of Σ sᵢ·rᵢ
/// over all 2^n sign patterns s ∈ {0, 1}ⁿ of `ranks` (each a whole or half
/// rank).
fn exact_p(ranks: &[f64], r_plus: f64) -> f64 {
    // Doubled, average ranks are whole numbers.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // 2 ≤ 2r ≤ 2n
    let doubled: Vec<usize> = ranks.iter().map(|r| (r * 2.0).round() as usize).collect();
    let top: usize = doubled.iter().sum();
    let probability = sum_distribution(&doubled, top + 1);
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // 0 ≤ 2r₊ ≤ top
    let observed = ((r_plus * 2.0).round() as usize).min(top);
    let lower: f64 = probability[..=observed].iter().sum();
    let upper: f64 = probability[observed..].iter().sum();
    (2.0 * lower.min(upper)).min(1.0)
}

/// P(Σ sᵢ·vᵢ = s) for s in 0..len, the sᵢ independent fair coin flips in
/// {0, 1} (len may cut the tail off). Each step halves, so for at most 52
/// values every probability is a multiple of 2⁻ⁿ held exactly, as SciPy's
/// table of the exact distribution is.
fn sum_distribution(values: &[usize], len: usize) -> Vec<f64> {
    let mut probability = vec![0.0_f64; len.max(1)];
    probability[0] = 1.0;
    let mut reach = 0;
    for &v in values {
        reach = (reach + v).min(probability.len() - 1);
        for s in (0..=reach).rev() {
            let carried = if s >= v { probability[s - v] } else { 0.0 };
            probability[s] = 0.5 * (probability[s] + carried);
        }
    }
    probability
}

/// Two-sided p of the normal approximation (SciPy's, `correction=False`):
/// z = (r₊ − n(n+1)/4) / σ with σ² = n(n+1)(2n+1)/24 − Σ(t³ − t)/48 over tie
/// groups of |d|; 1 when σ is 0.
fn asymptotic_p(r_plus: f64, n: usize, tie_term: f64) -> f64 {
    let n = n as f64;
    let mean = n * (n + 1.0) / 4.0;
    let variance = n * (n + 1.0) * (2.0 * n + 1.0) / 24.0 - tie_term / 48.0;
    if variance <= 0.0 {
        return 1.0;
    }
    let z = (r_plus - mean) / variance.sqrt();
    2.0 * normal_sf(z.abs())
}

/// How the Hodges–Lehmann interval's rank was chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IntervalMethod {
    /// From the exact null distribution of the signed rank sum over ranks
    /// 1..n: at most 200 differences, none tied with another.
    Exact,
    /// From its normal approximation with the tie correction: ties among the
    /// differences, or more than 200 of them.
    Asymptotic,
}

/// The Hodges–Lehmann estimate of the median of paired differences and the
/// distribution-free confidence interval that goes with it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct HodgesLehmannInterval {
    /// Differences used (a count), zeros included.
    pub n: usize,
    /// Median of the n(n+1)/2 Walsh averages (dᵢ + dⱼ)/2, i ≤ j, in the
    /// differences' unit (the "(pseudo)median" of R's `wilcox.test`).
    pub estimate: f64,
    /// Lower bound, the k-th smallest Walsh average, in the differences' unit.
    pub low: f64,
    /// Upper bound, the k-th largest Walsh average, in the differences' unit.
    pub high: f64,
    /// The rank k (1-based) of the bounds among the sorted Walsh averages.
    pub k: usize,
    /// The interval's coverage, 1 − 2·P(T₊ ≤ k − 1) under the null (a
    /// probability): exact for [`IntervalMethod::Exact`], else its normal
    /// approximation with continuity correction. At least the confidence asked
    /// for when `attained`; below it otherwise.
    pub achieved: f64,
    /// Whether any interval reaches the confidence asked for. False when the
    /// differences are too few (fewer than 6 at 95%, 5 at 90%): then `low`
    /// and `high` are the smallest and largest differences (k = 1) and
    /// `achieved` is the most coverage they allow (1 − 2⁻⁽ⁿ⁻¹⁾ without ties).
    pub attained: bool,
    /// How k was chosen.
    pub method: IntervalMethod,
}

/// The Hodges–Lehmann estimate of the median of the paired differences `d`
/// and its two-sided distribution-free interval at `confidence` (a fraction,
/// 0.95), as Hollander & Wolfe (§3.3) and R's `wilcox.test(d, conf.int =
/// TRUE, exact = TRUE)` give it.
///
/// The interval is [W₍ₖ₎, W₍ₘ₊₁₋ₖ₎] of the M = n(n+1)/2 sorted Walsh
/// averages, k the largest rank with P(T₊ ≤ k − 1) ≤ (1 − confidence)/2 under
/// the signed-rank null distribution; it then excludes a value δ (not itself
/// a Walsh average) exactly when the exact signed-rank test of d − δ has
/// p ≤ 1 − confidence. Where no k ≥ 1
/// qualifies, k = 1 and `attained` is false. With tied differences, or more
/// than 200, k = ⌊M/2 + ½ − z·σ⌋ (the normal tail with continuity
/// correction), σ² = n(n+1)(2n+1)/24 − Σ(t³ − t)/48 over groups of equal
/// differences.
///
/// Unlike R, zeros count as differences (R drops them, then switches to its
/// asymptotic interval, a root search, as it does for ties; this one stays
/// with order statistics of the Walsh averages). Without zeros or ties and
/// for at most 200 differences the bounds, estimate and coverage are R's
/// exact ones (R's default for n < 50, `exact = TRUE` above). `confidence`
/// is clamped to [0, 1]. `None` when `d` is empty, holds a NaN or an
/// infinity, or `confidence` is NaN. Memory and time grow as n²: about 16
/// MB for 2 000 differences.
#[allow(clippy::many_single_char_names)] // the textbook's n, m, k, d, z
pub fn hodges_lehmann_interval(d: &[f64], confidence: f64) -> Option<HodgesLehmannInterval> {
    if d.is_empty() || confidence.is_nan() || d.iter().any(|x| !x.is_finite()) {
        return None;
    }
    let n = d.len();
    let mut walsh = Vec::with_capacity(n * (n + 1) / 2);
    for (i, &a) in d.iter().enumerate() {
        for &b in &d[i..] {
            walsh.push(f64::midpoint(a, b));
        }
    }
    walsh.sort_unstable_by(f64::total_cmp);
    let m = walsh.len();
    let estimate = if m % 2 == 1 {
        walsh[m / 2]
    } else {
        f64::midpoint(walsh[m / 2 - 1], walsh[m / 2])
    };
    let tail = (1.0 - confidence.clamp(0.0, 1.0)) / 2.0;
    let tie_term = super::mann_whitney::ranks(d).1;
    let (found, achieved, method) = if tie_term == 0.0 && n <= EXACT_INTERVAL_UP_TO {
        let (k, achieved) = exact_rank(n, tail);
        (k, achieved, IntervalMethod::Exact)
    } else {
        let (k, achieved) = asymptotic_rank(n, tie_term, tail);
        (k, achieved, IntervalMethod::Asymptotic)
    };
    let k = found.max(1);
    Some(HodgesLehmannInterval {
        n,
        estimate,
        low: walsh[k - 1],
        high: walsh[m - k],
        k,
        achieved: achieved.clamp(0.0, 1.0),
        attained: found >= 1,
        method,
    })
}

/// The largest rank k ≤ (M+1)/2 with P(T₊ ≤ k − 1) ≤ `tail` for n untied
/// differences (0 when even k = 1 fails), and the coverage 1 − 2·P(T₊ ≤ k − 1)
/// of the interval at rank max(k, 1).
fn exact_rank(n: usize, tail: f64) -> (usize, f64) {
    let most = (n * (n + 1) / 2).div_ceil(2);
    let ranks: Vec<usize> = (1..=n).collect();
    let probability = sum_distribution(&ranks, most);
    let mut k = 0;
    let mut below = 0.0; // P(T₊ ≤ k − 1)
    let mut excluded = probability[0]; // what rank max(k, 1) leaves out
    for p in &probability {
        if below + p > tail + LEVEL_SLACK {
            break;
        }
        below += p;
        excluded = below;
        k += 1;
    }
    (k, 1.0 - 2.0 * excluded)
}

/// [`exact_rank`] by the normal approximation of T₊ with continuity
/// correction and the tie term Σ(t³ − t) of equal differences: the largest k ≤
/// (M+1)/2 with Φ((k − ½ − M/2) / σ) ≤ `tail` (0 when none), and the
/// coverage of the interval at rank max(k, 1).
fn asymptotic_rank(n: usize, tie_term: f64, tail: f64) -> (usize, f64) {
    let pairs = (n * (n + 1) / 2) as f64;
    let mean = pairs / 2.0;
    let nf = n as f64;
    let untied = nf * (nf + 1.0) * (2.0 * nf + 1.0) / 24.0;
    // All differences equal leaves no variance, and every Walsh average the
    // same: any rank gives the same point, so take the untied spread.
    let variance = Some(untied - tie_term / 48.0)
        .filter(|v| *v > 0.0)
        .unwrap_or(untied);
    let sigma = variance.sqrt();
    let z = normal_upper_quantile(tail);
    let most = (n * (n + 1) / 2).div_ceil(2);
    let raw = (mean + 0.5 - z * sigma).floor();
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // within 0..=most
    let k = if raw >= 1.0 {
        (raw.min(most as f64)) as usize
    } else {
        0
    };
    let rank = k.max(1) as f64;
    let excluded = 0.5 * erfc_safe((mean + 0.5 - rank) / sigma / std::f64::consts::SQRT_2);
    (k, 1.0 - 2.0 * excluded)
}

#[cfg(test)]
mod tests {
    use super::*;
    use afterburner_leaves::rng::Rng;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1e-12)
    }

    // Generated once by NumPy 2.4.6 (`np.random.default_rng(20240611)`,
    // normal draws rounded to 5 decimals, redrawn until no |d| ties or
    // zeros); the same lists feed the SciPy and R references below.
    const N10: [f64; 10] = [
        0.00778, 0.00165, 0.01499, -0.0238, 0.01769, 0.00557, -0.00252, 0.01397, -0.02703, 0.00883,
    ];
    const N12: [f64; 12] = [
        -0.02063, 0.00219, 0.00285, -0.02456, -0.02466, -0.0354, -0.02175, 0.00039, 0.01115,
        -0.00142, -0.0053, -0.02335,
    ];
    const N30: [f64; 30] = [
        0.00792, -0.01231, 0.00879, -5e-05, 0.02112, 0.00805, 0.03138, -0.00416, 0.01912, 0.0085,
        0.03793, -0.03524, 0.02149, -0.01647, -0.01337, 0.00363, -0.02621, -0.01989, -0.00611,
        -0.00245, -0.03407, -0.01347, 0.00108, 0.00136, -0.00925, 0.00392, -0.00627, 0.02747,
        -0.01218, 0.00518,
    ];
    const N50: [f64; 50] = [
        -0.00379, 0.02309, -0.01343, 0.02353, -0.01791, -0.02134, -0.00497, 0.00784, -0.02442,
        -0.00408, 0.00592, 0.00529, 0.02351, 0.02169, 0.01266, 0.02427, 0.02479, -0.01618, 0.04971,
        0.00502, -0.00612, 0.018, -0.00377, 0.01854, -0.01803, 0.02051, -0.01928, 0.01351, 0.00174,
        -0.00403, 0.00906, -0.00551, -0.00944, 0.0139, 0.04462, -0.01396, 0.0291, 0.02763, -0.0164,
        0.0098, 0.01648, -0.01222, 0.02758, 0.02356, 0.03997, 0.0138, 0.02492, 0.04224, 0.01006,
        -0.004,
    ];
    const N60: [f64; 60] = [
        -0.02276, 0.00092, -0.00637, 0.01143, 0.00276, 0.00958, -0.03507, -0.02218, -0.00181,
        0.00238, -0.01749, -0.01904, -0.00554, -0.0025, 0.03428, -0.01268, 0.00575, -0.03926,
        -0.00701, -0.01142, -0.03077, -0.02441, -0.01791, -0.02064, -0.04296, -0.01147, -0.00698,
        -0.01112, 0.01129, -0.00842, -0.00301, -0.00572, -0.00266, -0.02619, -0.01074, 0.03084,
        0.00153, -0.00828, -0.014, 0.00257, -0.00489, -0.00067, 0.0125, -0.00211, -0.0068,
        -0.01727, -0.03152, 0.00353, 0.00216, -0.0182, -0.01617, -0.02687, -0.02479, -0.01196,
        -0.0062, 0.01246, 0.00623, -0.01592, 0.0112, -0.04397,
    ];
    // `np.round(N60, 3)` (NumPy rounds halves to even): many tied magnitudes.
    const N60_TIES: [f64; 60] = [
        -0.023, 0.001, -0.006, 0.011, 0.003, 0.01, -0.035, -0.022, -0.002, 0.002, -0.017, -0.019,
        -0.006, -0.002, 0.034, -0.013, 0.006, -0.039, -0.007, -0.011, -0.031, -0.024, -0.018,
        -0.021, -0.043, -0.011, -0.007, -0.011, 0.011, -0.008, -0.003, -0.006, -0.003, -0.026,
        -0.011, 0.031, 0.002, -0.008, -0.014, 0.003, -0.005, -0.001, 0.012, -0.002, -0.007, -0.017,
        -0.032, 0.004, 0.002, -0.018, -0.016, -0.027, -0.025, -0.012, -0.006, 0.012, 0.006, -0.016,
        0.011, -0.044,
    ];
    // Differences with tied magnitudes, with zeros, or both.
    const TIES10: [f64; 10] = [0.01, 0.01, -0.02, 0.03, 0.03, 0.03, -0.01, 0.02, 0.05, 0.04];
    const ZERO9: [f64; 9] = [
        0.0, 0.011, -0.023, 0.031, 0.042, 0.057, 0.061, -0.007, 0.083,
    ];
    const TIES_ZEROS13: [f64; 13] = [
        0.0, 0.0, 0.02, -0.02, 0.03, 0.05, 0.05, 0.06, -0.01, 0.07, 0.08, 0.04, 0.09,
    ];
    const TIES14: [f64; 14] = [
        0.02, -0.02, 0.03, 0.05, 0.05, 0.06, -0.01, 0.07, 0.08, 0.04, 0.09, 0.11, -0.03, 0.12,
    ];
    const ZEROS20: [f64; 20] = [
        0.0, 0.013, -0.021, 0.034, 0.0, 0.046, -0.008, 0.052, 0.061, 0.019, -0.027, 0.071, 0.015,
        0.029, -0.004, 0.038, 0.043, -0.012, 0.057, 0.066,
    ];

    /// Hollander & Wolfe's Table 3.1 (Hamilton depression scale before, x,
    /// and after, y, tranquilizer; n = 9), d = y − x as R computes it.
    #[allow(clippy::approx_constant)] // 3.14 is a score, not π
    fn depression() -> Vec<f64> {
        let x = [1.83, 0.50, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06, 1.30];
        let y = [0.878, 0.647, 0.598, 2.05, 1.06, 1.29, 1.06, 3.14, 1.29];
        x.iter().zip(y).map(|(x, y)| y - x).collect()
    }

    // SciPy 1.17.1 / NumPy 2.4.6 (Python 3), each case printed by
    //   r = scipy.stats.wilcoxon(d, zero_method='wilcox', correction=False,
    //                            alternative='two-sided', method='auto')
    //   g = scipy.stats.wilcoxon(d, zero_method='wilcox', correction=False,
    //                            alternative='greater', method='asymptotic')
    //   print(repr(float(r.statistic)), repr(float(r.pvalue)), g.statistic)
    // (g.statistic is r₊); the method is the branch scipy/stats/_wilcoxon.py's
    // `_wilcoxon_nd` takes, and each p was reproduced by passing that method
    // ('exact', 'asymptotic', or PermutationMethod()) explicitly.
    #[test]
    fn signed_rank_matches_scipy() {
        use WilcoxonMethod::{Asymptotic, Exact, Permutation};
        // (d, n, r₊, statistic, p, method)
        type Case<'a> = (&'a [f64], usize, f64, f64, f64, WilcoxonMethod);
        let depression = depression();
        let n49_zeros3 = [&N50[..49], &[0.0; 3]].concat();
        let n47_zeros3 = [&N50[..47], &[0.0; 3]].concat();
        let cases: [Case; 17] = [
            (&[0.3], 1, 1.0, 0.0, 1.0, Exact),
            (
                &[0.012, -0.004, 0.031, 0.022, 0.015],
                5,
                14.0,
                1.0,
                0.125,
                Exact,
            ),
            // The smallest p six differences can give: 2 / 2⁶.
            (
                &[0.1, 0.2, 0.3, 0.4, 0.5, 0.6],
                6,
                21.0,
                0.0,
                0.031_25,
                Exact,
            ),
            (&depression, 9, 5.0, 5.0, 0.039_062_5, Exact),
            (&N10, 10, 34.0, 21.0, 0.556_640_625, Exact),
            (&N12, 12, 14.0, 14.0, 0.052_246_093_75, Exact),
            (&N30, 30, 225.0, 225.0, 0.887_194_808_572_530_7, Exact),
            // 50 differences: the last exact size.
            (&N50, 50, 933.0, 342.0, 0.003_786_446_972_465_995_5, Exact),
            (&N60, 60, 385.0, 385.0, 9.553_939_154_485_742e-5, Asymptotic),
            // Ties or zeros among at most 13: every sign pattern enumerated.
            (&TIES10, 10, 48.5, 6.5, 0.031_25, Permutation),
            (&ZERO9, 8, 32.0, 4.0, 0.054_687_5, Permutation),
            (&TIES_ZEROS13, 11, 62.5, 3.5, 0.005_859_375, Permutation),
            // Ties or zeros among more than 13: normal, tie-corrected.
            (
                &TIES14,
                14,
                97.0,
                8.0,
                0.005_180_027_617_368_357,
                Asymptotic,
            ),
            (
                &ZEROS20,
                18,
                150.0,
                21.0,
                0.004_969_596_485_643_009,
                Asymptotic,
            ),
            // 49 non-zero differences, but 52 in all: scipy goes asymptotic.
            (
                &n49_zeros3,
                49,
                903.0,
                322.0,
                0.003_856_230_116_011_050_6,
                Asymptotic,
            ),
            (
                &n47_zeros3,
                47,
                816.0,
                312.0,
                0.007_659_910_419_306_854,
                Asymptotic,
            ),
            (
                &N60_TIES,
                60,
                382.5,
                382.5,
                8.779_995_275_471_134e-5,
                Asymptotic,
            ),
        ];
        for (d, n, r_plus, statistic, p, method) in cases {
            let got = wilcoxon_signed_rank(d).unwrap();
            let len = d.len();
            assert_eq!((got.n, got.method), (n, method), "{len} differences");
            assert!(close(got.r_plus, r_plus), "r+ {} != {r_plus}", got.r_plus);
            assert!(
                close(got.statistic, statistic),
                "{got:?}, scipy {statistic}"
            );
            assert!(close(got.p_value, p), "{len}: p {} != {p}", got.p_value);
        }
        // R 4.2.2's wilcox.test(d, exact = TRUE) agrees where both are exact:
        // V = 5, p = 0.0390625 for the depression data (R's V is r₊).
    }

    #[test]
    #[allow(clippy::float_cmp)] // exact values, on purpose
    fn degenerate_inputs_give_no_difference_or_none() {
        // All zeros: scipy gives p = 1 for 5 values (a permutation test) and
        // NaN for 20 (asymptotic with σ = 0); here "no difference" both ways.
        for len in [1, 5, 20, 60] {
            let got = wilcoxon_signed_rank(&vec![0.0; len]).unwrap();
            assert_eq!((got.n, got.r_plus, got.statistic), (0, 0.0, 0.0));
            assert_eq!(got.p_value, 1.0, "{len} zeros");
        }
        assert_eq!(wilcoxon_signed_rank(&[-0.0, 0.0]).unwrap().n, 0);
        // All magnitudes tied.
        let tied = wilcoxon_signed_rank(&[0.5; 20]).unwrap();
        assert!(tied.p_value > 0.0 && tied.p_value < 1e-4, "{tied:?}");
        assert!(wilcoxon_signed_rank(&[]).is_none());
        assert!(wilcoxon_signed_rank(&[0.1, f64::NAN]).is_none());
        assert!(wilcoxon_signed_rank(&[0.1, f64::INFINITY]).is_none());
        // Extreme magnitudes are only ranked.
        let huge = wilcoxon_signed_rank(&[f64::MAX, -f64::MAX / 2.0, 1e-300, -5e-324]).unwrap();
        assert!(huge.p_value.is_finite() && huge.r_plus == 6.0, "{huge:?}");
        let hl = hodges_lehmann_interval(&[f64::MAX, f64::MAX, -f64::MAX], 0.95).unwrap();
        assert!([hl.estimate, hl.low, hl.high].iter().all(|x| x.is_finite()));
    }

    // R 4.2.2 (Debian's r-base-core), each line printed by
    //   r <- wilcox.test(d, conf.int = TRUE, exact = TRUE, conf.level = conf)
    //   qu <- qsignrank((1 - conf) / 2, n); if (qu == 0) qu <- 1
    //   sprintf("%.17g", c(r$estimate, r$conf.int, qu,
    //                      1 - 2 * psignrank(qu - 1, n)))
    // (the last is R's own achieved.alpha, turned into a coverage). R is
    // exact here: no ties, no zeros, and exact = TRUE for n ≥ 50.
    #[test]
    #[allow(clippy::too_many_lines)] // a table of reference values
    fn hodges_lehmann_matches_r() {
        // (d, confidence, estimate, low, high, k, achieved)
        type Case<'a> = (&'a [f64], f64, f64, f64, f64, usize, f64);
        let depression = depression();
        let cases: [Case; 10] = [
            // Hollander & Wolfe's own example: θ̂ = −0.46, (−0.786, −0.010).
            (
                &depression,
                0.95,
                -0.460_000_000_000_000_1,
                -0.786,
                -0.010_000_000_000_000_009,
                6,
                0.960_937_5,
            ),
            (&N10, 0.95, 0.005_24, -0.009_625, 0.011_91, 9, 0.951_171_875),
            (
                &N12,
                0.95,
                -0.011_357_5,
                -0.023_155,
                0.000_385_000_000_000_000_03,
                14,
                0.957_519_531_25,
            ),
            (
                &N30,
                0.95,
                -0.000_544_999_999_999_999_9,
                -0.006_71,
                0.006_354_999_999_999_999_5,
                138,
                0.950_289_878_994_226_5,
            ),
            (
                &N30,
                0.90,
                -0.000_544_999_999_999_999_9,
                -0.006_005,
                0.005_075,
                152,
                0.903_898_427_262_902_3,
            ),
            (
                &N30,
                0.99,
                -0.000_544_999_999_999_999_9,
                -0.009_225,
                0.008_664_999_999_999_999,
                110,
                0.990_068_489_685_654_6,
            ),
            (
                &N50,
                0.95,
                0.007_859_999_999_999_999,
                0.002_529_999_999_999_999_3,
                0.014_029_999_999_999_999,
                435,
                0.950_553_593_199_398_3,
            ),
            (
                &N60,
                0.95,
                -0.008_42,
                -0.012_38,
                -0.004_515,
                649,
                0.950_718_494_015_638_7,
            ),
            (
                &N60,
                0.90,
                -0.008_42,
                -0.011_845,
                -0.005_085,
                691,
                0.901_371_150_323_398_2,
            ),
            // Five differences cannot reach 95%: R widens to the extremes,
            // warns, and says 1 − 2/2⁵.
            (
                &[0.012, -0.004, 0.031, 0.022, 0.015],
                0.95,
                0.015,
                -0.004,
                0.031,
                1,
                0.9375,
            ),
        ];
        for (d, confidence, estimate, low, high, k, achieved) in cases {
            let got = hodges_lehmann_interval(d, confidence).unwrap();
            let n = d.len();
            assert_eq!(got.method, IntervalMethod::Exact, "{n} at {confidence}");
            assert_eq!(got.k, k, "{n} at {confidence}: {got:?}");
            assert!(close(got.estimate, estimate), "{n}: {got:?}");
            assert!(close(got.low, low), "{n} at {confidence}: {got:?}");
            assert!(close(got.high, high), "{n} at {confidence}: {got:?}");
            assert!(
                close(got.achieved, achieved),
                "{n} at {confidence}: {got:?}"
            );
            assert_eq!(got.attained, n > 5, "{n} at {confidence}");
            assert!(got.achieved + 1e-12 >= confidence || !got.attained);
        }
    }

    /// d = 1..6 by hand: the 21 Walsh averages are 1, 1.5, 2, 2, 2.5, 2.5, 3,
    /// 3, 3, 3.5, 3.5, 3.5, 4, 4, 4, 4.5, 4.5, 5, 5, 5.5, 6 (median 3.5). The
    /// null counts of T₊ = 0, 1, 2, 3 are 1, 1, 1, 2 of 64: at 95% only k = 1
    /// keeps P(T₊ ≤ k − 1) = 1/64 ≤ 0.025 (coverage 62/64); at 90%, k = 3
    /// keeps 3/64 ≤ 0.05 (coverage 58/64), giving [2, 5]. R agrees.
    #[test]
    #[allow(clippy::float_cmp)] // Walsh averages of small integers are exact
    fn hodges_lehmann_by_hand() {
        let d = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
        let at95 = hodges_lehmann_interval(&d, 0.95).unwrap();
        assert_eq!(
            (at95.estimate, at95.low, at95.high, at95.k),
            (3.5, 1.0, 6.0, 1)
        );
        assert!(close(at95.achieved, 62.0 / 64.0) && at95.attained);
        let at90 = hodges_lehmann_interval(&d, 0.90).unwrap();
        assert_eq!((at90.low, at90.high, at90.k), (2.0, 5.0, 3));
        assert!(close(at90.achieved, 58.0 / 64.0) && at90.attained);
        // The order of the differences does not matter.
        let shuffled = hodges_lehmann_interval(&[4.0, 1.0, 6.0, 3.0, 5.0, 2.0], 0.90).unwrap();
        assert_eq!(shuffled, at90);
        // 1 − 2/2⁵ < 95%: the widest interval, not attained, said so.
        let five = hodges_lehmann_interval(&d[..5], 0.95).unwrap();
        assert_eq!(
            (five.low, five.high, five.k, five.attained),
            (1.0, 5.0, 1, false)
        );
        assert!(close(five.achieved, 0.9375));
        // One difference: a point, with no coverage.
        let one = hodges_lehmann_interval(&[0.2], 0.95).unwrap();
        assert_eq!(
            (one.estimate, one.low, one.high, one.achieved),
            (0.2, 0.2, 0.2, 0.0)
        );
        assert!(!one.attained);
        // Confidence 1 is never attained; 0 gives the median itself.
        assert!(!hodges_lehmann_interval(&d, 1.0).unwrap().attained);
        let none = hodges_lehmann_interval(&d, 0.0).unwrap();
        assert_eq!((none.low, none.high, none.k), (3.5, 3.5, 11));
        assert!(hodges_lehmann_interval(&[], 0.95).is_none());
        assert!(hodges_lehmann_interval(&d, f64::NAN).is_none());
        assert!(hodges_lehmann_interval(&[1.0, f64::NAN], 0.95).is_none());
    }

    // Ties: R switches to an asymptotic interval found by root search
    // (uniroot, tol 1e-4), so these come from an independent NumPy/SciPy
    // transcription of the rule in `hodges_lehmann_interval`'s doc:
    //   w = sorted((d[i] + d[j]) / 2 for i <= j); M = len(w)
    //   _, t = np.unique(d, return_counts=True)
    //   s = sqrt(n(n+1)(2n+1)/24 - sum(t**3 - t)/48); z = norm.isf(0.025)
    //   k = floor(M/2 + 0.5 - z*s); achieved = 1 - 2*norm.cdf((k-0.5-M/2)/s)
    // R 4.2.2's asymptotic intervals, for comparison: TIES10 (0.0000213,
    // 0.0350), ZEROS20 (0.0105, 0.0445), N60 rounded (−0.01244, −0.00448).
    #[test]
    #[allow(clippy::float_cmp)] // exact values, on purpose
    fn hodges_lehmann_with_ties() {
        // (d, k, estimate, low, high, achieved)
        type Case<'a> = (&'a [f64], usize, f64, f64, f64, f64);
        let cases: [Case; 3] = [
            (&TIES10, 8, 0.02, 0.0, 0.035, 0.959_168_794_322_962_4),
            (
                &ZEROS20,
                53,
                0.023_75,
                0.007_999_999_999_999_998,
                0.039_5,
                0.950_020_092_709_498_6,
            ),
            (
                &N60_TIES,
                649,
                -0.008_5,
                -0.012_499_999_999_999_999,
                -0.004_500_000_000_000_000_5,
                0.950_256_099_396_419_1,
            ),
        ];
        for (d, k, estimate, low, high, achieved) in cases {
            let got = hodges_lehmann_interval(d, 0.95).unwrap();
            assert_eq!(
                (got.method, got.k),
                (IntervalMethod::Asymptotic, k),
                "{got:?}"
            );
            assert!(close(got.estimate, estimate), "{got:?}");
            assert!(
                close(got.low, low) || (low == 0.0 && got.low == 0.0),
                "{got:?}"
            );
            assert!(close(got.high, high), "{got:?}");
            assert!(close(got.achieved, achieved) && got.attained, "{got:?}");
        }
        // All equal: a point interval, no NaN.
        let same = hodges_lehmann_interval(&[0.03; 40], 0.95).unwrap();
        assert_eq!((same.estimate, same.low, same.high), (0.03, 0.03, 0.03));
        assert!(same.achieved.is_finite());
    }

    /// Above 200 differences the rank comes from the normal approximation.
    /// Where both can be computed (n = 60 to 200), the exact coverage of the
    /// rank it picks is within 7·10⁻⁴ of the coverage it states (3·10⁻⁴ from
    /// n = 150 on) and at most 2·10⁻⁴ below the level asked, though the rank
    /// itself can be several off at 99% (565 against 568 at n = 60), where the
    /// normal tail is heavier than T₊'s. Figures from SciPy's exact
    /// distribution, `scipy.stats._hypotests._get_wilcoxon_distr(n)`.
    #[test]
    fn asymptotic_rank_is_close_to_exact() {
        for n in (60..=200).step_by(7) {
            for confidence in [0.90, 0.95, 0.99] {
                let tail = (1.0 - confidence) / 2.0;
                let (exact, covered) = exact_rank(n, tail);
                assert!(covered + 1e-12 >= confidence, "n {n}");
                let (normal, stated) = asymptotic_rank(n, 0.0, tail);
                let ranks: Vec<usize> = (1..=n).collect();
                let below: f64 = sum_distribution(&ranks, normal).iter().sum();
                let actual = 1.0 - 2.0 * below;
                let tolerance = if n < 150 { 1e-3 } else { 4e-4 };
                assert!(
                    (actual - stated).abs() < tolerance && actual > confidence - 2e-4,
                    "n {n} at {confidence}: exact rank {exact} ({covered}), \
                     normal {normal} ({actual}, stated {stated})"
                );
            }
        }
        // And the first asymptotic sizes stay sensible.
        let d: Vec<f64> = (1..=250).map(|i| f64::from(i) * 0.001 - 0.1).collect();
        let big = hodges_lehmann_interval(&d, 0.95).unwrap();
        assert_eq!(big.method, IntervalMethod::Asymptotic);
        assert!(big.low < big.estimate && big.estimate < big.high && big.attained);
        assert!(big.achieved >= 0.95 && big.achieved < 0.951, "{big:?}");
    }

    /// The exact interval excludes 0 exactly when the exact test rejects at
    /// its level (no ties, no zeros, n ≤ 50): both read the same tail.
    #[test]
    fn interval_is_dual_to_the_exact_test() {
        let mut rng = Rng::new(2024);
        let mut rejections = 0;
        for trial in 0..400 {
            let n = 6 + trial % 25;
            let shift = 0.01 * f64::from(trial % 5);
            let d: Vec<f64> = (0..n).map(|_| shift + 0.02 * rng.normal()).collect();
            let test = wilcoxon_signed_rank(&d).unwrap();
            let hl = hodges_lehmann_interval(&d, 0.95).unwrap();
            assert_eq!(test.method, WilcoxonMethod::Exact);
            let excludes = hl.low > 0.0 || hl.high < 0.0;
            assert_eq!(excludes, test.p_value <= 0.05, "{d:?}: {test:?} {hl:?}");
            rejections += usize::from(excludes);
        }
        assert!((80..360).contains(&rejections), "{rejections} of 400");
    }

    /// Under the null (symmetric noise around 0) the exact test rejects at
    /// most 5% of the time (with 10 differences the largest exact level below
    /// 5% is 2·P(T₊ ≤ 8) = 0.0488), and the interval covers 0 at least 95%.
    #[test]
    fn null_simulation_keeps_its_levels() {
        let mut rng = Rng::new(5);
        let trials = 2000;
        let rejected = (0..trials)
            .filter(|_| {
                let d: Vec<f64> = (0..10).map(|_| 0.03 * rng.normal()).collect();
                wilcoxon_signed_rank(&d).unwrap().p_value < 0.05
            })
            .count();
        let rate = rejected as f64 / f64::from(trials);
        assert!((0.02..=0.065).contains(&rate), "rejection rate {rate}");
        let covered = (0..trials)
            .filter(|_| {
                let d: Vec<f64> = (0..15).map(|_| 0.03 * rng.normal()).collect();
                let hl = hodges_lehmann_interval(&d, 0.95).unwrap();
                hl.low <= 0.0 && 0.0 <= hl.high
            })
            .count();
        // Coverage 0.9524 for n = 15 (k = 26): about 1905 of 2000, sd 10.
        assert!(covered as f64 >= 0.93 * f64::from(trials), "{covered}");
        // A real shift of one noise sd at n = 15 is found most of the time.
        let found = (0..200)
            .filter(|_| {
                let d: Vec<f64> = (0..15).map(|_| 0.03 + 0.03 * rng.normal()).collect();
                wilcoxon_signed_rank(&d).unwrap().p_value < 0.05
            })
            .count();
        assert!(found > 140, "power {found} of 200");
    }
}
