//! Paired statistics for interleaved rounds: the Wilcoxon signed-rank test
//! on per-round differences (here, log ratios of a variant to the baseline
//! measured in the same round) and the Hodges–Lehmann estimate of their
//! median with its distribution-free confidence interval.
//!
//! The test matches `scipy.stats.wilcoxon(d, zero_method='wilcox',
//! correction=False, alternative='two-sided', method='auto')` of SciPy 1.17:
//! zeros are dropped; with at most 50 differences left the p-value is exact,
//! from the distribution of the signed rank sum over all 2^n sign patterns
//! (with tied differences keeping their average ranks); above 50, the normal
//! approximation with the tie correction. The interval is the one
//! R's `wilcox.test(d, conf.int = TRUE)` gives (Hollander & Wolfe,
//! *Nonparametric Statistical Methods*, 3rd ed., §3.2): the k-th smallest and
//! k-th largest of the n(n+1)/2 Walsh averages (dᵢ + dⱼ)/2, i ≤ j, with k
//! from the same null distribution, so the interval excludes 0 exactly when
//! the test rejects.

/// Above this many non-zero differences the normal approximation is used.
const EXACT_UP_TO: usize = 50;

/// A two-sided Wilcoxon signed-rank test.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SignedRank {
    /// Non-zero differences used (a count).
    pub n: usize,
    /// Sum of the ranks of the positive differences.
    pub r_plus: f64,
    /// SciPy's statistic: min(r₊, r₋).
    pub statistic: f64,
    /// Two-sided p-value (a probability).
    pub p_value: f64,
    /// Whether `p_value` is exact (n ≤ 50) or from the normal approximation.
    pub exact: bool,
}

/// The Hodges–Lehmann estimate of a median difference, with its interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HodgesLehmann {
    /// Median of the Walsh averages, in the differences' unit.
    pub estimate: f64,
    /// Lower bound of the interval, in the differences' unit.
    pub low: f64,
    /// Upper bound of the interval.
    pub high: f64,
    /// The interval's coverage under the null distribution, a probability:
    /// at least the confidence asked for, except when too few differences
    /// allow none (n < 6 at 95%), where it is the most they allow.
    pub achieved: f64,
}

/// The two-sided signed-rank test of `d`; `None` for no non-zero difference.
pub fn signed_rank(d: &[f64]) -> Option<SignedRank> {
    let nonzero: Vec<f64> = d.iter().copied().filter(|x| *x != 0.0).collect();
    let n = nonzero.len();
    if n == 0 {
        return None;
    }
    let (ranks, tie_term) = abs_ranks(&nonzero);
    let r_plus: f64 = nonzero
        .iter()
        .zip(&ranks)
        .filter(|(x, _)| **x > 0.0)
        .map(|(_, r)| r)
        .sum();
    let total = (n * (n + 1)) as f64 / 2.0;
    let statistic = r_plus.min(total - r_plus);
    let (p_value, exact) = if n <= EXACT_UP_TO {
        let null = Null::of(&ranks);
        let low = null.cdf(r_plus);
        let high = null.sf_inclusive(r_plus);
        ((2.0 * low.min(high)).min(1.0), true)
    } else {
        let mean = total / 2.0;
        let var = (n * (n + 1) * (2 * n + 1)) as f64 / 24.0 - tie_term / 48.0;
        let p = if var > 0.0 {
            2.0 * normal_sf(((r_plus - mean) / var.sqrt()).abs())
        } else {
            1.0
        };
        (p.min(1.0), false)
    };
    Some(SignedRank {
        n,
        r_plus,
        statistic,
        p_value,
        exact,
    })
}

