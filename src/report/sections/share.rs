//! The "Share of a reference's gain" section of report.md and the terminal:
//! each variant's share of the reference's gain on each workload's headline
//! metric and the instructions beside it, and a variant with several
//! recordings across them ([`crate::analysis::share`] computes them).

use std::fmt::Write as _;

use crate::analysis::headline::counts_work;
use crate::analysis::results::{GainShares, RecordedShare, ShareEntry};
use crate::analysis::Results;

/// The rows a report shows: the headline metric and the work beside it.
fn shown(shares: &GainShares) -> impl Iterator<Item = &ShareEntry> {
    shares
        .shares
        .iter()
        .filter(|s| s.primary || counts_work(&s.metric))
}

fn shown_recorded(shares: &GainShares) -> impl Iterator<Item = &RecordedShare> {
    shares
        .across_recordings
        .iter()
        .filter(|s| s.primary || counts_work(&s.metric))
}

/// A share as a percentage: "85%", "-12%" (never "-0%").
pub fn percent(x: f64) -> String {
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

/// The base a section names: the run's baseline where the shares predate
/// `[[report.gain]]`.
pub fn base<'a>(results: &'a Results, shares: &'a GainShares) -> &'a str {
    if shares.base.is_empty() {
        &results.baseline
    } else {
        &shares.base
    }
}

/// The section of report.md: per reference, a table per workload.
pub fn markdown(results: &Results) -> String {
    results
        .gain_shares
        .iter()
        .map(|shares| markdown_one(results, shares))
        .collect()
}

fn markdown_one(results: &Results, shares: &GainShares) -> String {
    let reference = &shares.reference;
    let confidence = results.confidence * 100.0;
    let mut out = format!(
        "## Share of `{reference}`'s gain\n\nHow much of `{reference}`'s gain over `{}` each other variant reaches, on each workload's headline metric and the instructions beside it (results.json's `gain_shares` has every judged metric).\n\n",
        base(results, shares)
    );
    let mut workload = "";
    for s in shown(shares) {
        if s.workload != workload {
            workload = &s.workload;
            let _ = writeln!(
                out,
                "{}### Workload `{workload}`\n\n| Variant | Metric | Share | {confidence:.0}% interval |\n|---|---|---:|---|",
                if out.ends_with("|\n") { "\n" } else { "" },
            );
        }
        let (share, interval) = cells(s, reference);
        let _ = writeln!(
            out,
            "| `{}` | {} | {share} | {interval} |",
            s.variant, s.metric
        );
    }
    let recorded: Vec<&RecordedShare> = shown_recorded(shares).collect();
    if !recorded.is_empty() {
        let _ = writeln!(
            out,
            "\n### Across recordings\n\n| Workload | Variant | Metric | Mean share | {confidence:.0}% interval across recordings | Each recording |\n|---|---|---|---:|---|---|"
        );
        for s in recorded {
            let each: Vec<String> = s.shares.iter().map(|x| percent(*x)).collect();
            let _ = writeln!(
                out,
                "| `{}` | `{}` | {} | {} | {} to {} | {} |",
                s.workload,
                s.variant,
                s.metric,
                percent(s.share),
                percent(s.ci_low),
                percent(s.ci_high),
                each.join(", ")
            );
        }
    }
    let _ = writeln!(out, "\n{}\n", shares.rule);
    out
}

/// The lines of the terminal summary.
pub fn text(results: &Results) -> String {
    results
        .gain_shares
        .iter()
        .map(|shares| text_one(results, shares))
        .collect()
}

fn text_one(results: &Results, shares: &GainShares) -> String {
    let rows: Vec<&ShareEntry> = shown(shares).collect();
    let recorded: Vec<&RecordedShare> = shown_recorded(shares).collect();
    let width = |f: &dyn Fn(&ShareEntry) -> usize| rows.iter().map(|s| f(s)).max().unwrap_or(0);
    let (w, m, v) = (
        width(&|s| s.workload.len()),
        width(&|s| s.metric.len()),
        width(&|s| s.variant.len()),
    );
    let mut out = format!(
        "\nshare of `{}`'s gain over `{}` ({:.0}% Fieller interval):\n",
        shares.reference,
        base(results, shares),
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
    for s in recorded {
        let _ = writeln!(
            out,
            "  {:<w$}  {:<m$}  {:<v$}  {:>5}  {} to {} across {} recordings",
            s.workload,
            s.metric,
            s.variant,
            percent(s.share),
            percent(s.ci_low),
            percent(s.ci_high),
            s.shares.len(),
        );
    }
    out
}
