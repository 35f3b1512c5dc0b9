//! The deciding procedures, each run on one bench drawn from a [`Shape`]
//! through the functions that judge a real run: a run's meta and raw
//! records as the bench writes them, [`analysis::analyze::analyze`] (what
//! `afterburner report --run` redraws results with), the race's replay
//! inside it, and the gates of `afterburner check` on those results
//! ([`check::paired::suite`], [`check::regression::suite`]). One function
//! per procedure, answering whether its event happened in one trial; the
//! list in [`super::PROCEDURES`] names what the event is.

use std::collections::BTreeMap;

use crate::analysis::analyze::analyze;
use crate::analysis::results::ComparisonEntry;
use crate::analysis::Results;
use crate::check::{self, Status, Threshold};
use crate::measure::{InstructionCounter, Metric, RunKind, RunRecord};
use crate::metric::Builtin;
use crate::rng::Rng;
use crate::runs::{BenchMeta, Judging, RaceMeta, SequentialMeta};
use crate::stats::race::RacePlan;
use crate::stats::sequential::Plan;
use crate::stats::Verdict;

use super::shapes::Shape;

/// A run's time in nanoseconds for a drawn factor of 1.
const UNIT_NS: f64 = 10e6;

/// A bench's plan: its variants (the first the baseline), workloads and
/// metrics; wall is every workload's headline.
struct Bench<'a> {
    variants: &'a [&'a str],
    workloads: &'a [&'a str],
    metrics: &'a [Builtin],
    rounds: u32,
}

impl Bench<'_> {
    /// The bench's meta, as `afterburner bench` writes it before the first
    /// run, with its bootstrap seed drawn from `rng`.
    fn meta(&self, rng: &mut Rng) -> BenchMeta {
        let metrics = self
            .metrics
            .iter()
            .map(|k| Metric::builtin(*k, InstructionCounter::Callgrind))
            .collect();
        let mut meta = BenchMeta::for_tests(self.variants, self.workloads, self.rounds, metrics);
        meta.seed = rng.next_u64();
        meta.judging = self
            .workloads
            .iter()
            .map(|w| {
                let judging = Judging {
                    primary: "wall".to_owned(),
                    fixed_duration: false,
                };
                ((*w).to_owned(), judging)
            })
            .collect();
        meta
    }

    /// Its raw records: each metric of each workload drawn from `shape`
    /// alone (the `changed` variants with its effect), as `raw.jsonl`
    /// holds them, one per run, rounds in order.
    fn records(
        &self,
        shape: &Shape,
        rng: &mut Rng,
        changed: &[usize],
        factor: f64,
    ) -> Vec<RunRecord> {
        let mut runs = Vec::new();
        for workload in self.workloads {
            let drawn: Vec<Vec<Vec<f64>>> = self
                .metrics
                .iter()
                .map(|_| shape.draw(rng, self.variants.len(), self.rounds, changed))
                .collect();
            for round in 0..self.rounds {
                for (v, variant) in self.variants.iter().enumerate() {
                    let ns = |k: Builtin| {
                        let i = self.metrics.iter().position(|m| *m == k)?;
                        let x = drawn[i][v][round as usize] * factor * UNIT_NS;
                        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                        Some(x as u64)
                    };
                    runs.push(record(
                        round,
                        variant,
                        workload,
                        [ns(Builtin::WALL), ns(Builtin::USER), ns(Builtin::SYS)],
                    ));
                }
            }
        }
        runs
    }
}

/// One timing run's record.
fn record(
    round: u32,
    variant: &str,
    workload: &str,
    [wall, user, sys]: [Option<u64>; 3],
) -> RunRecord {
    RunRecord {
        round,
        warmup: false,
        position: 0,
        variant: variant.to_owned(),
        workload: workload.to_owned(),
        kind: RunKind::Timing,
        started_unix_ms: 0,
        success: true,
        exit: "exit code 0".to_owned(),
        wall_ns: wall,
        user_ns: user,
        sys_ns: sys,
        max_rss_kib: None,
        instructions: None,
        instruction_source: None,
        figures: BTreeMap::new(),
        error: None,
        stdout_log: std::path::PathBuf::new(),
        stderr_log: std::path::PathBuf::new(),
    }
}