/// The Hodges–Lehmann estimate of the median of `d` and its interval at
/// `confidence` (e.g. 0.95); `None` when `d` is empty.
#[allow(clippy::many_single_char_names)] // the textbook's n, m, k, d
pub fn hodges_lehmann(d: &[f64], confidence: f64) -> Option<HodgesLehmann> {
    let n = d.len();
    if n == 0 {
        return None;
    }
    let mut walsh = Vec::with_capacity(n * (n + 1) / 2);
    for i in 0..n {
        for j in i..n {
            walsh.push(f64::midpoint(d[i], d[j]));
        }
    }
    walsh.sort_by(f64::total_cmp);
    let m = walsh.len();
    let estimate = if m % 2 == 1 {
        walsh[m / 2]
    } else {
        f64::midpoint(walsh[m / 2 - 1], walsh[m / 2])
    };
    let alpha = (1.0 - confidence).clamp(0.0, 1.0);
    // k: the largest count whose lower tail stays within alpha/2. Ranks
    // 1..n without ties give the null distribution (R: qsignrank).
    let ranks: Vec<f64> = (1..=n).map(|r| r as f64).collect();
    let (k, achieved) = if n <= EXACT_UP_TO {
        let null = Null::of(&ranks);
        // P(T ≤ k − 1) ≤ alpha/2 for the largest such k ≥ 1.
        let mut k = 0usize;
        while k < m / 2 && null.cdf(k as f64) <= alpha / 2.0 {
            k += 1;
        }
        let k = k.max(1);
        (k, 1.0 - 2.0 * null.cdf(k as f64 - 1.0))
    } else {
        let total = m as f64;
        let sd = ((n * (n + 1) * (2 * n + 1)) as f64 / 24.0).sqrt();
        let z = normal_quantile(1.0 - alpha / 2.0);
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // ≥ 1, < m
        let k = ((total / 2.0 - z * sd).floor().max(1.0) as usize).min(m / 2);
        (k, confidence)
    };
    Some(HodgesLehmann {
        estimate,
        low: walsh[k - 1],
        high: walsh[m - k],
        achieved: achieved.clamp(0.0, 1.0),
    })
}

/// Ranks of |x| (average ranks for ties), and Σ(t³ − t) over tie groups.
#[allow(clippy::float_cmp)] // ties are exactly equal values
fn abs_ranks(x: &[f64]) -> (Vec<f64>, f64) {
    let mut order: Vec<usize> = (0..x.len()).collect();
    order.sort_by(|&a, &b| x[a].abs().total_cmp(&x[b].abs()));
    let mut ranks = vec![0.0; x.len()];
    let mut tie_term = 0.0;
    let mut i = 0;
    while i < order.len() {
        let mut j = i;
        while j + 1 < order.len() && x[order[j + 1]].abs() == x[order[i]].abs() {
            j += 1;
        }
        let rank = (i + j + 2) as f64 / 2.0;
        for &o in &order[i..=j] {
            ranks[o] = rank;
        }
        let t = (j - i + 1) as f64;
        tie_term += t * t * t - t;
        i = j + 1;
    }
    (ranks, tie_term)
}

/// The null distribution of the signed rank sum for given ranks (each
/// added with probability ½), over doubled ranks so average ranks of ties
/// stay integers.
struct Null {
    /// `probability[s]` = P(2·T₊ = s).
    probability: Vec<f64>,
}

impl Null {
    fn of(ranks: &[f64]) -> Self {
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // small positive halves
        let doubled: Vec<usize> = ranks.iter().map(|r| (r * 2.0).round() as usize).collect();
        let max: usize = doubled.iter().sum();
        let mut probability = vec![0.0; max + 1];
        probability[0] = 1.0;
        let mut reach = 0;
        for &r in &doubled {
            reach += r;
            for s in (r..=reach).rev() {
                probability[s] = 0.5 * (probability[s] + probability[s - r]);
            }
            for p in probability.iter_mut().take(r.min(reach + 1)) {
                *p *= 0.5;
            }
        }
        Self { probability }
    }

