//! `afterburner race`: each round runs the candidates still in the race
//! (and the baseline, the report's reference, always); after each of the
//! plan's looks the race is replayed on the records so far
//! ([`crate::stats::race::replay`]), so a resumed race drops exactly who
//! the first one did.

use crate::experiment::Experiment;
use crate::measure::{Metric, RunKind, RunRecord};
use crate::stats::race::{replay, Outcome, Race, RacePlan};

/// Each candidate's score per counted round: the mean over the bench
/// workloads of the log of the workload's headline (its primary metric,
/// negated where higher is better); `None` for a round with a workload
/// missing or failed.
pub fn scores(e: &Experiment, metrics: &[Metric], runs: &[RunRecord]) -> Vec<Vec<Option<f64>>> {
    let warmup = e.bench.warmup;
    let rounds = runs
        .iter()
        .filter(|r| !r.warmup)
        .map(|r| r.round.saturating_sub(warmup) as usize + 1)
        .max()
        .unwrap_or(0);
    let headlines: Vec<(&str, &Metric)> = e
        .workloads
        .iter()
        .filter(|w| w.role.benches())
        .filter_map(|w| {
            Some((
                w.name.as_str(),
                super::sequential::primary_metric(w, metrics)?,
            ))
        })
        .collect();
    e.variants
        .iter()
        .map(|v| {
            let mut sums = vec![Some(0.0_f64); rounds];
            let mut seen = vec![0_usize; rounds];
            for r in runs.iter().filter(|r| {
                r.variant == v.name && !r.warmup && r.kind == RunKind::Timing && r.success
            }) {
                let Some((_, metric)) = headlines.iter().find(|(w, _)| *w == r.workload) else {
                    continue;
                };
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

/// The race replayed on the records so far, cut at `rounds` counted rounds.
pub fn so_far(
    e: &Experiment,
    metrics: &[Metric],
    plan: &RacePlan,
    runs: &[RunRecord],
    rounds: u32,
) -> Race {
    let mut scores = scores(e, metrics, runs);
    for s in &mut scores {
        s.truncate(rounds as usize);
    }
    replay(&scores, plan)
}

/// A look in a line: who is ahead, who dropped, what is left.
pub fn describe(e: &Experiment, race: &Race) -> String {
    use std::fmt::Write as _;
    let name = |i: usize| e.variants[i].name.as_str();
    let names = |set: &[usize]| set.iter().map(|&i| name(i)).collect::<Vec<_>>().join(", ");
    let mut line = format!("race after {} rounds:", race.rounds);
    if let Some(look) = &race.last {
        let _ = write!(line, " {} leads", name(look.leader));
    }
    for d in race.drops.iter().filter(|d| d.rounds == race.rounds) {
        let _ = write!(
            line,
            "; {} dropped ({:.3}× {} [{:.3}, {:.3}])",
            name(d.candidate),
            d.interval.ratio,
            name(d.by),
            d.interval.low,
            d.interval.high
        );
    }
    let _ = match &race.outcome {
        Outcome::Winner(w) => write!(line, "; {} wins", name(*w)),
        Outcome::Tie(tied) => write!(
            line,
            "; a tie: {} the same within ±{}%",
            names(tied),
            (100.0 * e.race.equivalence * 1e6).round() / 1e6
        ),
        Outcome::Undecided(alive) => write!(line, "; {} left", names(alive)),
    };
    line
}
