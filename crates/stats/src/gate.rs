//! The regression gate's rule on one comparison — failed when decided
//! worse by more than a threshold, passed only when the interval rules out
//! a regression beyond the threshold (non-inferiority), inconclusive else
//! — and a paired gate judged look by look under a sequential plan.
//!
//! Looking again is paid for with repeated confidence intervals (Jennison
//! & Turnbull, "Repeated confidence intervals for group sequential
//! clinical trials", Controlled Clinical Trials 5, 1984): the interval of
//! look k is taken at the plan's nominal level for that look, the level
//! that its alpha spending gives a first crossing there, so that every
//! look's interval holds the true ratio together with probability at least
//! the plan's confidence. A gate that stops at the first look whose
//! interval passes or fails therefore errs, either way, no more often than
//! one judged once.

use super::sequential::Plan;
use super::{paired_t, Comparison, Precision, Verdict};

/// What became of one case of a gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Passed,
    Failed,
    /// The data cannot decide it either way (an interval that holds both
    /// a pass and a failure, or too few repetitions for the test).
    Inconclusive,
    /// Nothing to judge (e.g. the baseline run did not measure it).
    Skipped,
}

/// The regression that fails a gate's case unless one is given, in
/// percent: 2% for an exact count (Perfherder's default; callgrind's
/// counts resolve far less), 5% for time and other noisy metrics, about
/// what 20 paired rounds of a 16 ms program resolve on a shared 2-vCPU
/// machine beside a CPU hog (`scripts/gate-trials.sh`).
pub fn default_threshold_pct(precision: Precision) -> f64 {
    match precision {
        Precision::Exact => 2.0,
        Precision::Noisy | Precision::Share => 5.0,
    }
}

/// The estimate and interval that decided a comparison's verdict: its
/// own `ratio`, `ci_low` and `ci_high` (the median ratio's, the paired
/// t's, the lookback's; `estimate` names it).
pub fn deciding(o: &Comparison) -> (f64, f64, f64) {
    (o.ratio, o.ci_low, o.ci_high)
}

/// How much worse than the baseline a ratio is, in percent (negative when
/// better), whatever the metric's direction.
pub fn worse_pct(ratio: f64, lower_is_better: bool) -> f64 {
    if lower_is_better {
        (ratio - 1.0) * 100.0
    } else {
        (1.0 - ratio) * 100.0
    }
}

/// The worst regression a comparison's deciding interval allows, in
/// percent: its bound on the worse side (the upper one when lower is
/// better), as [`worse_pct`] of it.
pub fn worst_pct(o: &Comparison, lower_is_better: bool) -> f64 {
    let (_, low, high) = deciding(o);
    let bound = if lower_is_better { high } else { low };
    worse_pct(bound, lower_is_better)
}

/// A case's status from its comparison, on evidence only:
///
/// - **failed** when the verdict is slower (the whole interval on the worse
///   side of 1) and the estimate is worse by more than `threshold_pct`;
/// - **passed** when the interval's bound on the worse side is within the
///   threshold (non-inferiority: the whole interval below 1 + threshold when
///   lower is better, above 1 − threshold otherwise), whatever the
///   estimate;
/// - **inconclusive** otherwise: an estimate within the threshold whose
///   interval reaches beyond it is no evidence that the regression is
///   smaller, and passing it would pass a true regression at the
///   threshold about half the time.
///
/// A two-sided interval at confidence 1 − α makes each decision a
/// one-sided test at α/2 (2.5% at 95%): a true regression of the threshold
/// or more passes at most that often.
pub fn status_of(o: &Comparison, lower_is_better: bool, threshold_pct: f64) -> Status {
    let (estimate, _, _) = deciding(o);
    if o.verdict == Verdict::Slower && worse_pct(estimate, lower_is_better) > threshold_pct {
        Status::Failed
    } else if worst_pct(o, lower_is_better) <= threshold_pct + 1e-9 {
        // (A bound of exactly 1.05 is 5.000000000000004% worse.)
        Status::Passed
    } else {
        Status::Inconclusive
    }
}

/// The pass rule in words, for every output of a gate.
pub fn rule_text(threshold: &str) -> String {
    format!(
        "A case passes only on evidence: when its interval's bound on the worse side is within the threshold, {threshold} (the whole interval below 1 + threshold when lower is better, above 1 − threshold when higher is; non-inferiority, a one-sided test at half the interval's α), whatever its verdict; it fails when it is decided slower (the whole interval on the worse side of 1) and its estimate is worse by more than the threshold; it is inconclusive otherwise, never a pass: an estimate within the threshold whose interval reaches beyond it does not show the regression is smaller."
    )
}