    /// P(T₊ ≤ t).
    fn cdf(&self, t: f64) -> f64 {
        if t < 0.0 {
            return 0.0;
        }
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let upto = ((t * 2.0).round() as usize).min(self.probability.len() - 1);
        self.probability[..=upto].iter().sum::<f64>().min(1.0)
    }

    /// P(T₊ ≥ t).
    fn sf_inclusive(&self, t: f64) -> f64 {
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let from = ((t * 2.0).round().max(0.0) as usize).min(self.probability.len());
        self.probability[from..].iter().sum::<f64>().min(1.0)
    }
}

/// Upper tail of the standard normal, P(Z > z), via erfc (W. J. Cody's
/// rational approximation as in Numerical Recipes' `erfcc`, |error| < 1.2e-7).
fn normal_sf(z: f64) -> f64 {
    0.5 * erfc(z / std::f64::consts::SQRT_2)
}

fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let r = t
        * (-z * z - 1.265_512_23
            + t * (1.000_023_68
                + t * (0.374_091_96
                    + t * (0.096_784_18
                        + t * (-0.186_288_06
                            + t * (0.278_868_07
                                + t * (-1.135_203_98
                                    + t * (1.488_515_87
                                        + t * (-0.822_152_23 + t * 0.170_872_77)))))))))
            .exp();
    if x >= 0.0 {
        r
    } else {
        2.0 - r
    }
}

