//! `afterburner calibrate`'s table: this machine's A/A noise, false claims,
//! intervals that held 1 and what the file's repetitions decide, with the
//! rules they follow; and the line a later report cites it by.

use std::fmt::Write as _;

use crate::runs::{Calibration, TrialCounts};

/// The calibration as text for the terminal (and `docs/measuring.md`).
pub fn render(c: &Calibration) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Calibration of `{}` on this machine ({}): `{}`'s binaries run as two variants, A and A′, {} rounds in a budget of {:.0} s; trials of the file's {} repetitions judged at {}%.",
        c.target,
        c.machine_class,
        c.baseline,
        c.rounds,
        c.budget_s,
        c.trial_rounds,
        c.confidence * 100.0
    );
    out.push('\n');
    let effects: Vec<String> = c
        .workloads
        .first()
        .map(|w| {
            w.rounds_for
                .iter()
                .map(|r| format!("{}%", r.effect_pct))
                .collect()
        })
        .unwrap_or_default();
    let mut rows = vec![header(c.trial_rounds, &effects)];
    for w in &c.workloads {
        let mut row = vec![
            w.workload.clone(),
            w.metric.clone(),
            pct(w.within_round_pct),
            format!("{} / {}", pct(w.cv_baseline_pct), pct(w.cv_twin_pct)),
            pct(w.between_trials_pct),
            counts(w.disjoint, w.disjoint.claims),
            counts(w.subsampled, w.subsampled.claims),
            counts(w.disjoint, w.disjoint.held),
            counts(w.subsampled, w.subsampled.held),
            pct(w.min_effect_pct),
        ];
        row.extend(w.rounds_for.iter().map(|r| {
            r.rounds
                .map_or_else(|| "out of reach".to_owned(), |n| n.to_string())
        }));
        rows.push(row);
    }
    out.push_str(&align(&rows));
    let _ = writeln!(
        out,
        "\nWhole A/A reports claiming any difference: {} of {} disjoint trials, {} of {} subsets (a report's stated rate is at most {:.0}%).",
        c.reports.claims,
        c.reports.trials,
        c.reports_subsampled.claims,
        c.reports_subsampled.trials,
        (1.0 - c.confidence) * 100.0
    );
    for rule in &c.rules {
        let _ = writeln!(out, "\n{rule}");
    }
    out
}

fn header(trial_rounds: u32, effects: &[String]) -> Vec<String> {
    let mut row: Vec<String> = [
        "workload",
        "metric",
        "noise in rounds",
        "CV A / A′",
        "CV between runs",
        "claims (trials)",
        "claims (subsets)",
        "held 1 (trials)",
        "held 1 (subsets)",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    row.push(format!("decides at {trial_rounds} rounds"));
    row.extend(effects.iter().map(|e| format!("rounds for {e}")));
    row
}

/// "1.23%", or – where unknown.
fn pct(value: Option<f64>) -> String {
    match value {
        Some(v) if v.is_finite() => format!("{v:.2}%"),
        _ => "–".to_owned(),
    }
}

/// "k of n" (– when there were no trials).
fn counts(t: TrialCounts, k: u32) -> String {
    if t.trials == 0 {
        "–".to_owned()
    } else {
        format!("{k} of {}", t.trials)
    }
}

/// Columns padded to their widest cell, two spaces apart.
fn align(rows: &[Vec<String>]) -> String {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|i| {
            rows.iter()
                .filter_map(|r| r.get(i))
                .map(|s| s.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for row in rows {
        let cells: Vec<String> = row
            .iter()
            .zip(&widths)
            .map(|(cell, &w)| format!("{cell:<w$}"))
            .collect();
        let _ = writeln!(out, "{}", cells.join("  ").trim_end());
    }
    out
}

/// The line a report on the same machine class cites a calibration by.
pub fn cite(c: &Calibration) -> String {
    let noise: Vec<String> = c
        .workloads
        .iter()
        .map(|w| {
            format!(
                "{} {}: noise in rounds {}, decides {} at {} rounds, A/A claims {} of {} trials",
                w.workload,
                w.metric,
                pct(w.within_round_pct),
                pct(w.min_effect_pct),
                c.trial_rounds,
                w.disjoint.claims,
                w.disjoint.trials
            )
        })
        .collect();
    format!(
        "calibrated on this machine class ({}) by `afterburner calibrate` {} ({}): {}",
        c.machine_class,
        c.run_id,
        c.captured_at,
        noise.join("; ")
    )
}
