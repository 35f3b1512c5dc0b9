//! A race (`afterburner race`) analysed from its records: each candidate's
//! score per round, the race replayed by its plan ([`crate::stats::race`]:
//! the same decisions the bench took), the standings and what the race
//! cost against the full design.

use serde::{Deserialize, Serialize};

use crate::measure::{RunKind, RunRecord};
use crate::metric::MetricId;
use crate::runs::BenchMeta;
use crate::stats::race::{replay_among, Interval, Race, RaceEnd, RacePlan, Screened};
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
    /// Candidates still in the race after each counted round, the first
    /// round's first (`rounds` of them): a drop counts from the round of
    /// the look that decided it. Empty in a results.json from before it.
    #[serde(default)]
    pub alive_by_round: Vec<u32>,
    /// The counted rounds after which the race looked, ascending, up to
    /// `rounds` (the plan's looks it reached). Empty in a results.json from
    /// before it.
    #[serde(default)]
    pub looks: Vec<u32>,
    /// The margin of "same", a fraction.
    pub equivalence: f64,
    /// Pairs of candidates, each tested at `pair_alpha` over the whole race:
    /// those of the candidates that entered the timed race (all but the
    /// screened).
    pub pairs: usize,
    pub pair_alpha: f64,
    /// Every candidate, survivors first (leader first among them), then the
    /// screened, then the dropped in the order they left.
    pub standings: Vec<Standing>,
    pub cost: RaceCost,
    /// What the candidates' builds and trainings shared (absent in runs
    /// recorded before it was).
    #[serde(default)]
    pub reuse: RaceReuse,
    /// Combinations of `[race]`'s axes that were not candidates: they
    /// cannot be built (a technique their compiler lacks, …), with why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub left_out: Vec<crate::experiment::LeftOut>,
    /// The rule that decided, in words.
    pub method: String,
}

/// One candidate of a race.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Standing {
    pub candidate: String,
    /// `winner`, `tied`, `leader`, `alive` (undecided), `dropped` or
    /// `screened` (by the work screen, before the first look: no time
    /// interval, no part in the pairs).
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
    /// The counted rounds of the look that dropped it (a baseline kept with
    /// `keep_baseline` runs on after it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dropped_at: Option<u32>,
    /// Why the work screen put it out (status `screened`), in words: "2.9×
    /// the fewest instructions (callgrind)".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Its instructions over the fewest of any candidate (status
    /// `screened`), each summed over the bench workloads counted in the
    /// first counted round; unitless.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions_ratio: Option<f64>,
}

/// What the candidates' builds and profiles shared: a candidate that
/// differs from an earlier one only in how it runs runs its binaries, and
/// a first training round is trained once for the stacks that instrument
/// alike (each candidate's `build_shared_from` and profiles' `shared_from`
/// say whose).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RaceReuse {
    pub candidates: usize,
    /// Final builds made for them (the others run an earlier one's).
    pub builds: usize,
    /// Profiles their final builds read, one per training round.
    pub profiles: usize,
    /// Of them, trained here (the others shared).
    pub trainings: usize,
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
    let id = meta
        .judging
        .get(workload)
        .map_or(MetricId::WALL, |j| MetricId::parse(&j.primary));
    let id = if id == MetricId::INSTRUCTIONS {
        MetricId::WALL
    } else {
        id
    };
    meta.metrics.iter().position(|m| m.is(&id))
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

/// Each candidate's work for the screen: its instructions in the first
/// counted round, summed over the bench workloads counted there (a
/// service's per request where its load's window was counted); `None`
/// where one of them has no count of it.
pub fn work(meta: &BenchMeta, runs: &[RunRecord]) -> Vec<Option<f64>> {
    let value = |r: &RunRecord| {
        r.instructions
            .map(|n| n as f64)
            .or_else(|| MetricId::InstructionsPerRequest.value(r))
    };
    let first: Vec<&RunRecord> = runs
        .iter()
        .filter(|r| r.kind == RunKind::Instructions && r.round == meta.warmup && !r.warmup)
        .collect();
    let counted: Vec<&String> = meta
        .workloads
        .iter()
        .filter(|w| {
            first
                .iter()
                .any(|r| &r.workload == *w && value(r).is_some())
        })
        .collect();
    meta.variants
        .iter()
        .map(|v| {
            counted
                .iter()
                .map(|w| {
                    first
                        .iter()
                        .find(|r| r.variant == v.name && &r.workload == *w && r.success)
                        .and_then(|r| value(r))
                })
                .sum::<Option<f64>>()
                .filter(|_| !counted.is_empty())
        })
        .collect()
}

