//! The headline: per workload and variant, the one metric that answers
//! "is it faster?", its ratio, interval and verdict, before any detail.
//! The primary metric is the quietest that fits the workload: instructions
//! where counted (a fixed amount of work), else a service's instructions
//! per request over a load's window; for a load, the highest rate meeting the SLA (sla), p99
//! (a fixed-rate load, whose throughput is the rate asked), or throughput
//! (closed); for a command, wall time.

use std::fmt::Write as _;

use super::format::improvement;
use super::results::ComparisonEntry;
use super::Results;
use crate::runs::StopReason;

/// One headline row: a comparison of a workload's primary metric.
pub struct Row<'a> {
    pub workload: &'a str,
    pub comparison: &'a ComparisonEntry,
}

/// The primary metric of `workload` in these results.
fn primary<'a>(results: &'a Results, workload: &str) -> Option<&'a str> {
    let has = |name: &str| {
        results
            .comparisons
            .iter()
            .any(|c| c.workload == workload && c.metric == name)
    };
    let paced = results.loads.iter().any(|l| {
        l.workload == workload
            && l.series
                .iter()
                .any(|s| s.requested_rps.is_some_and(|r| r > 0.0))
    });
    // A figure the experiment declared primary comes first.
    let declared = results
        .measurements
        .iter()
        .find(|m| m.workload == workload && m.metric.primary && has(&m.metric.name));
    if let Some(m) = declared {
        return Some(m.metric.name.as_str());
    }
    let mut order = vec!["instructions", "instructions_per_request", "sla_rate"];
    order.extend(if paced {
        ["p99", "throughput"]
    } else {
        ["throughput", "p99"]
    });
    order.push("wall");
    if let Some(found) = order.into_iter().find(|m| has(m)) {
        return results
            .comparisons
            .iter()
            .find(|c| c.workload == workload && c.metric == found)
            .map(|c| c.metric.as_str());
    }
    results
        .comparisons
        .iter()
        .find(|c| c.workload == workload)
        .map(|c| c.metric.as_str())
}

/// The headline rows, workloads in results order.
pub fn rows(results: &Results) -> Vec<Row<'_>> {
    let mut workloads: Vec<&str> = Vec::new();
    for c in &results.comparisons {
        if !workloads.contains(&c.workload.as_str()) {
            workloads.push(&c.workload);
        }
    }
    let mut out = Vec::new();
    for workload in workloads {
        let Some(metric) = primary(results, workload) else {
            continue;
        };
        for c in results
            .comparisons
            .iter()
            .filter(|c| c.workload == workload && c.metric == metric)
        {
            out.push(Row {
                workload,
                comparison: c,
            });
        }
    }
    out
}

/// The interval that decided: the median ratio's for paired rounds, else
/// the ratio of means'.
fn interval(c: &ComparisonEntry) -> (f64, f64, f64) {
    let o = &c.outcome;
    match (o.median_ratio, o.median_ci_low, o.median_ci_high) {
        (Some(m), Some(low), Some(high)) => (m, low, high),
        _ => (o.ratio, o.ci_low, o.ci_high),
    }
}

/// The headline as a Markdown table.
pub fn markdown(results: &Results) -> String {
    let rows = rows(results);
    if rows.is_empty() {
        return String::new();
    }
    let mut out = format!(
        "## Summary\n\n| Workload | Metric | Variant | Ratio | {:.0}% CI | Verdict |\n|---|---|---|---:|---|---|\n",
        results.confidence * 100.0
    );
    for r in &rows {
        let c = r.comparison;
        let (ratio, low, high) = interval(c);
        let _ = writeln!(
            out,
            "| {} | {} | {} | {ratio:.3} | {low:.3}–{high:.3} | {} ({}) |",
            r.workload,
            c.metric,
            c.variant,
            c.outcome.verdict_text(),
            improvement(c.outcome.improvement_pct)
        );
    }
    out.push('\n');
    out
}

/// The headline for the terminal.
pub fn text(results: &Results) -> String {
    let rows = rows(results);
    if rows.is_empty() {
        return String::new();
    }
    let width = |f: &dyn Fn(&Row) -> usize| rows.iter().map(f).max().unwrap_or(0);
    let (w, m, v) = (
        width(&|r| r.workload.len()),
        width(&|r| r.comparison.metric.len()),
        width(&|r| r.comparison.variant.len()),
    );
    let mut out = String::from("summary (the primary metric per workload; details follow):\n");
    for r in &rows {
        let c = r.comparison;
        let (ratio, low, high) = interval(c);
        let _ = writeln!(
            out,
            "  {:<w$}  {:<m$}  {:<v$}  {ratio:.3} [{low:.3}, {high:.3}]  {}",
            r.workload,
            c.metric,
            c.variant,
            c.outcome.verdict_text(),
        );
    }
    out
}

/// The sequential plan in a sentence: its looks, limits, method and why it
/// stopped; `None` for a fixed plan.
pub fn sequential(results: &Results) -> Option<String> {
    let plan = results.sequential.as_ref()?;
    let looks: Vec<String> = plan.plan.looks.iter().map(u32::to_string).collect();
    let stop = match &results.stopped {
        Some(s) => format!(
            "stopped after {} rounds: {} ({} of {} primary comparisons decided)",
            s.rounds,
            match s.reason {
                StopReason::Decided => "every primary comparison decided",
                StopReason::Budget => "the budget left no room for another round",
                StopReason::Max => "the most rounds were run",
            },
            s.decided,
            s.comparisons
        ),
        None => "not finished (interrupted, or still running)".to_owned(),
    };
    Some(format!(
        "Sequential plan (repetitions = \"auto\"): at most {} rounds in {:.0} s, looks after {} rounds, each verdict taken at the first look that decides it; {stop}. Method: group-sequential alpha spending (Lan–DeMets, Pocock-type α(t) = α·ln(1 + (e − 1)t), α = {}), so that looking again keeps false verdicts at {}.",
        plan.plan.max,
        plan.budget_s,
        looks.join(", "),
        tidy(plan.plan.alpha),
        tidy(plan.plan.alpha),
    ))
}

/// A level without floating-point dust (1 − 0.95 is 0.05000000000000004).
fn tidy(x: f64) -> f64 {
    (x * 1e9).round() / 1e9
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Instructions head the summary, unless the experiment declared a
    /// figure (here: wall, standing in for a sysbench TPS) primary.
    #[test]
    fn a_declared_primary_metric_heads_the_summary() {
        let mut results: Results =
            serde_json::from_str(include_str!("../../tests/fixtures/results/hotpath.json"))
                .unwrap();
        let metric = |r: &Results| rows(r).first().map(|row| row.comparison.metric.clone());
        assert_eq!(metric(&results).as_deref(), Some("instructions"));
        for m in results
            .measurements
            .iter_mut()
            .filter(|m| m.metric.name == "wall")
        {
            m.metric.primary = true;
        }
        assert_eq!(metric(&results).as_deref(), Some("wall"));
    }
}
