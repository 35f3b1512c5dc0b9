//! A race (`afterburner race`) analysed from its records: each candidate's
//! score per round, the race replayed by its plan ([`crate::stats::race`]:
//! the same decisions the bench took), the standings and what the race
//! cost against the full design.

use serde::{Deserialize, Serialize};

use crate::measure::{RunKind, RunRecord};
use crate::runs::BenchMeta;
use crate::stats::race::{replay, Interval, Outcome, Race, RacePlan};
use crate::stats::tidy;

/// A race's outcome in `results.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RaceResult {
    /// `winner` (one left), `tie` (every survivor the same as the leader
    /// within `equivalence`) or `undecided` (the budget or the most rounds
    /// ran out first).
    pub outcome: String,
    /// The winner, or the tied set, or the survivors when undecided.
    pub survivors: Vec<String>,
    /// The candidate ahead at the last look.
    pub leader: Option<String>,
    /// Counted rounds the race ran.
    pub rounds: u32,
    /// The margin of "same", a fraction.
    pub equivalence: f64,
    /// Pairs of candidates, each tested at `pair_alpha` over the whole race.
    pub pairs: usize,
    pub pair_alpha: f64,
    /// Every candidate, survivors first (leader first among them), then the
    /// dropped in the order they left.
    pub standings: Vec<Standing>,
    pub cost: RaceCost,
    /// The rule that decided, in words.
    pub method: String,
}

/// One candidate of a race.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Standing {
    pub candidate: String,
    /// `winner`, `tied`, `leader`, `alive` (undecided) or `dropped`.
    pub status: String,
    /// Counted rounds it ran in the race.
    pub rounds: u32,
    /// Against the leader: at the look that dropped it, or the last look;
    /// the ratio of their time headlines, candidate over leader (for a
    /// higher-is-better headline, such as throughput, the leader's over the
    /// candidate's): above 1 is worse.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub against_leader: Option<Interval>,
    /// The leader it was decided slower than.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dropped_by: Option<String>,
}

/// What the race cost, against running every candidate for the full
/// design's rounds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RaceCost {
    /// Counted timing runs made.
    pub runs: usize,
    /// Counted timing runs of the full design (every candidate and bench
    /// workload for `full_rounds`).
    pub full_runs: usize,
    pub full_rounds: u32,
    /// The wall time of the counted runs made, in seconds.
    pub seconds: f64,
    /// The full design's, estimated from each candidate's mean run.
    pub full_seconds: f64,
}

/// The time headline of a workload: its primary metric, or wall time where
/// the primary is the instruction count (races are run on time).
fn headline(meta: &BenchMeta, workload: &str) -> Option<usize> {
    let name = meta
        .judging
        .get(workload)
        .map_or("wall", |j| j.primary.as_str());
    let name = if name == "instructions" { "wall" } else { name };
    meta.metrics.iter().position(|m| m.name == name)
}

/// Each candidate's score per counted round: the mean over the bench
/// workloads of the log of the workload's time headline (negated where
/// higher is better); `None` for a round with a workload missing or failed.
pub fn scores(meta: &BenchMeta, runs: &[RunRecord]) -> Vec<Vec<Option<f64>>> {
    let warmup = meta.warmup;
    let rounds = rounds_recorded(meta, runs) as usize;
    let headlines: Vec<(&str, usize)> = meta
        .workloads
        .iter()
        .filter_map(|w| Some((w.as_str(), headline(meta, w)?)))
        .collect();
    meta.variants
        .iter()
        .map(|v| {
            let mut sums = vec![Some(0.0_f64); rounds];
            let mut seen = vec![0_usize; rounds];
            for r in runs.iter().filter(|r| {
                r.variant == v.name && !r.warmup && r.kind == RunKind::Timing && r.success
            }) {
                let Some(&(_, m)) = headlines.iter().find(|(w, _)| *w == r.workload) else {
                    continue;
                };
                let metric = &meta.metrics[m];
                let i = r.round.saturating_sub(warmup) as usize;
                match metric.value(r).filter(|x| *x > 0.0) {
                    Some(x) => {
                        let sign = if metric.lower_is_better { 1.0 } else { -1.0 };
                        sums[i] = sums[i].map(|s| s + sign * x.ln());
                        seen[i] += 1;
                    }
                    None => sums[i] = None,
                }
            }
            sums.iter()
                .zip(&seen)
                .map(|(s, n)| s.filter(|_| *n == headlines.len()).map(|s| s / *n as f64))
                .collect()
        })
        .collect()
}

/// Counted rounds the records reach (the last one's, warmup excluded).
pub fn rounds_recorded(meta: &BenchMeta, runs: &[RunRecord]) -> u32 {
    runs.iter()
        .filter(|r| !r.warmup)
        .map(|r| r.round.saturating_sub(meta.warmup) + 1)
        .max()
        .unwrap_or(0)
}