/// The work screen on a race's records (`[race] screen`): who it put out
/// after the first counted round, and the plan of the timed race among the
/// rest (its pairs theirs: [`crate::stats::race`] says why that holds).
pub fn screen(meta: &BenchMeta, plan: &RacePlan, runs: &[RunRecord]) -> (Vec<Screened>, RacePlan) {
    let Some(screen) = meta.race.as_ref().and_then(|r| r.screen) else {
        return (Vec::new(), plan.clone());
    };
    let screened = screen.apply(&work(meta, runs));
    let timed = plan.among(meta.variants.len() - screened.len());
    (screened, timed)
}

/// The race replayed on the records, cut at `rounds` counted rounds: the
/// work screen first, where there is one, then the looks among the rest.
pub fn so_far(meta: &BenchMeta, plan: &RacePlan, runs: &[RunRecord], rounds: u32) -> Race {
    let mut scores = scores(meta, runs);
    for s in &mut scores {
        s.truncate(rounds as usize);
    }
    let (screened, timed) = if rounds == 0 {
        // The screen reads the first counted round, once it is done.
        (Vec::new(), plan.clone())
    } else {
        screen(meta, plan, runs)
    };
    let entering: Vec<usize> = (0..scores.len())
        .filter(|i| !screened.iter().any(|s| s.candidate == *i))
        .collect();
    Race {
        screened,
        ..replay_among(&scores, &timed, &entering)
    }
}

/// A race run's outcome; `None` for a bench of the full design.
pub fn race(meta: &BenchMeta, runs: &[RunRecord]) -> Option<RaceResult> {
    let plan_meta = meta.race.as_ref()?;
    let rounds = meta
        .stopped
        .as_ref()
        .map_or_else(|| rounds_recorded(meta, runs), |s| s.rounds);
    let race = so_far(meta, &plan_meta.plan, runs, rounds);
    // The plan the looks judged by: among the candidates that entered.
    let timed = screen(meta, &plan_meta.plan, runs).1;
    let plan = &timed;
    let name = |i: usize| meta.variants[i].name.clone();
    let leader = race.last.as_ref().map(|l| l.leader);
    let (outcome, survivors) = match &race.outcome {
        RaceEnd::Winner(w) => ("winner", vec![*w]),
        RaceEnd::Tie(set) => ("tie", set.clone()),
        RaceEnd::Undecided(set) => ("undecided", set.clone()),
    };
    let standings = standings(meta, runs, &race, (outcome, &survivors, leader));
    let alive_by_round = (1..=rounds)
        .map(|r| {
            // The screen decides after the first counted round.
            let gone = race.drops.iter().filter(|d| d.rounds <= r).count() + race.screened.len();
            u32::try_from(meta.variants.len().saturating_sub(gone)).unwrap_or(u32::MAX)
        })
        .collect();
    Some(RaceResult {
        outcome: outcome.to_owned(),
        survivors: survivors.iter().map(|&i| name(i)).collect(),
        leader: leader.map(name),
        rounds,
        alive_by_round,
        looks: plan
            .looks
            .iter()
            .copied()
            .filter(|&l| l <= rounds)
            .collect(),
        equivalence: plan.equivalence,
        pairs: plan.pairs,
        pair_alpha: plan.alpha / plan.pairs as f64,
        standings,
        cost: cost(meta, runs, plan_meta.full_rounds),
        reuse: RaceReuse {
            candidates: meta.variants.len(),
            builds: meta
                .variants
                .iter()
                .filter(|v| v.build_shared_from.is_none())
                .count(),
            profiles: meta.variants.iter().map(|v| v.profiles.len()).sum(),
            trainings: meta
                .variants
                .iter()
                .flat_map(|v| &v.profiles)
                .filter(|p| p.shared_from.is_none())
                .count(),
        },
        left_out: plan_meta.left_out.clone(),
        method: method(plan, plan_meta.screen.map(|s| (s, meta))),
    })
}

/// Every candidate's standing: the survivors (the leader first), the
/// screened, then the dropped in the order they left.
fn standings(
    meta: &BenchMeta,
    runs: &[RunRecord],
    race: &Race,
    (outcome, survivors, leader): (&str, &[usize], Option<usize>),
) -> Vec<Standing> {
    let name = |i: usize| meta.variants[i].name.clone();
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
    let mut order = survivors.to_vec();
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
            dropped_at: None,
            reason: None,
            instructions_ratio: None,
        })
        .collect();
    standings.extend(race.screened.iter().map(|s| Standing {
        candidate: name(s.candidate),
        status: "screened".to_owned(),
        rounds: counted(s.candidate),
        against_leader: None,
        dropped_by: None,
        reason: Some(format!(
            "{:.1}× the fewest instructions ({})",
            s.ratio,
            meta.instruction_counter.name()
        )),
        instructions_ratio: Some(s.ratio),
        dropped_at: None,
    }));
    standings.extend(race.drops.iter().map(|d| Standing {
        candidate: name(d.candidate),
        status: "dropped".to_owned(),
        rounds: counted(d.candidate),
        against_leader: Some(d.interval),
        dropped_by: Some(name(d.by)),
        dropped_at: Some(d.rounds),
        reason: None,
        instructions_ratio: None,
    }));
    standings
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

