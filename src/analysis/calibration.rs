//! `afterburner calibrate`'s findings, from an A/A bench's records alone:
//! the noise within rounds, between rounds and between runs; trials of the
//! file's repetitions, each judged by [`super::analyze::analyze`] — the
//! code that judges a real report, never a copy — counting the claims and
//! the intervals that held 1; and what the file's repetitions can decide.

use std::collections::HashMap;

use super::analyze::analyze;
use super::results::{ComparisonEntry, Results};
use crate::measure::RunRecord;
use crate::rng::Rng;
use crate::runs::{
    BenchMeta, Calibration, RoundsFor, TrialCounts, WorkloadCalibration, CALIBRATION_VERSION,
};
use crate::stats::power::{min_detectable_d, rounds_needed, POWER};
use crate::stats::Verdict;

/// The true changes whose rounds a calibration states, in percent.
pub const EFFECTS_PCT: [f64; 3] = [1.0, 2.0, 5.0];

/// What a calibration judges its A/A bench by.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The rounds' time budget, in seconds (recorded, not enforced here).
    pub budget_s: f64,
    /// Rounds per trial: the experiment's repetitions.
    pub trial_rounds: u32,
    /// Random subsets of `trial_rounds` rounds to judge besides the
    /// disjoint trials.
    pub subsamples: u32,
}

/// The trials' judged reports.
struct Trials {
    disjoint: Vec<Results>,
    subsampled: Vec<Results>,
    /// The rounds of each disjoint trial (for the between-runs spread).
    disjoint_rounds: Vec<Vec<u32>>,
}

/// Calibrate from an A/A bench: `meta`'s first variant is A, its second A′
/// (the same binaries).
pub fn calibrate(meta: &BenchMeta, runs: &[RunRecord], plan: &Plan) -> Calibration {
    let whole = analyze(meta, runs);
    let counted = counted_rounds(meta, runs);
    let trials = judge_trials(meta, runs, &counted, plan);
    let alpha = 1.0 - meta.confidence;
    let workloads = whole
        .comparisons
        .iter()
        .filter(|c| c.primary)
        .map(|c| workload_calibration(&whole, c, &trials, plan.trial_rounds, alpha))
        .collect();
    let name = |i: usize| {
        meta.variants
            .get(i)
            .map(|v| v.name.clone())
            .unwrap_or_default()
    };
    Calibration {
        schema_version: CALIBRATION_VERSION,
        run_id: meta.run_id.clone(),
        target: meta.target.clone(),
        experiment: meta.experiment.clone(),
        captured_at: meta.environment.captured_at.clone(),
        machine_class: meta.environment.machine_class(),
        baseline: name(0),
        twin: name(1),
        budget_s: plan.budget_s,
        confidence: meta.confidence,
        trial_rounds: plan.trial_rounds,
        rounds: u32::try_from(counted.len()).unwrap_or(u32::MAX),
        reports: report_counts(&trials.disjoint),
        reports_subsampled: report_counts(&trials.subsampled),
        workloads,
        rules: rules(meta, plan, counted.len(), trials.disjoint.len()),
    }
}

/// The counted rounds that have a successful timing run, ascending.
fn counted_rounds(meta: &BenchMeta, runs: &[RunRecord]) -> Vec<u32> {
    let mut rounds: Vec<u32> = runs
        .iter()
        .filter(|r| !r.warmup && r.round >= meta.warmup && r.success)
        .map(|r| r.round)
        .collect();
    rounds.sort_unstable();
    rounds.dedup();
    rounds
}

/// Judge the disjoint trials (consecutive rounds, as one bench of the file
/// would run them) and the random subsets.
fn judge_trials(meta: &BenchMeta, runs: &[RunRecord], counted: &[u32], plan: &Plan) -> Trials {
    let size = usize::try_from(plan.trial_rounds.max(2)).unwrap_or(usize::MAX);
    let disjoint_rounds: Vec<Vec<u32>> = counted.chunks_exact(size).map(<[u32]>::to_vec).collect();
    let mut rng = Rng::new(meta.seed ^ 0xca1_1b7a7e);
    // With no more rounds than a trial, every subset is the one trial.
    let subsets: Vec<Vec<u32>> = if counted.len() > size {
        (0..plan.subsamples)
            .map(|_| subset(counted, size, &mut rng))
            .collect()
    } else {
        Vec::new()
    };
    Trials {
        disjoint: disjoint_rounds
            .iter()
            .map(|r| judge_trial(meta, runs, r))
            .collect(),
        subsampled: subsets.iter().map(|r| judge_trial(meta, runs, r)).collect(),
        disjoint_rounds,
    }
}

