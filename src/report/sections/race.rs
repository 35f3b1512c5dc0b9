//! A race's leaderboard: who won, tied or was dropped when, against the
//! leader, and what the race cost against the full design.

use std::fmt::Write as _;

use super::race_chart;
use crate::analysis::race::{RaceResult, Standing};
use crate::analysis::Results;

/// The outcome in a sentence.
fn outcome(race: &RaceResult) -> String {
    let names = race.survivors.join(", ");
    let margin = crate::stats::tidy(race.equivalence * 100.0);
    match race.outcome.as_str() {
        "winner" => format!("{names} wins after {} rounds", race.rounds),
        "tie" => format!(
            "a tie after {} rounds: {names}, the same within ±{margin}%",
            race.rounds
        ),
        _ => format!(
            "undecided after {} rounds (the budget or the most rounds ran out): {names} left",
            race.rounds
        ),
    }
}

/// The standing's status with its reason.
fn status(s: &Standing) -> String {
    match (&s.dropped_by, &s.reason) {
        (Some(by), _) => format!("dropped: slower than {by}"),
        (None, Some(why)) => format!("{}: {why}", s.status),
        _ => s.status.clone(),
    }
}

fn interval(s: &Standing) -> String {
    s.against_leader.map_or_else(
        || "—".to_owned(),
        |i| format!("{:.3} [{:.3}, {:.3}]", i.ratio, i.low, i.high),
    )
}

fn cost(race: &RaceResult) -> String {
    let c = &race.cost;
    let share = if c.full_seconds > 0.0 {
        format!(" ({:.0}%)", 100.0 * c.seconds / c.full_seconds)
    } else {
        String::new()
    };
    let r = &race.reuse;
    let reuse = if r.candidates == 0 {
        String::new()
    } else {
        format!(
            "; {} builds for {} candidates, {} profiles trained for the {} they read",
            r.builds, r.candidates, r.trainings, r.profiles
        )
    };
    format!(
        "{} runs, {:.1} s of runs; the full design ({} rounds of every candidate): {} runs, about {:.1} s{share}{reuse}",
        c.runs, c.seconds, c.full_rounds, c.full_runs, c.full_seconds
    )
}

/// The terminal's leaderboard; empty for a run that was no race.
pub fn text(results: &Results) -> String {
    let Some(race) = &results.race else {
        return String::new();
    };
    let width = race
        .standings
        .iter()
        .map(|s| s.candidate.len())
        .max()
        .unwrap_or(9)
        .max(9);
    let mut out = format!("race: {}\n", outcome(race));
    for (k, s) in race.standings.iter().enumerate() {
        let _ = writeln!(
            out,
            "  {:>2}  {:<width$}  {:>6}  {:<26}  {}",
            k + 1,
            s.candidate,
            s.rounds,
            interval(s),
            status(s)
        );
    }
    for l in &race.left_out {
        let _ = writeln!(out, "  left out: {}: {}", l.candidate, l.reason);
    }
    let _ = writeln!(out, "cost: {}\n", cost(race));
    out
}

/// report.md's `## Race` section; empty for a run that was no race.
pub fn markdown(results: &Results) -> String {
    let Some(race) = &results.race else {
        return String::new();
    };
    let mut out = format!(
        "## Race\n\n{}.\n\n| # | Candidate | Rounds | Against the leader | Status |\n|---:|---|---:|---|---|\n",
        outcome(race)
    );
    for (k, s) in race.standings.iter().enumerate() {
        let _ = writeln!(
            out,
            "| {} | `{}` | {} | {} | {} |",
            k + 1,
            s.candidate,
            s.rounds,
            interval(s),
            status(s)
        );
    }
    if !race.left_out.is_empty() {
        out.push_str("\nLeft out:\n\n");
        for l in &race.left_out {
            let line = l.line.map(|n| format!("line {n}; ")).unwrap_or_default();
            let _ = writeln!(out, "- `{}`: {} ({line}{})", l.candidate, l.reason, l.hint);
        }
    }
    let _ = write!(out, "\nCost: {}.\n\n{}\n\n", cost(race), race.method);
    out
}

/// report.html's race section: the outcome, the leaderboard, the charts
/// ([`super::race_chart`]), the cost and the rule; nothing for a run that
/// was no race.
pub fn html(out: &mut String, results: &Results, esc: fn(&str) -> String) {
    let Some(race) = &results.race else {
        return;
    };
    let _ = writeln!(
        out,
        "<h2>Race</h2><p>{}.</p><table><tr><th>#</th><th>Candidate</th><th>Rounds</th><th>Against the leader</th><th>Status</th></tr>",
        esc(&outcome(race))
    );
    for (k, s) in race.standings.iter().enumerate() {
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td></tr>",
            k + 1,
            esc(&s.candidate),
            s.rounds,
            interval(s),
            esc(&status(s))
        );
    }
    let _ = writeln!(out, "</table>");
    race_chart::survivors(out, race, esc);
    race_chart::against_leader(out, race, esc);
    let _ = writeln!(
        out,
        "<p>Cost: {}.</p><p>{}</p>",
        esc(&cost(race)),
        esc(&race.method)
    );
}