/// The race replayed on the records, cut at `rounds` counted rounds.
pub fn so_far(meta: &BenchMeta, plan: &RacePlan, runs: &[RunRecord], rounds: u32) -> Race {
    let mut scores = scores(meta, runs);
    for s in &mut scores {
        s.truncate(rounds as usize);
    }
    replay(&scores, plan)
}

/// A race run's outcome; `None` for a bench of the full design.
pub fn race(meta: &BenchMeta, runs: &[RunRecord]) -> Option<RaceResult> {
    let plan_meta = meta.race.as_ref()?;
    let plan = &plan_meta.plan;
    let rounds = meta
        .stopped
        .as_ref()
        .map_or_else(|| rounds_recorded(meta, runs), |s| s.rounds);
    let race = so_far(meta, plan, runs, rounds);
    let name = |i: usize| meta.variants[i].name.clone();
    let leader = race.last.as_ref().map(|l| l.leader);
    let (outcome, survivors) = match &race.outcome {
        Outcome::Winner(w) => ("winner", vec![*w]),
        Outcome::Tie(set) => ("tie", set.clone()),
        Outcome::Undecided(set) => ("undecided", set.clone()),
    };
    let counted = |i: usize| {
        let mut rounds: Vec<u32> = runs
            .iter()
            .filter(|r| {
                r.variant == meta.variants[i].name && !r.warmup && r.kind == RunKind::Timing
            })
            .map(|r| r.round)
            .collect();
        rounds.sort_unstable();
        rounds.dedup();
        u32::try_from(rounds.len()).unwrap_or(u32::MAX)
    };
    let mut order = survivors.clone();
    order.sort_by_key(|i| (Some(*i) != leader, *i));
    let mut standings: Vec<Standing> = order
        .iter()
        .map(|&i| Standing {
            candidate: name(i),
            status: match (outcome, Some(i) == leader) {
                ("winner", _) => "winner",
                ("tie", _) => "tied",
                (_, true) => "leader",
                _ => "alive",
            }
            .to_owned(),
            rounds: counted(i),
            against_leader: race.last.as_ref().and_then(|l| {
                l.against_leader
                    .iter()
                    .find(|(j, _)| *j == i)
                    .map(|(_, v)| *v)
            }),
            dropped_by: None,
        })
        .collect();
    standings.extend(race.drops.iter().map(|d| Standing {
        candidate: name(d.candidate),
        status: "dropped".to_owned(),
        rounds: counted(d.candidate),
        against_leader: Some(d.interval),
        dropped_by: Some(name(d.by)),
    }));
    Some(RaceResult {
        outcome: outcome.to_owned(),
        survivors: survivors.iter().map(|&i| name(i)).collect(),
        leader: leader.map(name),
        rounds,
        equivalence: plan.equivalence,
        pairs: plan.pairs,
        pair_alpha: plan.alpha / plan.pairs as f64,
        standings,
        cost: cost(meta, runs, plan_meta.full_rounds),
        method: method(plan),
    })
}

/// The runs and seconds the race took, against the full design's.
fn cost(meta: &BenchMeta, runs: &[RunRecord], full_rounds: u32) -> RaceCost {
    let counted: Vec<&RunRecord> = runs
        .iter()
        .filter(|r| !r.warmup && r.kind == RunKind::Timing)
        .collect();
    let seconds = |r: &&RunRecord| r.wall_ns.map_or(0.0, |n| n as f64 / 1e9);
    let mut full_seconds = 0.0;
    for v in &meta.variants {
        for w in &meta.workloads {
            let walls: Vec<f64> = counted
                .iter()
                .filter(|r| r.variant == v.name && &r.workload == w)
                .map(seconds)
                .collect();
            if !walls.is_empty() {
                full_seconds +=
                    walls.iter().sum::<f64>() / walls.len() as f64 * f64::from(full_rounds);
            }
        }
    }
    RaceCost {
        runs: counted.len(),
        full_runs: meta.variants.len() * meta.workloads.len() * full_rounds as usize,
        full_rounds,
        seconds: counted.iter().map(seconds).sum(),
        full_seconds,
    }
}

/// The race's rule in words.
fn method(plan: &RacePlan) -> String {
    format!(
        "Race: each round runs the candidates still in it; a candidate's score in a round is the mean log of its workloads' time headlines, so the round's drift cancels in differences (rounds as blocks, F-Race). After each look ({}) every candidate is set against the leader: variances moderated toward the common one (Smyth 2004), repeated confidence intervals at the level Bonferroni over the {} pairs and Pocock-type spending over the looks give it ({} per pair over the race), so that every drop, every \"same\", the winner and the tie hold together at {}%. Dropped when slower than the leader; the same when within ±{}%.",
        plan.looks
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(", "),
        plan.pairs,
        tidy(plan.alpha / plan.pairs as f64),
        tidy((1.0 - plan.alpha) * 100.0),
        tidy(plan.equivalence * 100.0),
    )
}