/// A bench of one variant against the baseline on one workload, wall time,
/// the variant changed by the shape's effect: its one comparison as the
/// report judges it.
fn one_comparison(shape: &Shape, rounds: u32, rng: &mut Rng) -> ComparisonEntry {
    let bench = Bench {
        variants: &["base", "v"],
        workloads: &["w"],
        metrics: &[Builtin::WALL],
        rounds,
    };
    let meta = bench.meta(rng);
    let runs = bench.records(shape, rng, &[1], 1.0);
    let results = analyze(&meta, &runs);
    results
        .comparisons
        .into_iter()
        .next()
        .expect("invariant: a bench of two variants with runs has a comparison")
}

/// Whether `verdict` claims the wrong thing when the truth is `effect`:
/// any difference when there is none, else the opposite direction.
fn wrong(verdict: Verdict, effect: f64) -> bool {
    match verdict {
        Verdict::Faster => effect >= 1.0,
        Verdict::Slower => effect <= 1.0,
        Verdict::Same | Verdict::Undecided => false,
    }
}

/// The bench's verdict claims a difference that is not there (or the
/// wrong way).
pub fn bench_false_claim(shape: &Shape, rounds: u32, rng: &mut Rng) -> bool {
    wrong(
        one_comparison(shape, rounds, rng).outcome.verdict,
        shape.effect,
    )
}

/// The printed interval (the one beside the verdict) leaves out the true
/// ratio.
pub fn bench_interval_misses(shape: &Shape, rounds: u32, rng: &mut Rng) -> bool {
    let (_, low, high) = one_comparison(shape, rounds, rng).interval();
    !(low <= shape.effect && shape.effect <= high)
}

/// A report of 4 variants × 3 workloads × wall, user and sys, one variant
/// changed by the shape's effect (a partial null when it is not 1): any
/// claim about an unchanged variant, or the changed one called the wrong
/// way (the family-wise error).
pub fn family_false_claim(shape: &Shape, rounds: u32, rng: &mut Rng) -> bool {
    let bench = Bench {
        variants: &["base", "a", "b", "c"],
        workloads: &["w1", "w2", "w3"],
        metrics: &[Builtin::WALL, Builtin::USER, Builtin::SYS],
        rounds,
    };
    let meta = bench.meta(rng);
    let runs = bench.records(shape, rng, &[1], 1.0);
    let results = analyze(&meta, &runs);
    results.comparisons.iter().any(|c| {
        let effect = if c.variant == "a" { shape.effect } else { 1.0 };
        wrong(c.outcome.verdict, effect)
    })
}

/// A race of six candidates over the file's `rounds` repetitions (its
/// `max`), the first made faster by the shape's effect (its inverse: a
/// partial null when it is not 1), replayed from the records: a wrong
/// drop (any when all are the same; the truly fastest otherwise) or a
/// winner that is not the truly fastest.
pub fn race_error(shape: &Shape, rounds: u32, rng: &mut Rng) -> bool {
    let names = ["c1", "c2", "c3", "c4", "c5", "c6"];
    let bench = Bench {
        variants: &names,
        workloads: &["w"],
        metrics: &[Builtin::WALL],
        rounds,
    };
    let mut meta = bench.meta(rng);
    meta.race = Some(RaceMeta {
        plan: RacePlan::new(0.95, names.len(), 2, rounds, 0.02),
        budget_s: f64::from(rounds) * 60.0,
        full_rounds: rounds,
        left_out: Vec::new(),
        screen: None,
    });
    let faster = Shape {
        effect: 1.0 / shape.effect,
        ..*shape
    };
    let runs = bench.records(&faster, rng, &[0], 1.0);
    let Some(race) = analyze(&meta, &runs).race else {
        return false;
    };
    let null = (shape.effect - 1.0).abs() < 1e-12;
    let dropped = race
        .standings
        .iter()
        .any(|s| s.dropped_by.is_some() && (null || s.candidate == names[0]));
    let false_winner = race.outcome == "winner" && (null || race.survivors != [names[0]]);
    dropped || false_winner
}