/// `size` of `rounds` drawn without replacement, ascending.
fn subset(rounds: &[u32], size: usize, rng: &mut Rng) -> Vec<u32> {
    let mut pool = rounds.to_vec();
    rng.shuffle(&mut pool);
    pool.truncate(size);
    pool.sort_unstable();
    pool
}

/// One trial judged as a report of a bench of those rounds alone: the
/// rounds renumbered from 0, no warmup, the plan of that many rounds.
fn judge_trial(meta: &BenchMeta, runs: &[RunRecord], rounds: &[u32]) -> Results {
    let index: HashMap<u32, u32> = rounds
        .iter()
        .zip(0u32..)
        .map(|(&round, i)| (round, i))
        .collect();
    let trial: Vec<RunRecord> = runs
        .iter()
        .filter(|r| !r.warmup)
        .filter_map(|r| {
            index
                .get(&r.round)
                .map(|&round| RunRecord { round, ..r.clone() })
        })
        .collect();
    let plan = BenchMeta {
        warmup: 0,
        repetitions: u32::try_from(rounds.len()).unwrap_or(u32::MAX),
        sequential: None,
        stopped: None,
        race: None,
        ..meta.clone()
    };
    analyze(&plan, &trial)
}

fn claims(c: &ComparisonEntry) -> bool {
    matches!(c.outcome.verdict, Verdict::Faster | Verdict::Slower)
}

fn holds_one(c: &ComparisonEntry) -> bool {
    c.outcome.ci_low <= 1.0 && 1.0 <= c.outcome.ci_high
}

/// Whole reports: any comparison claimed (headline or secondary, as the
/// report's family decided it); held when every headline's interval held 1.
fn report_counts(reports: &[Results]) -> TrialCounts {
    let count = |f: &dyn Fn(&Results) -> bool| {
        u32::try_from(reports.iter().filter(|r| f(r)).count()).unwrap_or(u32::MAX)
    };
    TrialCounts {
        trials: u32::try_from(reports.len()).unwrap_or(u32::MAX),
        claims: count(&|r| r.comparisons.iter().any(claims)),
        held: count(&|r| r.comparisons.iter().filter(|c| c.primary).all(holds_one)),
    }
}

/// One headline comparison's counts over a set of judged trials.
fn headline_counts(reports: &[Results], of: &ComparisonEntry) -> TrialCounts {
    let mut counts = TrialCounts::default();
    for report in reports {
        let Some(c) = report.comparisons.iter().find(|c| {
            c.workload == of.workload && c.metric == of.metric && c.variant == of.variant
        }) else {
            continue;
        };
        counts.trials += 1;
        counts.claims += u32::from(claims(c));
        counts.held += u32::from(holds_one(c));
    }
    counts
}

/// The per-round values of `variant`'s `metric` on `workload`, by round.
fn per_round(results: &Results, workload: &str, metric: &str, variant: &str) -> Vec<(u32, f64)> {
    results
        .measurements
        .iter()
        .find(|m| m.workload == workload && m.metric.name == metric && m.variant == variant)
        .map(|m| {
            m.rounds
                .iter()
                .copied()
                .zip(m.samples.iter().copied())
                .collect()
        })
        .unwrap_or_default()
}

