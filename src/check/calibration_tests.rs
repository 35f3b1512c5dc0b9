//! The gate calibrated by simulation through its own code: raw rounds
//! drawn from a known noise model, with a known true ratio, judged by
//! `check --rev`'s paired suite (fixed rounds and `--budget`) and by the
//! regression suite against stored runs, exactly as a real check judges
//! them. The fast tests assert the error rates; the long mode prints the
//! table in docs/ci-gate.md:
//!
//! ```text
//! cargo test --lib check::calibration_tests -- --ignored --nocapture
//! ```
//!
//! (`AFTERBURNER_GATE_TRIALS`, default 400, sets the trials per cell.)

use super::*;
use crate::rng::Rng;
use crate::runs::SequentialMeta;
use crate::stats::sequential::Plan;

/// The stored report every simulated run is drawn into, parsed once.
fn fixture() -> Results {
    static PARSED: std::sync::OnceLock<Results> = std::sync::OnceLock::new();
    PARSED
        .get_or_init(|| {
            serde_json::from_str(include_str!("../../tests/fixtures/results/hotpath.json")).unwrap()
        })
        .clone()
}

/// A machine's noise on a program's time: a log-normal spread per run, a
/// drift shared by the runs of one round (a busy neighbour for a second),
/// and a share of runs delayed by a burst.
#[derive(Debug, Clone, Copy)]
struct Noise {
    name: &'static str,
    /// Standard deviation of one run's log time.
    sd: f64,
    /// Standard deviation of a round's shared log drift.
    drift: f64,
    /// The share of runs a burst delays, and by what factor.
    bursts: (f64, f64),
}

const QUIET: Noise = Noise {
    name: "quiet (1% per run)",
    sd: 0.01,
    drift: 0.02,
    bursts: (0.0, 1.0),
};

const BUSY: Noise = Noise {
    name: "busy (3% per run, 1 run in 10 delayed 20%)",
    sd: 0.03,
    drift: 0.05,
    bursts: (0.1, 1.2),
};

fn run_time(rng: &mut Rng, noise: Noise) -> f64 {
    let burst = if rng.next_f64() < noise.bursts.0 {
        noise.bursts.1
    } else {
        1.0
    };
    burst * (noise.sd * rng.normal()).exp()
}

/// `samples` as the wall-time measurement of `variant` in `results`, one
/// per round from round 1.
fn set_wall(results: &mut Results, variant: &str, samples: Vec<f64>) {
    let m = results
        .measurements
        .iter_mut()
        .find(|m| {
            m.metric.is(&crate::metric::MetricId::WALL)
                && m.variant == variant
                && m.workload == "loop"
        })
        .unwrap();
    m.rounds = (1..=u32::try_from(samples.len()).unwrap()).collect();
    m.summary = crate::stats::summarize(&samples).unwrap();
    m.samples = samples;
}

/// What `check --rev` is judged with: the fixed rounds, or `--budget`.
#[derive(Debug, Clone, Copy)]
struct Gate {
    repetitions: u32,
    budget: bool,
    threshold: Option<f64>,
}

/// One `check --rev` of a tree whose time is `ratio` times the revision's:
/// the run the bench would record (pgo built from the tree, baseline from
/// the revision, in the same rounds), judged by the paired suite.
fn paired_check(rng: &mut Rng, noise: Noise, ratio: f64, gate: Gate) -> Status {
    let mut results = fixture();
    let rounds = if gate.budget {
        let (min, max) = revision::budget_rounds(gate.repetitions);
        results.sequential = Some(SequentialMeta {
            plan: Plan::new(results.confidence, min, max),
            budget_s: 120.0,
        });
        max
    } else {
        gate.repetitions
    };
    let (mut before, mut now) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        let drift = (noise.drift * rng.normal()).exp();
        before.push(drift * run_time(rng, noise));
        now.push(ratio * drift * run_time(rng, noise));
    }
    set_wall(&mut results, "baseline", before);
    set_wall(&mut results, "pgo", now);
    let pairs = [("pgo".to_owned(), "baseline".to_owned())];
    let threshold = Threshold(gate.threshold.map(Percent));
    let suite = paired::suite(&results, &pairs, "rev", threshold).unwrap();
    suite.cases[0].status
}

/// One `check --against` on time: `stored` earlier runs (the baseline the
/// last of them) whose means drift `drift` from run to run, this run
/// `ratio` times slower, judged by the regression suite at the default
/// threshold (5% for time).
fn lookback_check(rng: &mut Rng, drift: f64, ratio: f64, stored: usize) -> Status {
    let mut base = fixture();
    // Only the case judged: every other measurement would cost the
    // comparison of two runs its bootstrap.
    base.measurements
        .retain(|m| m.metric.is(&crate::metric::MetricId::WALL) && m.variant == "pgo");
    let mean_of = |rng: &mut Rng, factor: f64, id: String| {
        let mut r = base.clone();
        r.run_id = id;
        let f = factor * (drift * rng.normal()).exp();
        set_wall(&mut r, "pgo", vec![f; 3]);
        r
    };
    let history: Vec<Results> = (0..stored)
        .map(|i| mean_of(rng, 1.0, format!("run-{i:02}")))
        .collect();
    let baseline = history.last().unwrap().clone();
    let current = mean_of(rng, ratio, "run-99".to_owned());
    let suite = regression::suite(
        &current,
        &baseline,
        &history,
        Threshold(None),
        &mut Vec::new(),
    )
    .unwrap();
    suite.cases[0].status
}

