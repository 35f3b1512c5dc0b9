//! The share of a reference variant's gain that another variant reaches,
//! `(mean_B − mean_V) / (mean_B − mean_R)` against the baseline B, with
//! Fieller's confidence interval for a ratio (E. C. Fieller, "Some problems
//! in interval estimation", J. R. Stat. Soc. B 16(2), 1954, 175–185).
//!
//! The numerator `a = x̄_B − x̄_V` and the denominator `b = x̄_B − x̄_R` share
//! the baseline's mean, so they are correlated: `var(a) = s_B²/n_B +
//! s_V²/n_V`, `var(b) = s_B²/n_B + s_R²/n_R`, `cov(a, b) = s_B²/n_B` (the three samples
//! independent, each variance its own: no pooling). Fieller's set is every
//! θ whose contrast a − θb is not significantly different from zero:
//! (a − θb)² ≤ t²·(var(a) − 2θ·cov(a, b) + θ²·var(b)), a quadratic in θ. It
//! is a finite interval exactly when b is significantly different from zero
//! (b² > t²·var(b)); otherwise it is the whole line or two rays, and no
//! finite interval can be given: the reference's own gain is not
//! established. This is the three-arm trial's "fraction of the reference's
//! effect retained" (placebo = baseline, reference = R, experimental = V;
//! Pigeot et al., Statistics in Medicine 22, 2003, 883–899, with pooled
//! variances), here with unequal variances and Satterthwaite's degrees of
//! freedom for the contrast at the estimate, as in Hasler, Vonk & Hothorn,
//! Statistics in Medicine 27, 2008, 490–503.
//!
//! Interleaved rounds give a second form ([`share_of_gain_paired`]): each
//! round's two differences from the baseline are one observation, their
//! covariance estimated from the rounds, so that drift a round shares
//! cancels; t then has n − 1 degrees of freedom (Fieller's own setting).

use super::student_t;

/// One variant's sample of a metric, as the interval needs it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Group {
    /// Mean, in the metric's unit.
    pub mean: f64,
    /// Unbiased sample variance (divisor n − 1), in the unit squared.
    pub variance: f64,
    /// Number of samples, at least 2.
    pub n: usize,
}

impl Group {
    /// The group of `samples`; `None` with fewer than 2 (no variance) or a
    /// non-finite value.
    pub fn of(samples: &[f64]) -> Option<Self> {
        let n = samples.len();
        if n < 2 || samples.iter().any(|x| !x.is_finite()) {
            return None;
        }
        let mean = samples.iter().sum::<f64>() / n as f64;
        let variance = samples.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
        Some(Self { mean, variance, n })
    }

    /// The variance of the mean, s²/n.
    fn of_mean(&self) -> f64 {
        self.variance / self.n as f64
    }
}

/// Fieller's confidence set for a ratio θ = a / b.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum FiellerSet {
    /// Every θ in [low, high]: b is significantly different from zero.
    Bounded { low: f64, high: f64 },
    /// b is not significantly different from zero at this level: the set is
    /// the whole line, or all but an interval, and has no finite bounds.
    Unbounded,
}

/// Fieller's set for θ = a / b from estimates `a` and `b` with variances
/// `var_a`, `var_b` and covariance `cov`, at critical value `t` (a t or
/// normal quantile): the θ with `(a − θb)² ≤ t²·(var_a − 2θ·cov + θ²·var_b)`.
pub fn fieller(a: f64, b: f64, var_a: f64, var_b: f64, cov: f64, t: f64) -> FiellerSet {
    let t2 = t * t;
    // q(θ) = A θ² − 2B θ + C ≤ 0.
    let quadratic = b * b - t2 * var_b;
    if quadratic <= 0.0 || !quadratic.is_finite() {
        return FiellerSet::Unbounded;
    }
    let linear = a * b - t2 * cov;
    let constant = a * a - t2 * var_a;
    // q(a/b) = −t²·var(a − (a/b)·b) ≤ 0 and A > 0, so the roots are real;
    // clamp the rounding of a zero discriminant.
    let root = (linear * linear - quadratic * constant).max(0.0).sqrt();
    let (low, high) = ((linear - root) / quadratic, (linear + root) / quadratic);
    if low.is_finite() && high.is_finite() {
        FiellerSet::Bounded { low, high }
    } else {
        // Only where the squares overflowed: no finite bounds to give.
        FiellerSet::Unbounded
    }
}