/// The paired gate of `check --rev` on a bench of the tree and the same
/// built from the revision (the tree changed by the shape's effect),
/// fixed rounds or, with `budget`, looked at as `check --budget` plans
/// them; the default threshold (5% for time).
fn paired_gate(shape: &Shape, rounds: u32, rng: &mut Rng, budget: bool) -> Status {
    let plan = budget.then(|| {
        // As `check::revision::sequential` plans `--budget`.
        let min = rounds.max(3);
        Plan::new(0.95, min, (min * 10).clamp(20, 50).max(min))
    });
    let bench = Bench {
        variants: &["v", "v@rev"],
        workloads: &["w"],
        metrics: &[Builtin::WALL],
        rounds: plan.as_ref().map_or(rounds, |p| p.max),
    };
    let mut meta = bench.meta(rng);
    meta.sequential = plan.map(|plan| SequentialMeta {
        plan,
        budget_s: 120.0,
    });
    let runs = bench.records(shape, rng, &[0], 1.0);
    let results = analyze(&meta, &runs);
    let pairs = [("v".to_owned(), "v@rev".to_owned())];
    let suite = check::paired::suite(&results, &pairs, "rev", Threshold(None))
        .expect("invariant: a paired bench of 3 rounds or more gives a suite");
    suite.cases[0].status
}

/// `check --rev` fails the tree.
pub fn paired_gate_fails(shape: &Shape, rounds: u32, rng: &mut Rng) -> bool {
    paired_gate(shape, rounds, rng, false) == Status::Failed
}

/// `check --rev` passes the tree.
pub fn paired_gate_passes(shape: &Shape, rounds: u32, rng: &mut Rng) -> bool {
    paired_gate(shape, rounds, rng, false) == Status::Passed
}

/// `check --rev --budget` fails the tree.
pub fn budget_gate_fails(shape: &Shape, rounds: u32, rng: &mut Rng) -> bool {
    paired_gate(shape, rounds, rng, true) == Status::Failed
}

/// `check --rev --budget` passes the tree.
pub fn budget_gate_passes(shape: &Shape, rounds: u32, rng: &mut Rng) -> bool {
    paired_gate(shape, rounds, rng, true) == Status::Passed
}

/// Rounds in each run of the lookback gate's history.
const LOOKBACK_ROUNDS: u32 = 10;

/// The lookback gate (`check --against`): `stored` runs of one variant in
/// history, the last of them the baseline, each moved by a drift between
/// runs (lognormal, σ the shape's noise), and this run changed by the
/// shape's effect, judged by the regression suite `check` builds from them
/// (history read from `history.db` is left out: its sqlite writes cost a
/// trial a second); the default threshold.
fn lookback_gate(shape: &Shape, stored: u32, rng: &mut Rng) -> Status {
    let bench = Bench {
        variants: &["v"],
        workloads: &["w"],
        metrics: &[Builtin::WALL],
        rounds: LOOKBACK_ROUNDS,
    };
    let run = |id: u32, effect: f64, rng: &mut Rng| -> Results {
        let mut meta = bench.meta(rng);
        meta.run_id = format!("20261129-{id:06}");
        let between = (shape.cv * rng.normal()).exp() * effect;
        analyze(&meta, &bench.records(shape, rng, &[], between))
    };
    let history: Vec<Results> = (0..stored).map(|i| run(i, 1.0, rng)).collect();
    let current = run(stored, shape.effect, rng);
    let baseline = history
        .last()
        .expect("invariant: a lookback row stores runs");
    let mut notes = Vec::new();
    let suite = check::regression::suite(&current, baseline, &history, Threshold(None), &mut notes)
        .expect("invariant: runs of one experiment give a suite");
    suite.cases[0].status
}

/// `check --against` fails this run.
pub fn lookback_fails(shape: &Shape, stored: u32, rng: &mut Rng) -> bool {
    lookback_gate(shape, stored, rng) == Status::Failed
}

/// `check --against` passes this run.
pub fn lookback_passes(shape: &Shape, stored: u32, rng: &mut Rng) -> bool {
    lookback_gate(shape, stored, rng) == Status::Passed
}
