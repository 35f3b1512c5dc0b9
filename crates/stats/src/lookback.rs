//! Two runs from different times judged by the spread *between* runs, the
//! one that separates them: a stored run's mean and this run's differ by
//! the machine's drift from one run to the next (clock, neighbours, caches
//! left warm or cold), which the spread within either run does not see.
//!
//! The spread is estimated from history, as conbench's lookback z-score
//! and Perfherder's windows do: the means of the same variant, workload and
//! metric in the last stored runs on the same machine class. With K such
//! means, s is the standard deviation of their logarithms (K − 1 degrees of
//! freedom); the difference of two single runs' log means has variance 2σ²,
//! so the interval of the ratio this run / baseline run is
//! exp(d ± t₁₋α/₂,K₋₁ · s·√2), d the log ratio of the two means, and its
//! two-sided p that of t = d / (s·√2) (the t-test of a new observation
//! against a reference one, both from the history's distribution).
//! Runs of other revisions in the history make s larger, never smaller,
//! when their code was slower or faster: the interval errs on the wide
//! side.

use super::paired_t::{mean_sd, LogEstimate};
use super::Comparison;

/// The fewest stored means that give a spread.
pub const FEWEST_RUNS: usize = 3;

/// The fewest stored means whose spread may pass a gate (a failure needs
/// only [`FEWEST_RUNS`]). A spread from K means has K − 1 degrees of
/// freedom, and the interval's coverage leans on the drift between runs
/// being normal most where they are few: one quiet hour among three runs
/// makes s too small, and a pass is the verdict that must not rest on
/// luck. With 3 runs an unchanged program passes rarely anyway (t₀.₉₇₅,₂ =
/// 4.3 makes the interval ±6 s wide), so the rule costs little.
pub const FEWEST_RUNS_TO_PASS: usize = 6;

/// `current` against `baseline` (two runs' means), with the spread between
/// runs of `history` (stored runs' means, the baseline's among them);
/// `None` with fewer than [`FEWEST_RUNS`] or a value that is not positive.
pub fn compare(
    history: &[f64],
    baseline: f64,
    current: f64,
    confidence: f64,
    equivalence: f64,
    lower_is_better: bool,
) -> Option<Comparison> {
    if history.len() < FEWEST_RUNS
        || history
            .iter()
            .chain([&baseline, &current])
            .any(|x| *x <= 0.0)
    {
        return None;
    }
    let logs: Vec<f64> = history.iter().map(|x| x.ln()).collect();
    let (_, sd) = mean_sd(&logs);
    let k = history.len();
    let estimate = LogEstimate {
        mean: (current / baseline).ln(),
        se: sd * std::f64::consts::SQRT_2,
        df: (k - 1) as f64,
    };
    Some(estimate.comparison(
        confidence,
        equivalence,
        lower_is_better,
        rule(k, confidence),
    ))
}

fn rule(k: usize, confidence: f64) -> String {
    format!(
        "Noisy metric across runs: the spread between runs estimated from history (the standard deviation s of the log means of this variant, workload and metric in {k} stored runs on this machine class, {df} degrees of freedom, as conbench's lookback does); the {c}% interval of the ratio of this run's mean to the baseline run's is exp(d ± t·s·√2), d their log ratio; same within the equivalence margin, faster or slower when the interval lies on one side of 1, else undecided.",
        df = k - 1,
        c = super::tidy(confidence * 100.0),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Verdict;
    use afterburner_leaves::rng::Rng;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-7 * b.abs()
    }

    /// Reference values from SciPy 1.17: s = np.std(np.log(h), ddof=1),
    /// se = s·√2, p = 2·t.sf(|d|/se, K−1), the interval
    /// exp(d ∓ t.ppf(0.975, K−1)·se).
    #[test]
    fn matches_scipy() {
        // History, baseline, current; SciPy's p, ratio, low and high.
        type Case<'a> = (&'a [f64], f64, f64, f64, f64, f64, f64);
        let cases: [Case; 3] = [
            (
                &[10.2, 10.9, 9.8, 10.5, 11.3],
                10.5,
                12.9,
                0.058_867_715_26,
                1.228_571_429,
                0.987_692_338_5,
                1.528_196_278,
            ),
            (
                &[20.0, 20.4, 19.7],
                20.1,
                20.3,
                0.727_945_905_5,
                1.009_950_249,
                0.907_875_325_7,
                1.123_501_736,
            ),
            (
                &[5.0, 5.5, 4.6, 5.2, 4.9, 5.1, 5.3, 4.8],
                5.0,
                4.1,
                0.043_733_989_59,
                0.82,
                0.677_372_233_6,
                0.992_659_525_5,
            ),
        ];
        for (history, base, current, p, ratio, low, high) in cases {
            let c = compare(history, base, current, 0.95, 0.01, true).unwrap();
            assert!(close(c.p_value.unwrap(), p), "{c:?}");
            assert!(close(c.ratio, ratio), "{c:?}");
            assert!(close(c.ci_low, low), "{c:?}");
            assert!(close(c.ci_high, high), "{c:?}");
        }
        let faster = compare(cases[2].0, 5.0, 4.1, 0.95, 0.01, true).unwrap();
        assert_eq!(faster.verdict, Verdict::Faster);
        assert!(compare(&[1.0, 1.0], 1.0, 1.0, 0.95, 0.01, true).is_none());
    }

    /// By simulation: runs whose means drift 5% from run to run (far more
    /// than the spread within a run), judged two at a time with the spread
    /// of the last 8: an unchanged program is called slower or faster in
    /// about 5% of checks, and a doubling is caught.
    #[test]
    fn an_unchanged_program_is_rarely_called_changed() {
        let mut rng = Rng::new(11);
        let run = |rng: &mut Rng| (0.05 * rng.normal()).exp();
        let mut called = 0;
        let trials = 4_000;
        for _ in 0..trials {
            let history: Vec<f64> = (0..8).map(|_| run(&mut rng)).collect();
            let baseline = history[7];
            let c = compare(&history, baseline, run(&mut rng), 0.95, 0.01, true).unwrap();
            if matches!(c.verdict, Verdict::Faster | Verdict::Slower) {
                called += 1;
            }
        }
        // 5% of 4,000 is 200 when s is independent of d; with the
        // baseline's own mean inside the history (as in a real check) an
        // extreme baseline also widens s, and the rate falls to about 3%.
        assert!((60..=260).contains(&called), "{called} of {trials}");
        let history: Vec<f64> = (0..8).map(|_| run(&mut rng)).collect();
        let c = compare(&history, history[7], 2.0 * run(&mut rng), 0.95, 0.01, true).unwrap();
        assert_eq!(c.verdict, Verdict::Slower);
    }
}