/// How much of the reference's gain over the baseline a variant reaches.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GainShare {
    /// `(mean_B − mean_V) / (mean_B − mean_R)`, unitless: 1 is all of the
    /// reference's gain, 0 none, below 0 worse than the baseline; `None`
    /// when the reference's mean equals the baseline's.
    pub estimate: Option<f64>,
    /// Fieller's interval at the confidence asked.
    pub interval: FiellerSet,
    /// Satterthwaite's degrees of freedom of the contrast a − θ̂b (the
    /// pooled `n_B + n_V + n_R − 3` where the contrast has no variance).
    pub df: f64,
}

/// The share of `reference`'s gain over `baseline` that `variant` reaches,
/// with Fieller's interval at `confidence` (e.g. 0.95). The direction of
/// "better" does not matter: for a metric where higher is better both
/// gains are negative and their ratio the same.
pub fn share_of_gain(
    baseline: &Group,
    variant: &Group,
    reference: &Group,
    confidence: f64,
) -> GainShare {
    let a = baseline.mean - variant.mean;
    let b = baseline.mean - reference.mean;
    let estimate = Some(a / b).filter(|x| x.is_finite());
    let (wb, wv, wr) = (baseline.of_mean(), variant.of_mean(), reference.of_mean());
    let df = satterthwaite(
        estimate.unwrap_or(0.0),
        [(wb, baseline.n), (wv, variant.n), (wr, reference.n)],
    );
    let t = student_t::upper_quantile((1.0 - confidence) / 2.0, df);
    GainShare {
        estimate,
        interval: fieller(a, b, wb + wv, wb + wr, wb, t),
        df,
    }
}

/// The share as [`share_of_gain`] gives it, for paired rounds: sample i of
/// each slice came from round i of an interleaved bench, so each round's
/// differences from the baseline, `B_i − V_i` and `B_i − R_i`, are one
/// observation of a pair whose covariance is estimated from the rounds
/// (drift shared by a round cancels), with n − 1 degrees of freedom:
/// Fieller's own case of bivariate normal pairs. `None` unless the slices
/// have one length of at least 2 and finite values.
pub fn share_of_gain_paired(
    baseline: &[f64],
    variant: &[f64],
    reference: &[f64],
    confidence: f64,
) -> Option<GainShare> {
    let n = baseline.len();
    let finite = |x: &[f64]| x.len() == n && x.iter().all(|v| v.is_finite());
    if n < 2 || !finite(baseline) || !finite(variant) || !finite(reference) {
        return None;
    }
    let gains =
        |other: &[f64]| -> Vec<f64> { baseline.iter().zip(other).map(|(b, o)| b - o).collect() };
    let (of_variant, of_reference) = (gains(variant), gains(reference));
    let mean = |x: &[f64]| x.iter().sum::<f64>() / n as f64;
    let (a, b) = (mean(&of_variant), mean(&of_reference));
    // Sample (co)variances over n − 1, then of the means: over n.
    let moment = |x: &[f64], mx: f64, y: &[f64], my: f64| {
        x.iter()
            .zip(y)
            .map(|(x, y)| (x - mx) * (y - my))
            .sum::<f64>()
            / ((n - 1) * n) as f64
    };
    let var_a = moment(&of_variant, a, &of_variant, a);
    let var_b = moment(&of_reference, b, &of_reference, b);
    let cov = moment(&of_variant, a, &of_reference, b);
    let df = (n - 1) as f64;
    let t = student_t::upper_quantile((1.0 - confidence) / 2.0, df);
    Some(GainShare {
        estimate: Some(a / b).filter(|x| x.is_finite()),
        interval: fieller(a, b, var_a, var_b, cov, t),
        df,
    })
}