/// A paired gate decided by a sequential plan.
#[derive(Debug, Clone, PartialEq)]
pub struct Looked {
    /// The comparison of the deciding look (the last one when none decided).
    pub comparison: Comparison,
    pub status: Status,
    /// Paired rounds that look used.
    pub rounds: u32,
    /// The confidence that look judged at.
    pub confidence: f64,
}

/// What a paired gate is judged on.
#[derive(Debug, Clone, Copy)]
pub struct PairedGate {
    pub equivalence: f64,
    pub lower_is_better: bool,
    /// The regression that fails, in percent.
    pub threshold_pct: f64,
}

/// Judge `now` against `before` ((round, value) pairs; only rounds both
/// measured count, in round order) look by look: each look's paired
/// t-test on the log ratios of its first rounds at the look's nominal
/// level; the first look that passes or fails decides. `None` when no look
/// had two paired rounds.
pub fn paired_looks(
    plan: &Plan,
    before: &[(u32, f64)],
    now: &[(u32, f64)],
    gate: PairedGate,
) -> Option<Looked> {
    let mut pairs: Vec<(u32, f64, f64)> = before
        .iter()
        .filter_map(|&(r, b)| now.iter().find(|p| p.0 == r).map(|&(_, v)| (r, b, v)))
        .collect();
    pairs.sort_by_key(|p| p.0);
    let rounds = u32::try_from(pairs.len()).unwrap_or(u32::MAX);
    let mut last = None;
    for (look, level) in plan.looks_with_levels(rounds) {
        let n = (look as usize).min(pairs.len());
        let b: Vec<f64> = pairs[..n].iter().map(|p| p.1).collect();
        let v: Vec<f64> = pairs[..n].iter().map(|p| p.2).collect();
        let confidence = 1.0 - level;
        let Some(comparison) =
            paired_t::compare(&b, &v, confidence, gate.equivalence, gate.lower_is_better)
        else {
            continue;
        };
        let status = status_of(&comparison, gate.lower_is_better, gate.threshold_pct);
        let looked = Looked {
            comparison,
            status,
            rounds: look,
            confidence,
        };
        if status != Status::Inconclusive {
            return Some(looked);
        }
        last = Some(looked);
    }
    last
}

#[cfg(test)]
mod tests {
    use super::*;
    use afterburner_leaves::rng::Rng;

    const GATE: PairedGate = PairedGate {
        equivalence: 0.01,
        lower_is_better: true,
        threshold_pct: 2.0,
    };

    /// Rounds 1..=n of a program taking `base` seconds with log-normal
    /// noise `sd` per run and a drift shared by the round's two runs.
    type Rounds = Vec<(u32, f64)>;

    fn rounds(rng: &mut Rng, n: u32, ratio: f64, sd: f64) -> (Rounds, Rounds) {
        let mut before = Vec::new();
        let mut now = Vec::new();
        for r in 1..=n {
            let drift = (0.1 * rng.normal()).exp();
            before.push((r, drift * (sd * rng.normal()).exp()));
            now.push((r, ratio * drift * (sd * rng.normal()).exp()));
        }
        (before, now)
    }

    /// Of `count` gates on `n` rounds judged at `threshold_pct`: passed,
    /// failed and inconclusive.
    fn trials(
        count: usize,
        (ratio, sd): (f64, f64),
        plan: &Plan,
        n: u32,
        threshold_pct: f64,
    ) -> [usize; 3] {
        let mut rng = Rng::new(7);
        let mut counts = [0; 3];
        let gate = PairedGate {
            threshold_pct,
            ..GATE
        };
        for _ in 0..count {
            let (b, v) = rounds(&mut rng, n, ratio, sd);
            let looked = paired_looks(plan, &b, &v, gate).unwrap();
            match looked.status {
                Status::Passed => counts[0] += 1,
                Status::Failed => counts[1] += 1,
                _ => counts[2] += 1,
            }
        }
        counts
    }

    /// Looking again costs nothing in error: an unchanged program (1%
    /// noise per run) fails rarely and is mostly passed; a regression of
    /// exactly the threshold is passed (its whole interval within it) no
    /// more often than the plan's one-sided α/2 allows, over all looks; a
    /// doubling fails at the first look.
    #[test]
    fn looking_again_keeps_both_errors_within_the_plan() {
        let plan = Plan::new(0.95, 5, 20);
        let [passed, failed, _] = trials(2_000, (1.0, 0.01), &plan, 20, 2.0);
        assert!(failed <= 2_000 / 40, "{failed} of 2000 A/A gates failed");
        assert!(
            passed >= 2_000 * 9 / 10,
            "{passed} of 2000 A/A gates passed"
        );
        // 2.5% of 2,000 is 50, and 2 Monte Carlo standard errors 14.
        let [passed, _, _] = trials(2_000, (1.02, 0.02), &plan, 20, 2.0);
        assert!(
            passed <= 64,
            "{passed} of 2000 gates passed a 2% regression that was there"
        );
        let mut rng = Rng::new(1);
        let (b, v) = rounds(&mut rng, 20, 2.0, 0.02);
        let looked = paired_looks(&plan, &b, &v, GATE).unwrap();
        assert_eq!(looked.status, Status::Failed);
        assert_eq!(looked.rounds, 5);
    }

