//! `afterburner race`'s looks in the terminal. Each round runs the
//! candidates still in the race, the baseline among them only while it is
//! in it; after each of the plan's looks the race is replayed on the
//! records so far ([`crate::analysis::race::so_far`]), so a resumed race
//! drops exactly who the first one did.

use crate::experiment::Experiment;
use crate::measure::InstructionCounter;
use crate::stats::race::{Race, RaceEnd};

/// The work screen in a line: who it put out, and who races on time.
pub fn screened(e: &Experiment, race: &Race, counter: InstructionCounter) -> String {
    let name = |i: usize| e.variants[i].name.as_str();
    let out: Vec<String> = race
        .screened
        .iter()
        .map(|s| {
            format!(
                "{} screened ({:.1}× the fewest instructions, {})",
                name(s.candidate),
                s.ratio,
                counter.name()
            )
        })
        .collect();
    let racing: Vec<&str> = (0..e.variants.len())
        .filter(|i| !race.screened.iter().any(|s| s.candidate == *i))
        .map(name)
        .collect();
    format!(
        "race screen after 1 round: {}; {} race on time",
        if out.is_empty() {
            "none screened".to_owned()
        } else {
            out.join("; ")
        },
        racing.join(", ")
    )
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
        RaceEnd::Winner(w) => write!(line, "; {} wins", name(*w)),
        RaceEnd::Tie(tied) => write!(
            line,
            "; a tie: {} the same within ±{}%",
            names(tied),
            crate::stats::tidy(100.0 * e.race.equivalence)
        ),
        RaceEnd::Undecided(alive) => write!(line, "; {} left", names(alive)),
    };
    line
}