/// Satterthwaite's degrees of freedom of `var(a − θb) = (1 − θ)²·w_B + w_V +
/// θ²·w_R`, each w a variance of a mean with its sample's n.
fn satterthwaite(theta: f64, [(wb, nb), (wv, nv), (wr, nr)]: [(f64, usize); 3]) -> f64 {
    let terms = [
        ((1.0 - theta).powi(2) * wb, nb),
        (wv, nv),
        (theta * theta * wr, nr),
    ];
    let total: f64 = terms.iter().map(|(w, _)| w).sum();
    let spread: f64 = terms.iter().map(|(w, n)| w * w / (n - 1) as f64).sum();
    let df = total * total / spread;
    if df.is_finite() && df > 0.0 {
        df
    } else {
        (nb + nv + nr - 3) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use afterburner_leaves::rng::Rng;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1e-12)
    }

    fn bounds(share: &GainShare) -> (f64, f64) {
        match share.interval {
            FiellerSet::Bounded { low, high } => (low, high),
            FiellerSet::Unbounded => panic!("unbounded: {share:?}"),
        }
    }

    // Reference values from NumPy 2.4.6 / SciPy 1.17.1, found another way
    // than the quadratic's roots: the bounds are where the studentized
    // contrast |a − θb| / sd(θ) crosses the t quantile, found by root search.
    //   def share(b, v, r, conf=0.95):
    //       b, v, r = map(np.asarray, (b, v, r))
    //       mb, mv, mr = b.mean(), v.mean(), r.mean()
    //       wb, wv, wr = (x.var(ddof=1) / len(x) for x in (b, v, r))
    //       a, d = mb - mv, mb - mr
    //       th = a / d
    //       terms = [((1 - th)**2 * wb, len(b)), (wv, len(v)), (th**2 * wr, len(r))]
    //       df = sum(w for w, _ in terms)**2 / sum(w**2 / (n - 1) for w, n in terms)
    //       t = scipy.stats.t.isf((1 - conf) / 2, df)
    //       T = lambda x: abs(a - x*d) / np.sqrt(wb*(1 - x)**2 + wv + x**2*wr) - t
    //       lo = scipy.optimize.brentq(T, th - 1e3, th, xtol=1e-15, rtol=1e-15)
    //       hi = scipy.optimize.brentq(T, th, th + 1e3, xtol=1e-15, rtol=1e-15)
    //       return th, df, lo, hi
    #[test]
    fn share_and_interval_match_scipy() {
        type Case<'a> = (&'a [f64], &'a [f64], &'a [f64], f64, [f64; 4]);
        let cases: [Case; 4] = [
            // Equal spreads, V halfway to R.
            (
                &[10.2, 9.8, 10.5, 10.1, 9.9, 10.3],
                &[9.1, 9.4, 8.8, 9.0, 9.3, 9.2],
                &[8.1, 8.4, 7.9, 8.3, 8.0, 8.2],
                0.95,
                [
                    0.504_201_680_672_269_1,
                    10.249_638_748_297_315,
                    0.376_925_295_164_405_9,
                    0.624_899_540_860_749_5,
                ],
            ),
            // The same at 90%.
            (
                &[10.2, 9.8, 10.5, 10.1, 9.9, 10.3],
                &[9.1, 9.4, 8.8, 9.0, 9.3, 9.2],
                &[8.1, 8.4, 7.9, 8.3, 8.0, 8.2],
                0.90,
                [
                    0.504_201_680_672_269_1,
                    10.249_638_748_297_315,
                    0.401_477_096_021_500_56,
                    0.602_597_804_121_072_8,
                ],
            ),
            // Unequal sizes and spreads; the interval reaches below 0.
            (
                &[1.00, 1.02, 0.99, 1.01, 0.98],
                &[0.97, 0.90, 1.05, 0.93, 0.99, 1.01, 0.95],
                &[0.80, 0.83, 0.79, 0.82],
                0.95,
                [
                    0.150_375_939_849_624_05,
                    7.210_760_754_927_548_5,
                    -0.104_952_723_706_784_8,
                    0.396_344_902_236_802_9,
                ],
            ),
            // V beyond R: a share above 1.
            (
                &[5.0, 5.2, 4.9, 5.1],
                &[3.9, 4.1, 4.0, 3.8, 4.2],
                &[4.5, 4.4, 4.6, 4.5, 4.3, 4.7],
                0.95,
                [
                    1.909_090_909_090_909_4,
                    10.675_491_534_812_02,
                    1.453_014_406_404_182_3,
                    2.737_823_790_113_872_2,
                ],
            ),
        ];
        for (b, v, r, confidence, [estimate, df, low, high]) in cases {
            let [b, v, r] = [b, v, r].map(|x| Group::of(x).unwrap());
            let got = share_of_gain(&b, &v, &r, confidence);
            let (got_low, got_high) = bounds(&got);
            assert!(close(got.estimate.unwrap(), estimate), "{got:?}");
            assert!(close(got.df, df), "{got:?} df {df}");
            assert!(close(got_low, low), "low {got_low} != {low}");
            assert!(close(got_high, high), "high {got_high} != {high}");
        }
    }

    // Paired rounds, from NumPy 2.4.6 / SciPy 1.17.1 by root search of each
    // round's contrast, studentized by its own sample sd (no covariance
    // algebra):
    //   def paired(b, v, r, conf=0.95):
    //       b, v, r = map(np.asarray, (b, v, r))
    //       da, db = b - v, b - r
    //       n = len(b)
    //       th = da.mean() / db.mean()
    //       t = scipy.stats.t.isf((1 - conf) / 2, n - 1)
    //       def T(x):
    //           c = da - x * db
    //           return abs(c.mean()) / (c.std(ddof=1) / np.sqrt(n)) - t
    //       lo = scipy.optimize.brentq(T, th - 1e3, th, xtol=1e-15, rtol=1e-15)
    //       hi = scipy.optimize.brentq(T, th, th + 1e3, xtol=1e-15, rtol=1e-15)
    //       return th, lo, hi
    // The second case is a real bench of the hotpath fixture at -O0, -O1
    // and -O2 on a busy 2-core machine (wall, ms, rounded to 0.1 ms): the
    // unpaired interval finds -O2's gain not significant, the paired one
    // bounds it.
    #[test]
    fn paired_share_and_interval_match_scipy() {
        type Case<'a> = (&'a [f64], &'a [f64], &'a [f64], f64, [f64; 3]);
        let rounds_b = [30.1, 26.7, 18.5, 14.4, 24.1, 23.5, 23.3, 21.2, 23.4, 20.9];
        let rounds_v = [9.2, 15.8, 12.2, 9.7, 16.4, 20.9, 14.6, 13.8, 9.6, 18.1];
        let rounds_r = [24.0, 15.5, 11.4, 14.2, 13.0, 15.4, 23.6, 30.9, 15.7, 14.0];
        let cases: [Case; 3] = [
            (
                &[10.2, 9.8, 10.5, 10.1, 9.9, 10.3],
                &[9.1, 8.9, 9.6, 9.0, 8.7, 9.4],
                &[8.1, 7.7, 8.3, 8.2, 7.8, 8.4],
                0.95,
                [
                    0.495_934_959_349_593_53,
                    0.421_444_404_262_908_47,
                    0.574_866_063_560_110_4,
                ],
            ),
            (
                &rounds_b,
                &rounds_v,
                &rounds_r,
                0.95,
                [
                    1.772_727_272_727_273_2,
                    0.753_050_877_394_402_9,
                    31.279_704_345_996_524,
                ],
            ),
            (
                &rounds_b,
                &rounds_v,
                &rounds_r,
                0.90,
                [
                    1.772_727_272_727_273_2,
                    0.882_826_352_226_489_8,
                    7.425_395_686_989_677,
                ],
            ),
        ];
        for (b, v, r, confidence, [estimate, low, high]) in cases {
            let got = share_of_gain_paired(b, v, r, confidence).unwrap();
            let (got_low, got_high) = bounds(&got);
            assert!(close(got.estimate.unwrap(), estimate), "{got:?}");
            assert!(close(got.df, (b.len() - 1) as f64), "{got:?}");
            assert!(close(got_low, low), "low {got_low} != {low}");
            assert!(close(got_high, high), "high {got_high} != {high}");
        }
        let groups = [&rounds_b, &rounds_v, &rounds_r].map(|x| Group::of(x).unwrap());
        let unpaired = share_of_gain(&groups[0], &groups[1], &groups[2], 0.95);
        assert_eq!(unpaired.interval, FiellerSet::Unbounded);
        assert!(share_of_gain_paired(&[1.0, 2.0], &[1.0], &[1.0, 2.0], 0.95).is_none());
        assert!(share_of_gain_paired(&[1.0], &[1.0], &[1.0], 0.95).is_none());
    }

    /// By simulation: rounds that share a drift (a busy neighbour slows
    /// every variant of a round) larger than each run's own noise; the
    /// paired 95% interval holds the true share in about 95% of trials (a
    /// Python simulation of the same set-ups, 20 000 trials each, gave
    /// 0.951, 0.951 and 0.949).
    #[test]
    fn the_paired_95_percent_interval_covers_the_true_share_95_percent_of_the_time() {
        // (means, own noise, round drift, rounds).
        type SetUp = ([f64; 3], [f64; 3], f64, usize);
        let set_ups: [SetUp; 3] = [
            ([1.0, 0.9, 0.8], [0.03, 0.03, 0.03], 0.1, 10),
            ([1.0, 1.02, 0.9], [0.02, 0.05, 0.03], 0.2, 8),
            ([1.0, 0.9, 0.8], [0.03, 0.03, 0.03], 0.1, 5),
        ];
        let trials = 4000;
        for (k, (means, noise, drift, rounds)) in set_ups.into_iter().enumerate() {
            let truth = (means[0] - means[1]) / (means[0] - means[2]);
            let mut rng = Rng::new(7 + k as u64);
            let covered = (0..trials)
                .filter(|_| {
                    let shared: Vec<f64> = (0..rounds).map(|_| drift * rng.normal()).collect();
                    let [b, v, r] = [0, 1, 2].map(|i| {
                        shared
                            .iter()
                            .map(|d| means[i] + d + noise[i] * rng.normal())
                            .collect::<Vec<f64>>()
                    });
                    match share_of_gain_paired(&b, &v, &r, 0.95).unwrap().interval {
                        FiellerSet::Bounded { low, high } => low <= truth && truth <= high,
                        FiellerSet::Unbounded => false,
                    }
                })
                .count();
            let coverage = covered as f64 / f64::from(trials);
            eprintln!("paired set-up {k}: coverage {coverage}");
            assert!(
                (coverage - 0.95).abs() < 0.015,
                "paired set-up {k}: coverage {coverage}"
            );
        }
    }

    /// A reference no better than the baseline has no finite interval, and
    /// a reference exactly at the baseline has no estimate either.
    #[test]
    fn a_reference_without_a_gain_gives_no_interval() {
        let b = Group::of(&[1.0, 1.1, 0.9, 1.05]).unwrap();
        let v = Group::of(&[0.8, 0.85, 0.75, 0.8]).unwrap();
        let r = Group::of(&[1.02, 0.95, 1.08, 0.97]).unwrap();
        let share = share_of_gain(&b, &v, &r, 0.95);
        assert_eq!(share.interval, FiellerSet::Unbounded);
        assert!(share.estimate.is_some());
        let same = share_of_gain(&b, &v, &b, 0.95);
        assert_eq!(same.interval, FiellerSet::Unbounded);
        assert_eq!(same.estimate, None);
    }

    /// Exact counts (callgrind's, the same in every run) leave no
    /// variance: the interval is the estimate itself, and a reference
    /// that counts the same as the baseline has none.
    #[test]
    fn exact_counts_give_a_point() {
        let [b, v, r] = [[100.0; 3], [70.0; 3], [40.0; 3]].map(|x| Group::of(&x).unwrap());
        let share = share_of_gain(&b, &v, &r, 0.95);
        assert_eq!(share.estimate, Some(0.5));
        assert_eq!(
            share.interval,
            FiellerSet::Bounded {
                low: 0.5,
                high: 0.5
            }
        );
        assert!(close(share.df, 6.0), "{share:?}");
        let none = share_of_gain(&b, &v, &b, 0.95);
        assert_eq!(none.interval, FiellerSet::Unbounded);
        assert!(Group::of(&[1.0]).is_none());
        assert!(Group::of(&[1.0, f64::NAN]).is_none());
    }

    /// Degenerate input never panics nor gives a NaN: identical groups,
    /// values whose squares overflow.
    #[test]
    fn degenerate_inputs_give_no_nan() {
        let same = Group::of(&[5.0, 5.0]).unwrap();
        let share = share_of_gain(&same, &same, &same, 0.95);
        assert_eq!(
            (share.estimate, share.interval),
            (None, FiellerSet::Unbounded)
        );
        assert!(share.df.is_finite());
        let [b, v, r] =
            [[1e200, 1.1e200], [0.5e200, 0.6e200], [0.0, 1e199]].map(|x| Group::of(&x).unwrap());
        let huge = share_of_gain(&b, &v, &r, 0.95);
        assert!(huge.df.is_finite() && huge.estimate.is_some_and(f64::is_finite));
        if let FiellerSet::Bounded { low, high } = huge.interval {
            assert!(low.is_finite() && high.is_finite());
        }
    }

    /// Metrics where higher is better (throughput): both gains negative,
    /// the same share and interval as the mirror image.
    #[test]
    fn the_direction_of_better_does_not_matter() {
        let lower = [
            [10.2, 9.8, 10.5, 10.1],
            [9.1, 9.4, 8.8, 9.0],
            [8.1, 8.4, 7.9, 8.3],
        ];
        let higher = lower.map(|g| g.map(|x| 20.0 - x));
        let [b, v, r] = lower.map(|x| Group::of(&x).unwrap());
        let [hb, hv, hr] = higher.map(|x| Group::of(&x).unwrap());
        let (down, up) = (
            share_of_gain(&b, &v, &r, 0.95),
            share_of_gain(&hb, &hv, &hr, 0.95),
        );
        assert!(close(down.estimate.unwrap(), up.estimate.unwrap()));
        let ((low1, high1), (low2, high2)) = (bounds(&down), bounds(&up));
        assert!(
            close(low1, low2) && close(high1, high2),
            "{down:?} vs {up:?}"
        );
    }

    fn normal(rng: &mut Rng, mean: f64, sd: f64, n: usize) -> Vec<f64> {
        (0..n).map(|_| mean + sd * rng.normal()).collect()
    }

    /// By simulation: normal samples whose reference gain is clearly
    /// non-zero, equal and unequal spreads and sizes, a share inside,
    /// below and beyond [0, 1]: the 95% interval holds the true share in
    /// about 95% of trials (a Python simulation of the same set-ups,
    /// 20 000 trials each, gave 0.950, 0.949, 0.945 and 0.954).
    #[test]
    fn the_95_percent_interval_covers_the_true_share_95_percent_of_the_time() {
        // (means, spreads, sizes) of baseline, variant, reference.
        type SetUp = ([f64; 3], [f64; 3], [usize; 3]);
        let set_ups: [SetUp; 4] = [
            ([1.0, 0.9, 0.8], [0.05, 0.05, 0.05], [10, 10, 10]),
            ([1.0, 1.02, 0.85], [0.02, 0.08, 0.04], [6, 10, 8]),
            ([1.0, 0.75, 0.85], [0.03, 0.03, 0.06], [8, 8, 8]),
            ([1.0, 0.9, 0.8], [0.05, 0.05, 0.05], [4, 4, 4]),
        ];
        let trials = 4000;
        for (k, (means, spreads, sizes)) in set_ups.into_iter().enumerate() {
            let truth = (means[0] - means[1]) / (means[0] - means[2]);
            let mut rng = Rng::new(2026 + k as u64);
            let covered = (0..trials)
                .filter(|_| {
                    let [b, v, r] = [0, 1, 2].map(|i| {
                        Group::of(&normal(&mut rng, means[i], spreads[i], sizes[i])).unwrap()
                    });
                    match share_of_gain(&b, &v, &r, 0.95).interval {
                        FiellerSet::Bounded { low, high } => low <= truth && truth <= high,
                        FiellerSet::Unbounded => false,
                    }
                })
                .count();
            let coverage = covered as f64 / f64::from(trials);
            eprintln!("set-up {k}: coverage {coverage}");
            // Binomial standard error at 4000 trials: 0.0034; ±0.015 is
            // over 4 of them.
            assert!(
                (coverage - 0.95).abs() < 0.015,
                "set-up {k}: coverage {coverage}"
            );
        }
    }

    /// By simulation: a reference with no real gain is called unbounded
    /// (its gain not significant) in about 95% of trials, as a 5% test of
    /// its gain would.
    #[test]
    fn a_reference_without_a_real_gain_is_unbounded_95_percent_of_the_time() {
        let mut rng = Rng::new(11);
        let trials = 4000;
        let unbounded = (0..trials)
            .filter(|_| {
                let [b, v, r] =
                    [1.0, 0.9, 1.0].map(|m| Group::of(&normal(&mut rng, m, 0.05, 10)).unwrap());
                share_of_gain(&b, &v, &r, 0.95).interval == FiellerSet::Unbounded
            })
            .count();
        let rate = unbounded as f64 / f64::from(trials);
        eprintln!("unbounded in {rate}");
        assert!((rate - 0.95).abs() < 0.015, "unbounded in {rate}");
    }
}