/// Passed, failed and inconclusive of `trials` checks.
fn tally(trials: usize, mut check: impl FnMut() -> Status) -> [usize; 3] {
    let mut counts = [0; 3];
    for _ in 0..trials {
        match check() {
            Status::Passed => counts[0] += 1,
            Status::Failed => counts[1] += 1,
            _ => counts[2] += 1,
        }
    }
    counts
}

/// Issue 47's case through `check --rev`'s own code: a true 7% regression
/// at the 5% default is passed in at most α/2 of checks (2.5% of 200 is
/// 5; 2 Monte Carlo standard errors 4.4), at 3 and 5 fixed rounds and
/// under `--budget`, beside a busy machine's noise too; a doubling fails.
#[test]
#[ignore = "long (400 checks a case, minutes in a debug build): the conformance suite's \"paired gate passes the tree\" rows hold the same claim in cargo test"]
fn the_paired_gate_passes_a_regression_beyond_the_threshold_at_most_half_alpha() {
    let mut rng = Rng::new(47);
    for noise in [QUIET, BUSY] {
        for (repetitions, budget) in [(3, false), (5, false), (3, true)] {
            let gate = Gate {
                repetitions,
                budget,
                threshold: None,
            };
            let [passed, _, _] = tally(400, || paired_check(&mut rng, noise, 1.07, gate));
            assert!(
                passed <= 16,
                "{passed} of 400 passed ×1.07: {gate:?}, {noise:?}"
            );
        }
    }
    let gate = Gate {
        repetitions: 5,
        budget: false,
        threshold: None,
    };
    let [_, failed, _] = tally(50, || paired_check(&mut rng, QUIET, 2.0, gate));
    assert_eq!(failed, 50);
}

/// Against stored runs: with fewer than six an unchanged program never
/// passes; with ten, it mostly does on a 1% drift between runs; a true 7%
/// regression passes in at most α/2 (+ 2 standard errors: 9 of 200) with
/// 6 to 20.
#[test]
fn the_lookback_gate_passes_on_six_runs_and_evidence_only() {
    let mut rng = Rng::new(48);
    let [passed, _, _] = tally(200, || lookback_check(&mut rng, 0.01, 1.0, 5));
    assert_eq!(passed, 0);
    let [passed, _, _] = tally(200, || lookback_check(&mut rng, 0.01, 1.0, 10));
    assert!(passed >= 150, "{passed} of 200 A/A passed with 10 runs");
    for stored in [6, 20] {
        let [passed, _, _] = tally(400, || lookback_check(&mut rng, 0.02, 1.07, stored));
        assert!(
            passed <= 16,
            "{passed} of 400 passed ×1.07 on {stored} runs"
        );
    }
}

fn percent(counts: [usize; 3], trials: usize) -> String {
    let p = |n: usize| 100.0 * n as f64 / trials as f64;
    format!(
        "{:.1} / {:.1} / {:.1}",
        p(counts[0]),
        p(counts[1]),
        p(counts[2])
    )
}

/// The long mode: the calibration tables of docs/ci-gate.md, passed /
/// failed / inconclusive in percent of the trials per cell.
#[test]
#[ignore = "long: prints the gate's calibration table for docs/ci-gate.md"]
fn print_the_calibration_table() {
    let trials: usize = std::env::var("AFTERBURNER_GATE_TRIALS")
        .ok()
        .and_then(|t| t.parse().ok())
        .unwrap_or(400);
    let mut rng = Rng::new(2026);
    println!("`check --rev`, {trials} trials per cell: passed / failed / inconclusive, %");
    println!("| noise | true ratio | repetitions | 5% (default), fixed | `--budget`, 5% | `--budget --threshold 2%` | `--threshold 2%`, fixed |");
    println!("|---|---:|---:|---:|---:|---:|---:|");
    for noise in [QUIET, BUSY] {
        for ratio in [1.0, 1.03, 1.05, 1.07, 2.0] {
            for repetitions in [3, 5, 10] {
                let mut cells = Vec::new();
                for (budget, threshold) in [
                    (false, None),
                    (true, None),
                    (true, Some(2.0)),
                    (false, Some(2.0)),
                ] {
                    let gate = Gate {
                        repetitions,
                        budget,
                        threshold,
                    };
                    let counts = tally(trials, || paired_check(&mut rng, noise, ratio, gate));
                    cells.push(percent(counts, trials));
                }
                println!(
                    "| {} | {ratio:.2} | {repetitions} | {} |",
                    noise.name,
                    cells.join(" | ")
                );
            }
        }
    }
    println!();
    println!("`check --against` on time (5% default), {trials} trials per cell: passed / failed / inconclusive, %");
    println!("| drift between runs | true ratio | 3 stored runs | 5 | 6 | 10 | 20 |");
    println!("|---:|---:|---:|---:|---:|---:|---:|");
    for drift in [0.01, 0.02] {
        for ratio in [1.0, 1.03, 1.05, 1.07, 2.0] {
            let cells: Vec<String> = [3, 5, 6, 10, 20]
                .iter()
                .map(|&stored| {
                    percent(
                        tally(trials, || lookback_check(&mut rng, drift, ratio, stored)),
                        trials,
                    )
                })
                .collect();
            println!(
                "| {:.0}% | {ratio:.2} | {} |",
                drift * 100.0,
                cells.join(" | ")
            );
        }
    }
}