/// The race's rule in words, and its work screen's where it has one.
fn method(plan: &RacePlan, screen: Option<(crate::stats::race::Screen, &BenchMeta)>) -> String {
    let screen = screen.map_or_else(String::new, |(s, meta)| {
        format!(
            " Before the first look, the work screen: a candidate whose instructions in the first counted round ({}, summed over the bench workloads counted) are more than {}× the fewest is screened out, on a count and not a time, and enters no time comparison (the pairs are those of the candidates that entered); two at least race on, so the screen never picks the winner.",
            meta.instruction_counter.name(),
            tidy(1.0 + s.margin)
        )
    });
    let timed = format!(
        "Race: each round runs the candidates still in it; a candidate's score in a round is the mean log of its workloads' time headlines, so the round's drift cancels in differences (rounds as blocks, F-Race). After each look ({}) every candidate is set against the leader by the pair's own paired t (each pair its own variance, never the others'), repeated confidence intervals at the level Bonferroni over the {} pairs and Pocock-type spending over the looks give it ({} per pair over the race), so that every drop, every \"same\", the winner and the tie hold together at {}%. Dropped when slower than the leader; the same when within ±{}%.",
        plan.looks
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(", "),
        plan.pairs,
        tidy(plan.alpha / plan.pairs as f64),
        tidy((1.0 - plan.alpha) * 100.0),
        tidy(plan.equivalence * 100.0),
    );
    timed + &screen
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::{InstructionCounter, Metric};
    use crate::metric::Builtin;
    use crate::runs::RaceMeta;
    use crate::stats::race::Screen;

    fn record(round: u32, variant: &str, kind: RunKind, value: u64) -> RunRecord {
        RunRecord {
            round,
            warmup: false,
            position: 0,
            variant: variant.to_owned(),
            workload: "w".to_owned(),
            kind,
            started_unix_ms: 0,
            success: true,
            exit: "exit code 0".to_owned(),
            wall_ns: (kind == RunKind::Timing).then_some(value),
            user_ns: None,
            sys_ns: None,
            max_rss_kib: None,
            instructions: (kind == RunKind::Instructions).then_some(value),
            instruction_source: None,
            figures: std::collections::BTreeMap::new(),
            error: None,
            stdout_log: std::path::PathBuf::new(),
            stderr_log: std::path::PathBuf::new(),
        }
    }

    /// Four candidates, `c` with 2.9 times the fewest instructions in the
    /// first counted round: screened at once, before any look, the timed
    /// race among the other three (3 pairs, not 6); not before that round
    /// is whole (a resume replays to the round before the last recorded).
    #[test]
    fn the_screen_puts_a_candidate_out_of_the_timed_race_and_its_pairs() {
        let names = ["a", "b", "c", "d"];
        let mut meta = BenchMeta::for_tests(
            &names,
            &["w"],
            10,
            vec![
                Metric::builtin(Builtin::WALL, InstructionCounter::Callgrind),
                Metric::builtin(Builtin::INSTRUCTIONS, InstructionCounter::Callgrind),
            ],
        );
        let plan = RacePlan::new(0.95, 4, 2, 10, 0.02);
        meta.race = Some(RaceMeta {
            plan: plan.clone(),
            budget_s: 60.0,
            full_rounds: 10,
            screen: Some(Screen { margin: 0.3 }),
            left_out: Vec::new(),
        });
        let mut runs: Vec<RunRecord> = names
            .iter()
            .zip([1_000, 1_100, 2_900, 1_000])
            .map(|(v, n)| record(0, v, RunKind::Instructions, n))
            .collect();
        for round in 0..2 {
            for (k, v) in names.iter().enumerate() {
                runs.push(record(
                    round,
                    v,
                    RunKind::Timing,
                    1_000_000 + 1_000 * k as u64,
                ));
            }
        }
        assert_eq!(
            work(&meta, &runs),
            [Some(1e3), Some(1.1e3), Some(2.9e3), Some(1e3)]
        );
        let race = so_far(&meta, &plan, &runs, 1);
        let out: Vec<usize> = race.out().collect();
        assert_eq!(out, [2]);
        assert!((race.screened[0].ratio - 2.9).abs() < 1e-12);
        assert!(so_far(&meta, &plan, &runs, 0).screened.is_empty());
        let result = super::race(&meta, &runs).unwrap();
        assert_eq!(result.pairs, 3);
        let c = result
            .standings
            .iter()
            .find(|s| s.candidate == "c")
            .unwrap();
        assert_eq!(c.status, "screened");
        assert_eq!(
            c.reason.as_deref(),
            Some("2.9× the fewest instructions (callgrind)")
        );
        assert!(c.against_leader.is_none() && c.dropped_by.is_none());
        assert!(!result.survivors.contains(&"c".to_owned()));
    }
}
