//! Query sets (`each`) as one table per metric: a row per query, a column
//! per variant with its mean, and each variant's ratio and verdict against
//! the baseline, as seeds 002 and 003 publish Q1–Q7 against builds.

use std::fmt::Write as _;

use crate::analysis::Results;
use crate::report::format::scale_for;

/// The sections of report.md for the query sets; empty without one.
pub fn markdown(results: &Results) -> String {
    let mut out = String::new();
    for (set, members) in &results.workload_sets {
        let mut metrics: Vec<(&str, &str)> = Vec::new();
        for m in results
            .measurements
            .iter()
            .filter(|m| members.contains(&m.workload))
        {
            if !metrics.iter().any(|(name, _)| *name == m.metric.name) {
                metrics.push((&m.metric.name, &m.metric.unit));
            }
        }
        if metrics.is_empty() {
            continue;
        }
        let _ = writeln!(out, "## Query set `{set}`\n");
        for (metric, unit) in metrics {
            table(&mut out, results, set, members, (metric, unit));
        }
    }
    out
}

/// One metric's table: queries × variants.
fn table(out: &mut String, results: &Results, set: &str, members: &[String], metric: (&str, &str)) {
    let (metric, unit) = metric;
    let mean = |workload: &str, variant: &str| results.mean(workload, variant, metric);
    let typical = members
        .iter()
        .filter_map(|w| mean(w, &results.baseline))
        .fold(0.0_f64, f64::max);
    let scale = scale_for(unit, typical);
    let variants: Vec<&str> = results.variants.iter().map(|v| v.name.as_str()).collect();
    let label = match scale.label(unit) {
        "" => metric.to_owned(),
        unit => format!("{metric} ({unit})"),
    };
    let _ = write!(out, "{label}, mean per query:\n\n| query |");
    for v in &variants {
        let _ = write!(out, " {v} |");
    }
    for v in variants.iter().skip(1) {
        let _ = write!(out, " {v} / {} |", results.baseline);
    }
    out.push_str("\n|---|");
    out.push_str(&"---:|".repeat(variants.len() * 2 - 1));
    out.push('\n');
    let prefix = format!("{set}-");
    for workload in members {
        let query = workload.strip_prefix(&prefix).unwrap_or(workload);
        let _ = write!(out, "| {query} |");
        for v in &variants {
            let cell = mean(workload, v).map_or_else(|| "–".to_owned(), |x| scale.show(x));
            let _ = write!(out, " {cell} |");
        }
        for v in variants.iter().skip(1) {
            let cell = results
                .comparisons
                .iter()
                .find(|c| c.workload == *workload && c.variant == *v && c.metric == metric)
                .map_or_else(
                    || "–".to_owned(),
                    |c| format!("{:.3} {}", c.outcome.ratio, c.outcome.verdict),
                );
            let _ = write!(out, " {cell} |");
        }
        out.push('\n');
    }
    out.push('\n');
}
