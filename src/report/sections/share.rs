//! The "Share of a reference's gain" section of report.md and the terminal:
//! each variant's share of the reference's gain on each workload's headline
//! metric and the instructions beside it ([`crate::analysis::share`]
//! computes them).

use std::fmt::Write as _;

use crate::analysis::headline::counts_work;
use crate::analysis::results::{GainShares, ShareEntry};
use crate::analysis::Results;

/// The rows a report shows: the headline metric and the work beside it.
fn shown(shares: &GainShares) -> impl Iterator<Item = &ShareEntry> {
    shares
        .shares
        .iter()
        .filter(|s| s.primary || counts_work(&s.metric))
}

/// A share as a percentage: "85%", "-12%" (never "-0%").
fn percent(x: f64) -> String {
    let rounded = (x * 100.0).round();
    format!("{}%", if rounded == 0.0 { 0.0 } else { rounded })
}

/// The share and interval cells: "85%" and "71% to 97%"; no number where
/// the interval is unbounded, since the reference's own gain is then not
/// established and a share of it means nothing.
fn cells(s: &ShareEntry, reference: &str) -> (String, String) {
    match (s.share, s.ci_low, s.ci_high) {
        (Some(share), Some(low), Some(high)) => (
            percent(share),
            format!("{} to {}", percent(low), percent(high)),
        ),
        _ => (
            "–".to_owned(),
            format!("none: `{reference}`'s own gain is not significant"),
        ),
    }
}

/// The section of report.md: a table per workload.
pub fn markdown(results: &Results) -> String {
    let Some(shares) = &results.gain_shares else {
        return String::new();
    };
    let reference = &shares.reference;
    let mut out = format!(
        "## Share of `{reference}`'s gain\n\nHow much of `{reference}`'s gain over `{}` each other variant reaches, on each workload's headline metric and the instructions beside it (results.json's `gain_shares` has every judged metric).\n\n",
        results.baseline
    );
    let mut workload = "";
    for s in shown(shares) {
        if s.workload != workload {
            workload = &s.workload;
            let _ = writeln!(
                out,
                "{}### Workload `{workload}`\n\n| Variant | Metric | Share | {:.0}% interval |\n|---|---|---:|---|",
                if out.ends_with("|\n") { "\n" } else { "" },
                results.confidence * 100.0
            );
        }
        let (share, interval) = cells(s, reference);
        let _ = writeln!(
            out,
            "| `{}` | {} | {share} | {interval} |",
            s.variant, s.metric
        );
    }
    let _ = writeln!(out, "\n{}\n", shares.rule);
    out
}

/// The lines of the terminal summary.
pub fn text(results: &Results) -> String {
    let Some(shares) = &results.gain_shares else {
        return String::new();
    };
    let rows: Vec<&ShareEntry> = shown(shares).collect();
    let width = |f: &dyn Fn(&ShareEntry) -> usize| rows.iter().map(|s| f(s)).max().unwrap_or(0);
    let (w, m, v) = (
        width(&|s| s.workload.len()),
        width(&|s| s.metric.len()),
        width(&|s| s.variant.len()),
    );
    let mut out = format!(
        "\nshare of `{}`'s gain over `{}` ({:.0}% Fieller interval):\n",
        shares.reference,
        results.baseline,
        results.confidence * 100.0
    );
    for s in rows {
        let (share, interval) = cells(s, &shares.reference);
        let _ = writeln!(
            out,
            "  {:<w$}  {:<m$}  {:<v$}  {share:>5}  {interval}",
            s.workload, s.metric, s.variant,
        );
    }
    out
}