/// The standard normal quantile by bisection on [`normal_sf`] (ample for
/// the interval's rank, which is rounded to an integer).
fn normal_quantile(p: f64) -> f64 {
    let (mut low, mut high) = (-10.0, 10.0);
    for _ in 0..100 {
        let mid = f64::midpoint(low, high);
        if 1.0 - normal_sf(mid) < p {
            low = mid;
        } else {
            high = mid;
        }
    }
    f64::midpoint(low, high)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    /// `scipy.stats.wilcoxon(d, zero_method='wilcox', correction=False,
    /// alternative='two-sided', method='auto')`, SciPy 1.17.1: (statistic,
    /// p-value) printed by the script in this test's comments.
    #[test]
    fn matches_scipy() {
        let n30 = [
            0.01004, 0.01896, 0.00178, -0.01672, -0.00364, -0.01975, 0.0118, 0.05021, -0.00477,
            -0.00861, 0.0247, 0.02071, 0.01316, -0.01791, 0.00912, 0.03086, -0.03033, -0.00373,
            -0.04704, -0.02869, -0.04525, 0.00295, -0.02802, 0.01814, 0.0147, 0.00439, -0.0655,
            -0.00616, 0.00854, 0.0134,
        ];
        let n60 = [
            -0.0509, -0.01933, -0.03436, -0.02927, 0.02683, -0.02923, -0.00598, 0.02153, -0.02251,
            -0.00835, -0.00169, -0.00309, -0.04175, -0.00272, 0.03576, -0.05141, 0.02078, -0.00142,
            -0.02424, 0.05501, 0.01787, -0.04098, -0.00276, 0.0123, -0.01066, 0.01549, -0.007,
            0.01502, 0.03816, -0.02527, 0.00109, -0.0189, -0.00118, -0.04062, -0.02238, -0.01089,
            0.02196, 0.02936, -0.04471, -0.02884, 0.01441, -0.06477, -0.0189, -0.00792, 0.03271,
            0.01568, -0.01482, -0.01606, -0.01251, 0.04071, -0.01784, -0.01411, 0.00558, -0.00862,
            -0.01092, -0.03842, -0.00535, -0.01831, 0.02998, 0.01459,
        ];
        let cases: [(&[f64], f64, f64, bool); 7] = [
            (
                &[0.012, -0.004, 0.031, 0.022, 0.015, -0.009, 0.027, 0.018],
                3.0,
                0.039_062_5,
                true,
            ),
            (
                &[
                    -0.05, -0.02, -0.031, 0.004, -0.044, -0.012, -0.027, -0.038, -0.008, -0.019,
                ],
                1.0,
                0.003_906_25,
                true,
            ),
            (&[0.1, 0.2, 0.3, 0.4, 0.5, 0.6], 0.0, 0.031_25, true),
            // Ties: SciPy's exact distribution keeps the average ranks.
            (
                &[0.01, 0.01, -0.02, 0.03, 0.03, 0.03, -0.01, 0.02, 0.05, 0.04],
                6.5,
                0.031_25,
                true,
            ),
            // A zero is dropped (zero_method='wilcox').
            (
                &[
                    0.0, 0.011, -0.023, 0.031, 0.042, 0.057, 0.061, -0.007, 0.083,
                ],
                4.0,
                0.054_687_5,
                true,
            ),
            (&n30, 226.0, 0.903_226_472_437_381_7, true),
            (&n60, 670.0, 0.071_294_217_386_025_08, false),
        ];
        for (d, statistic, p, exact) in cases {
            let t = signed_rank(d).unwrap();
            assert!((t.statistic - statistic).abs() < 1e-9, "{d:?}: {t:?}");
            assert_eq!(t.exact, exact, "{d:?}");
            // The normal tail's approximation is good to ~1e-7.
            assert!((t.p_value - p).abs() < 1e-6, "{d:?}: {t:?}, scipy {p}");
        }
        assert!(signed_rank(&[0.0, 0.0]).is_none());
    }

    /// R 4.x `wilcox.test(c(0.1,0.2,...,0.8), conf.int=TRUE)`: n = 8, k = 4
    /// (qsignrank(0.025, 8) = 4), so the 95% interval runs from the 4th
    /// smallest to the 4th largest of the 36 Walsh averages, coverage
    /// 1 − 2·P(T ≤ 3) = 1 − 2·5/256 = 0.9609375; estimate 0.45.
    #[test]
    fn hodges_lehmann_interval_as_r_computes_it() {
        let d: Vec<f64> = (1..=8).map(|i| f64::from(i) / 10.0).collect();
        let hl = hodges_lehmann(&d, 0.95).unwrap();
        assert!((hl.estimate - 0.45).abs() < 1e-12, "{hl:?}");
        // Walsh averages sorted: 0.1, 0.15, 0.2, 0.2, … ; 4th = 0.2; 4th
        // largest = 0.7.
        assert!((hl.low - 0.2).abs() < 1e-12, "{hl:?}");
        assert!((hl.high - 0.7).abs() < 1e-12, "{hl:?}");
        assert!((hl.achieved - 0.960_937_5).abs() < 1e-12, "{hl:?}");
        // Five differences cannot reach 95%: the widest interval, and its
        // coverage said (1 − 2/32).
        let five = hodges_lehmann(&d[..5], 0.95).unwrap();
        assert!((five.achieved - 0.9375).abs() < 1e-12, "{five:?}");
        assert!((five.low - 0.1).abs() < 1e-12 && (five.high - 0.5).abs() < 1e-12);
    }

    /// Under the null the exact test rejects at most 5% of the time, and the
    /// interval covers the true median (0) at least 95% of the time.
    #[test]
    fn null_simulation_keeps_its_levels() {
        let mut rng = Rng::new(11);
        let trials = 2000;
        let (mut rejected, mut covered) = (0, 0);
        for _ in 0..trials {
            let d: Vec<f64> = (0..12).map(|_| 0.05 * rng.normal()).collect();
            if signed_rank(&d).unwrap().p_value < 0.05 {
                rejected += 1;
            }
            let hl = hodges_lehmann(&d, 0.95).unwrap();
            if hl.low <= 0.0 && 0.0 <= hl.high {
                covered += 1;
            }
        }
        let rate = f64::from(rejected) / f64::from(trials);
        assert!((0.02..=0.065).contains(&rate), "rejection rate {rate}");
        assert!(covered >= 1880, "coverage {covered}/{trials}");
    }
}