fn workload_calibration(
    whole: &Results,
    c: &ComparisonEntry,
    trials: &Trials,
    trial_rounds: u32,
    alpha: f64,
) -> WorkloadCalibration {
    let a = per_round(whole, &c.workload, &c.metric, &c.baseline);
    let b = per_round(whole, &c.workload, &c.metric, &c.variant);
    let by_round: HashMap<u32, f64> = a.iter().copied().collect();
    let logs: Vec<f64> = b
        .iter()
        .filter_map(|(round, v)| by_round.get(round).map(|u| (v / u).ln()))
        .filter(|x| x.is_finite())
        .collect();
    let sigma = sd(&logs);
    let values = |s: &[(u32, f64)]| s.iter().map(|p| p.1).collect::<Vec<f64>>();
    let trial_means: Vec<f64> = trials
        .disjoint_rounds
        .iter()
        .map(|rounds| {
            mean(
                &a.iter()
                    .filter(|p| rounds.contains(&p.0))
                    .map(|p| p.1)
                    .collect::<Vec<_>>(),
            )
        })
        .collect();
    let known = sigma.filter(|s| *s > 0.0);
    WorkloadCalibration {
        workload: c.workload.clone(),
        metric: c.metric.clone(),
        pairs: u32::try_from(logs.len()).unwrap_or(u32::MAX),
        within_round_pct: sigma.map(|s| s * 100.0),
        cv_baseline_pct: cv(&values(&a)),
        cv_twin_pct: cv(&values(&b)),
        between_trials_pct: cv(&trial_means),
        disjoint: headline_counts(&trials.disjoint, c),
        subsampled: headline_counts(&trials.subsampled, c),
        min_effect_pct: known
            .map(|s| ((min_detectable_d(trial_rounds, alpha, POWER) * s).exp() - 1.0) * 100.0),
        rounds_for: EFFECTS_PCT
            .iter()
            .map(|&e| RoundsFor {
                effect_pct: e,
                rounds: known.and_then(|s| rounds_needed((1.0 + e / 100.0).ln() / s, alpha, POWER)),
            })
            .collect(),
    }
}

fn mean(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len() as f64
}

/// The sample standard deviation; `None` below two values.
fn sd(values: &[f64]) -> Option<f64> {
    if values.len() < 2 {
        return None;
    }
    let m = mean(values);
    let ss: f64 = values.iter().map(|x| (x - m).powi(2)).sum();
    Some((ss / (values.len() - 1) as f64).sqrt())
}

/// The coefficient of variation in percent; `None` below two values or
/// with a zero mean.
fn cv(values: &[f64]) -> Option<f64> {
    let m = mean(values);
    sd(values).filter(|_| m != 0.0).map(|s| s / m.abs() * 100.0)
}

