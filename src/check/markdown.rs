//! A check as Markdown (a CI step summary, `$GITHUB_STEP_SUMMARY`, or a
//! pull-request comment) and as text for the terminal: the verdict first,
//! then each rule's table and the rule in words.

use std::fmt::Write as _;

use super::{Case, Findings, Gate, Inconclusive, Status};

/// The outcome in one line: "passed: 4 cases" / "FAILED: 1 of 4 cases".
pub fn verdict(outcome: &Findings) -> String {
    let total: usize = outcome.suites.iter().map(|s| s.cases.len()).sum();
    let skipped = match outcome.count(Status::Skipped) {
        0 => String::new(),
        n => format!(", {n} skipped"),
    };
    let inconclusive = outcome.count(Status::Inconclusive);
    match outcome.gate() {
        Gate::Pass => format!("passed: {total} cases{skipped}"),
        Gate::Fail => format!(
            "FAILED: {} of {total} cases{}{skipped}",
            outcome.count(Status::Failed),
            match inconclusive {
                0 => String::new(),
                n => format!(", {n} inconclusive"),
            }
        ),
        Gate::Inconclusive => format!(
            "INCONCLUSIVE: {inconclusive} of {total} cases could not be decided{}{skipped}",
            match outcome.inconclusive {
                Inconclusive::Fail => "",
                Inconclusive::Pass => " (--inconclusive pass: the gate lets it go)",
            }
        ),
    }
}

fn mark(status: Status) -> &'static str {
    match status {
        Status::Passed => "✅ pass",
        Status::Failed => "❌ fail",
        Status::Inconclusive => "❔ inconclusive",
        Status::Skipped => "➖ skip",
    }
}

/// Markdown: a heading with the verdict, a table per rule, the rules, notes.
pub fn render(outcome: &Findings) -> String {
    let mut out = format!(
        "## afterburner check: {} {}\n\nRun `{}` of `{}`.\n\n",
        match outcome.gate() {
            Gate::Pass => "✅",
            Gate::Fail => "❌",
            Gate::Inconclusive => "❔",
        },
        verdict(outcome),
        outcome.run_id,
        outcome.target
    );
    for suite in &outcome.suites {
        let _ = write!(
            out,
            "### {}\n\n| Result | {} |\n|---|{}\n",
            suite.name,
            suite.columns.join(" | "),
            "---|".repeat(suite.columns.len())
        );
        for case in &suite.cases {
            let cells: Vec<String> = case.cells.iter().map(|c| cell(c)).collect();
            let _ = writeln!(out, "| {} | {} |", mark(case.status), cells.join(" | "));
        }
        let _ = write!(out, "\n{}\n\n", suite.rule);
    }
    for note in &outcome.notes {
        let _ = writeln!(out, "- {note}");
    }
    out
}

/// A table cell: a `|` would end it.
fn cell(text: &str) -> String {
    text.replace('|', "\\|")
}

/// The terminal's view: the verdict, and a line per case with its figures.
pub fn text(outcome: &Findings) -> String {
    let mut out = format!("check {}: {}\n", outcome.run_id, verdict(outcome));
    for suite in &outcome.suites {
        let _ = writeln!(out, "{}:", suite.name);
        for case in &suite.cases {
            let _ = writeln!(out, "  {:<4}  {}", word(case), case.message);
        }
    }
    for suite in &outcome.suites {
        let _ = writeln!(out, "{}", suite.rule);
    }
    for note in &outcome.notes {
        let _ = writeln!(out, "note: {note}");
    }
    out
}

fn word(case: &Case) -> &'static str {
    match case.status {
        Status::Passed => "pass",
        Status::Failed => "FAIL",
        Status::Inconclusive => "INCONCLUSIVE",
        Status::Skipped => "skip",
    }
}
