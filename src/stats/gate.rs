//! The regression gate's rule on one comparison — failed when decided
//! worse by more than a threshold, passed when decided otherwise or when
//! the interval rules out a regression beyond the threshold
//! (non-inferiority), inconclusive else — and a paired gate judged look by
//! look under a sequential plan.
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

/// A case's status from its comparison: failed when decided slower by
/// more than `threshold_pct` percent; passed when decided the same or
/// faster, or slower by less, or when its interval rules out a regression
/// beyond the threshold (non-inferiority: the worse bound within it);
/// otherwise inconclusive.
pub fn status_of(o: &Comparison, lower_is_better: bool, threshold_pct: f64) -> Status {
    let worse = -o.improvement_pct;
    if o.verdict == Verdict::Slower && worse > threshold_pct {
        return Status::Failed;
    }
    if o.verdict != Verdict::Undecided {
        return Status::Passed;
    }
    // The interval that decided: the signed-rank one where there was one.
    let (low, high) = match (o.median_ci_low, o.median_ci_high) {
        (Some(l), Some(h)) => (l, h),
        _ => (o.ci_low, o.ci_high),
    };
    let t = threshold_pct / 100.0;
    let within = if lower_is_better {
        high <= 1.0 + t
    } else {
        low >= 1.0 - t
    };
    if within {
        Status::Passed
    } else {
        Status::Inconclusive
    }
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
    use crate::rng::Rng;

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

    /// Of 2,000 gates on `n` rounds: passed, failed, and passed with an
    /// undecided verdict (by non-inferiority alone).
    fn trials(ratio: f64, sd: f64, plan: &Plan, n: u32) -> [usize; 3] {
        let mut rng = Rng::new(7);
        let mut counts = [0; 3];
        for _ in 0..2_000 {
            let (b, v) = rounds(&mut rng, n, ratio, sd);
            let looked = paired_looks(plan, &b, &v, GATE).unwrap();
            match looked.status {
                Status::Passed => {
                    counts[0] += 1;
                    if looked.comparison.verdict == Verdict::Undecided {
                        counts[2] += 1;
                    }
                }
                Status::Failed => counts[1] += 1,
                _ => {}
            }
        }
        counts
    }

    /// Looking again costs nothing in error: an unchanged program (1%
    /// noise per run) fails rarely and is mostly passed; a regression of exactly the threshold
    /// is passed on its interval (non-inferiority) no more often than the
    /// plan's one-sided α/2 allows, over all looks; a doubling fails at the
    /// first look.
    #[test]
    fn looking_again_keeps_both_errors_within_the_plan() {
        let plan = Plan::new(0.95, 5, 20);
        let [passed, failed, _] = trials(1.0, 0.01, &plan, 20);
        assert!(failed <= 2_000 / 40, "{failed} of 2000 A/A gates failed");
        assert!(
            passed >= 2_000 * 9 / 10,
            "{passed} of 2000 A/A gates passed"
        );
        let [_, _, non_inferior] = trials(1.02, 0.02, &plan, 20);
        assert!(
            non_inferior <= 2_000 * 35 / 1000,
            "{non_inferior} of 2000 gates ruled out a 2% regression that was there"
        );
        let mut rng = Rng::new(1);
        let (b, v) = rounds(&mut rng, 20, 2.0, 0.02);
        let looked = paired_looks(&plan, &b, &v, GATE).unwrap();
        assert_eq!(looked.status, Status::Failed);
        assert_eq!(looked.rounds, 5);
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