/// The rules the table's figures follow, stated with this calibration's
/// numbers.
fn rules(meta: &BenchMeta, plan: &Plan, rounds: usize, disjoint: usize) -> Vec<String> {
    let level = meta.confidence * 100.0;
    let alpha = 1.0 - meta.confidence;
    let mut rules = Vec::new();
    if disjoint == 0 {
        // The rounds so far, warmup included, paced the budget.
        let per_round = plan.budget_s / (rounds as f64 + f64::from(meta.warmup)).max(1.0);
        let wanted = f64::from(5 * plan.trial_rounds + meta.warmup) * per_round;
        rules.push(format!(
            "The budget fit {rounds} counted rounds, fewer than one trial of the file's {}: no trial was judged, the noise and power figures stand. About {:.0} s would fit 5 trials: give `--budget {:.0}s` (or calibrate with `--quick`).",
            plan.trial_rounds,
            wanted,
            wanted.ceil()
        ));
    }
    rules.extend([
        format!(
            "Trials: the A/A bench's {rounds} counted rounds (A and A′ are the baseline's one build, interleaved in shuffled order as a bench runs variants) split into {disjoint} disjoint trials of the file's {r} repetitions, consecutive rounds as one bench of the file runs them, and {s} random subsets of {r} rounds drawn without replacement (seeded), each judged by the code that judges `afterburner report` at {level}% (the headline's verdict; the report's family corrected as a report corrects it). A claim is a verdict faster or slower — false here, since A and A′ are one build; an interval held when it contained 1. Disjoint trials are independent but few; the subsets are many but overlap, so their rate is smoother, not surer.",
            r = plan.trial_rounds,
            s = if rounds > plan.trial_rounds as usize { plan.subsamples } else { 0 },
        ),
        "Noise: within rounds, the standard deviation of ln(A′/A) over the rounds, ×100 (≈ %), what a paired verdict sees; between rounds, each variant's coefficient of variation; between runs, the coefficient of variation of A's mean over the disjoint trials.".to_owned(),
        format!(
            "Power: a two-sided paired t on the per-round log ratios at level {alpha:.2}, with the within-round noise measured here (noncentral t, exact under normal noise), for 80% power. From 6 rounds a report decides by the signed-rank test, whose efficiency under normal noise is 3/π ≈ 95% of the t's: allow about 5% more rounds."
        ),
    ]);
    rules
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_subset_has_distinct_rounds_of_the_pool() {
        let pool: Vec<u32> = (3..23).collect();
        let mut rng = Rng::new(7);
        let s = subset(&pool, 10, &mut rng);
        assert_eq!(s.len(), 10);
        assert!(s.windows(2).all(|w| w[0] < w[1]), "{s:?}");
        assert!(s.iter().all(|r| pool.contains(r)));
    }

    fn record(round: u32, variant: &str, wall_ns: u64) -> RunRecord {
        RunRecord::timing_for_tests(round, variant, "w", wall_ns)
    }

    /// 25 rounds of A and a twin `slowdown` times as slow, each with 1%
    /// lognormal noise, judged in trials of 10.
    fn calibrated(slowdown: f64) -> Calibration {
        calibrated_in(slowdown, 10)
    }

    fn calibrated_in(slowdown: f64, trial_rounds: u32) -> Calibration {
        use crate::measure::{InstructionCounter, Metric};
        use crate::metric::Builtin;
        let wall = Metric::builtin(Builtin::WALL, InstructionCounter::Callgrind);
        let meta = BenchMeta::for_tests(&["a", "a.aa"], &["w"], 25, vec![wall]);
        let mut rng = Rng::new(3);
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // ~1e9 ns
        let mut value = |scale: f64| (1e9 * scale * (0.01 * rng.normal()).exp()) as u64;
        let runs: Vec<RunRecord> = (0..25)
            .flat_map(|round| {
                [
                    record(round, "a", value(1.0)),
                    record(round, "a.aa", value(slowdown)),
                ]
            })
            .collect();
        let plan = Plan {
            budget_s: 60.0,
            trial_rounds,
            subsamples: 7,
        };
        calibrate(&meta, &runs, &plan)
    }

    #[test]
    fn trials_are_judged_by_the_report_and_their_claims_counted() {
        let same = calibrated(1.0);
        assert_eq!((same.rounds, same.trial_rounds), (25, 10));
        let w = &same.workloads[0];
        assert_eq!((w.workload.as_str(), w.metric.as_str()), ("w", "wall"));
        assert_eq!(w.pairs, 25);
        assert_eq!((w.disjoint.trials, w.subsampled.trials), (2, 7));
        // The difference of two 1% lognormal noises: √2 % ≈ 1.41%.
        let within = w.within_round_pct.unwrap();
        assert!((0.9..2.0).contains(&within), "{within}");
        assert!(w.disjoint.claims <= 1 && w.disjoint.held >= 1, "{w:?}");
        // Noise of 1.41% at 10 rounds: an effect of ~1.4% is decided; 5%
        // needs a handful of rounds, 1% dozens.
        let mde = w.min_effect_pct.unwrap();
        assert!((0.8..2.5).contains(&mde), "{mde}");
        let rounds: Vec<u32> = w.rounds_for.iter().filter_map(|r| r.rounds).collect();
        assert_eq!(rounds.len(), 3);
        assert!(rounds[0] > rounds[1] && rounds[1] > rounds[2], "{rounds:?}");
        // A twin 10% slower is claimed in every trial, its interval far from 1.
        let slower = calibrated(1.1);
        let w = &slower.workloads[0];
        assert_eq!((w.disjoint.claims, w.disjoint.held), (2, 0), "{w:?}");
        assert_eq!((w.subsampled.claims, w.subsampled.held), (7, 0), "{w:?}");
        assert_eq!(slower.reports.claims, 2);
    }

    /// Fewer rounds than one trial: nothing judged, the noise and power
    /// still stated, and the budget that would fit five trials advised.
    #[test]
    fn a_budget_short_of_one_trial_says_what_would_fit() {
        let c = calibrated_in(1.0, 30);
        let w = &c.workloads[0];
        assert_eq!((w.disjoint.trials, w.subsampled.trials), (0, 0));
        assert!(w.within_round_pct.is_some() && w.min_effect_pct.is_some());
        // 60 s paced 25 rounds: 2.4 s a round, 150 rounds for 5 trials.
        assert!(
            c.rules[0].contains("fewer than one trial of the file's 30")
                && c.rules[0].contains("--budget 360s"),
            "{}",
            c.rules[0]
        );
    }

    #[test]
    fn spread_and_coefficient_of_variation() {
        // SciPy: numpy.std([1, 2, 3, 4], ddof=1) = 1.2909944
        assert!((sd(&[1.0, 2.0, 3.0, 4.0]).unwrap() - 1.290_994_4).abs() < 1e-6);
        assert!((cv(&[1.0, 2.0, 3.0, 4.0]).unwrap() - 51.639_778).abs() < 1e-4);
        assert_eq!(sd(&[1.0]), None);
    }
}