    /// Issue 47: under `--budget` at the 5% default, a true 7% regression
    /// was passed in 4–9% of checks, "slower by less than the threshold"
    /// on its estimate at an early look. On evidence only, a regression at
    /// or beyond the threshold passes in at most α/2 (2.5%, 25 of 1,000,
    /// and 2 Monte Carlo standard errors: 35), at 2% and 5% noise per run;
    /// the plan of `check --rev --budget` from 3 repetitions (3 to 30
    /// rounds).
    #[test]
    fn a_regression_beyond_the_threshold_is_not_passed_on_its_estimate() {
        let plan = Plan::new(0.95, 3, 30);
        for sd in [0.02, 0.05] {
            for ratio in [1.05, 1.07] {
                let [passed, _, _] = trials(1_000, (ratio, sd), &plan, 30, 5.0);
                assert!(
                    passed <= 35,
                    "{passed} of 1000 gates passed a true ×{ratio} at {sd} noise"
                );
            }
        }
        // An unchanged program at 2% noise is still passed.
        let [passed, failed, _] = trials(1_000, (1.0, 0.02), &plan, 30, 5.0);
        assert!(passed >= 900, "{passed} of 1000 A/A passed");
        assert!(failed <= 35, "{failed} of 1000 A/A failed");
    }

    /// The rule on single comparisons: an estimate within the threshold
    /// whose interval reaches beyond it is inconclusive, not a pass; the
    /// same with a narrow interval passes; decided beyond it fails; for a
    /// metric where higher is better, the lower bound is the worse one.
    #[test]
    fn a_pass_needs_the_whole_interval_within_the_threshold() {
        use Verdict::{Faster, Same, Slower, Undecided};
        let judged = |ratio: f64, low: f64, high: f64, verdict: Verdict, lower: bool| {
            let o = Comparison {
                ratio,
                improvement_pct: -worse_pct(ratio, lower),
                ci_low: low,
                ci_high: high,
                estimate: crate::Estimate::GeometricMeanRatio,
                p_value: None,
                mann_whitney_p: None,
                mean_ratio: None,
                mean_ci_low: None,
                mean_ci_high: None,
                median_ratio: None,
                median_ci_low: None,
                median_ci_high: None,
                signed_rank_p: None,
                verdict,
                equivalence_pct: 1.0,
                resolution_pct: None,
                rule: String::new(),
            };
            status_of(&o, lower, 5.0)
        };
        assert_eq!(judged(1.03, 1.01, 1.08, Slower, true), Status::Inconclusive);
        assert_eq!(judged(1.03, 1.01, 1.045, Slower, true), Status::Passed);
        assert_eq!(
            judged(1.02, 0.97, 1.06, Undecided, true),
            Status::Inconclusive
        );
        assert_eq!(judged(1.0, 0.98, 1.05, Undecided, true), Status::Passed);
        assert_eq!(judged(1.07, 1.02, 1.12, Slower, true), Status::Failed);
        assert_eq!(
            judged(1.07, 0.99, 1.12, Undecided, true),
            Status::Inconclusive
        );
        assert_eq!(judged(0.9, 0.85, 0.95, Faster, true), Status::Passed);
        assert_eq!(judged(1.0, 0.995, 1.005, Same, true), Status::Passed);
        // Throughput: 3% lower with its interval down to 8% lower.
        assert_eq!(
            judged(0.97, 0.92, 0.99, Slower, false),
            Status::Inconclusive
        );
        assert_eq!(judged(0.97, 0.96, 0.99, Slower, false), Status::Passed);
        assert_eq!(judged(0.9, 0.85, 0.93, Slower, false), Status::Failed);
    }

    /// Only the rounds both builds measured are paired.
    #[test]
    fn unmatched_rounds_are_left_out() {
        let plan = Plan::new(0.95, 3, 3);
        let before = [(1, 1.0), (2, 1.0), (3, 1.0), (4, 9.0)];
        let now = [(1, 1.0), (2, 1.0), (3, 1.0), (5, 9.0)];
        let looked = paired_looks(&plan, &before, &now, GATE).unwrap();
        assert_eq!(looked.rounds, 3);
        assert_eq!(looked.status, Status::Passed);
    }
}
