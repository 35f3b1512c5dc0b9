//! The headline: per workload and variant, the one comparison that answers
//! "is it faster?" — time — with its ratio, interval and verdict, before any
//! detail. Time is wall for a command (or its declared primary figure, such
//! as a sysbench TPS), and for a load the highest rate meeting the SLA
//! (sla), p99 (a fixed-rate load, whose throughput is the rate asked) or
//! throughput (closed). Counted instructions are *work*: shown beside the
//! verdict as evidence, never deciding it, unless `[bench] primary =
//! "instructions"` asked for them. Where time is undecided and work
//! decided the row says both; where they disagree, it says so.

use std::fmt::Write as _;

use crate::analysis::headline::{counts_work, rows, Row};
use crate::analysis::Results;
use crate::metric::MetricId;
use crate::report::format::improvement;
use crate::runs::StopReason;
use crate::stats::Verdict;

/// The verdict in words, with the work beside it: "faster; 5.2% fewer
/// instructions", "time undecided (±4.0%); 5.6% fewer instructions",
/// "faster, but 3.7% more instructions: work and time disagree".
pub fn verdict(row: &Row) -> String {
    let said = work_verdict(row);
    match &row.failed_more {
        // A variant is never "faster" by failing requests, unsaid.
        Some(failed) if row.comparison.outcome.verdict == Verdict::Faster => {
            format!("{said}, but it {failed}: failed requests are results")
        }
        _ => said,
    }
}

/// The verdict with the work beside it (see [`verdict`]).
fn work_verdict(row: &Row) -> String {
    let time = &row.comparison.outcome;
    let Some(work) = row.work else {
        return time.verdict_text();
    };
    let w = &work.outcome;
    let amount = (w.ratio - 1.0).abs() * 100.0;
    let counted = if MetricId::INSTRUCTIONS.is(&work.metric) {
        "instructions".to_owned()
    } else {
        "instructions per request".to_owned()
    };
    let work_text = match w.verdict {
        Verdict::Faster => format!("{amount:.1}% fewer {counted}"),
        Verdict::Slower => format!("{amount:.1}% more {counted}"),
        Verdict::Same => format!("{counted} the same within ±{}%", w.equivalence_pct),
        Verdict::Undecided => format!("{counted} undecided"),
    };
    let opposed = matches!(
        (time.verdict, w.verdict),
        (Verdict::Faster, Verdict::Slower) | (Verdict::Slower, Verdict::Faster)
    );
    match time.verdict {
        _ if opposed => format!(
            "{}, but {work_text}: work and time disagree (judge by time)",
            time.verdict_text()
        ),
        Verdict::Undecided => {
            let resolution = time
                .resolution_pct
                .map_or(String::new(), |r| format!(" (±{r:.1}%)"));
            format!(
                "{} undecided{resolution}; {work_text}",
                row.comparison.metric
            )
        }
        _ => format!("{}; {work_text}", time.verdict_text()),
    }
}

/// The sentence under a headline table: what decided it.
fn note(results: &Results, rows: &[Row]) -> String {
    let instructions = results.judging.values().any(|j| counts_work(&j.primary));
    if instructions {
        "The instruction count heads this report (`[bench] primary = \"instructions\"`): its verdict is tested at the stated level, and time is secondary.".to_owned()
    } else {
        let family = if results.schema_version < 3 {
            "These results were written before the headlines were corrected for their number (results schema 2): each headline was tested at the stated level alone, and the report as a whole may claim more than that level allows."
        } else if results.schema_version < 4 {
            "The headlines (every variant on every workload) are corrected for their number (Holm's step-down), and every other metric is secondary, tested only as far as the headlines allow (parallel gatekeeping)."
        } else {
            "The headlines (every variant on every workload) are corrected for their number (truncated Holm), and every other metric is secondary, tested only as far as the headlines allow (parallel gatekeeping, a closed procedure), so that the report as a whole claims a false difference with probability at most the stated level."
        };
        format!(
            "Time heads each workload{}. {family}",
            if rows.iter().any(|r| r.work.is_some()) {
                "; instructions are the work done, shown beside it"
            } else {
                ""
            }
        )
    }
}

/// A row's cells as the Markdown and HTML tables show them: workload,
/// metric, variant, ratio, interval, and the verdict with its improvement.
fn cells(r: &Row) -> [String; 6] {
    let c = r.comparison;
    let (ratio, low, high) = c.interval();
    [
        r.workload.to_owned(),
        format!("{} ({})", c.metric, r.direction()),
        c.variant.clone(),
        format!("{ratio:.3}"),
        format!("{low:.3}–{high:.3}"),
        format!(
            "{} ({})",
            verdict(r),
            improvement(c.outcome.improvement_pct)
        ),
    ]
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
        let _ = writeln!(out, "| {} |", cells(r).join(" | "));
    }
    let _ = writeln!(out, "\n{}\n", note(results, &rows));
    out
}

/// The headline for the terminal.
pub fn text(results: &Results) -> String {
    let rows = rows(results);
    if rows.is_empty() {
        return String::new();
    }
    let width = |f: &dyn Fn(&Row) -> usize| rows.iter().map(f).max().unwrap_or(0);
    let metric = |r: &Row| format!("{} ({})", r.comparison.metric, r.direction());
    let (w, m, v) = (
        width(&|r| r.workload.len()),
        width(&|r| metric(r).chars().count()),
        width(&|r| r.comparison.variant.len()),
    );
    let mut out = String::from(
        "summary (time per workload as variant / baseline, the work beside it; details follow):\n",
    );
    for r in &rows {
        let c = r.comparison;
        let (ratio, low, high) = c.interval();
        let _ = writeln!(
            out,
            "  {:<w$}  {:<m$}  {:<v$}  {ratio:.3} [{low:.3}, {high:.3}]  {}",
            r.workload,
            metric(r),
            c.variant,
            verdict(r),
        );
    }
    out
}

/// The headline as an HTML table, for the top of report.html.
pub fn html(results: &Results, escape: impl Fn(&str) -> String) -> String {
    let rows = rows(results);
    if rows.is_empty() {
        return String::new();
    }
    let mut out = format!(
        "<h2>Summary</h2>\n<table>\n<tr><th>Workload</th><th>Metric</th><th>Variant</th><th>Ratio</th><th>{:.0}% CI</th><th>Verdict</th></tr>\n",
        results.confidence * 100.0
    );
    for r in &rows {
        let [workload, metric, variant, ratio, interval, verdict] = cells(r).map(|c| escape(&c));
        let _ = writeln!(
            out,
            "<tr><td>{workload}</td><td>{metric}</td><td>{variant}</td><td class=\"num\">{ratio}</td><td>{interval}</td><td>{verdict}</td></tr>",
        );
    }
    let _ = writeln!(out, "</table>\n<p>{}</p>", escape(&note(results, &rows)));
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

    /// A variant called faster while it timed out a tenth of its requests
    /// (the baseline none) is never just "faster": the row says what it
    /// failed and how that share was judged. Failing no more than the
    /// baseline adds nothing.
    #[test]
    fn a_faster_variant_that_failed_more_requests_says_so() {
        let mut results: Results =
            serde_json::from_str(include_str!("../../../tests/fixtures/results/hotpath.json"))
                .unwrap();
        let wall = results
            .comparisons
            .iter_mut()
            .find(|c| MetricId::WALL.is(&c.metric) && c.variant == "pgo")
            .unwrap();
        wall.outcome.verdict = Verdict::Faster;
        let template = results.measurements[0].clone();
        for (variant, share) in [("baseline", 0.0), ("pgo", 0.1), ("o3", 0.0)] {
            let mut m = template.clone();
            m.metric.name = crate::metric::LoadMetric::TimeoutRate.name().to_owned();
            m.metric.precision = crate::stats::Precision::Share;
            m.variant = variant.to_owned();
            m.summary.mean = share;
            results.measurements.push(m);
        }
        let said = |results: &Results, variant: &str| {
            let rows = rows(results);
            let row = rows
                .iter()
                .find(|r| {
                    MetricId::WALL.is(&r.comparison.metric) && r.comparison.variant == variant
                })
                .unwrap();
            verdict(row)
        };
        let pgo = said(&results, "pgo");
        assert!(pgo.starts_with("faster"), "{pgo}");
        assert!(
            pgo.contains(
                ", but it timed out 10.0% of requests against 0.0% (timeout_rate not judged)"
            ),
            "{pgo}"
        );
        assert!(!said(&results, "o3").contains("timed out"));
        let mut judged = results.comparisons[0].clone();
        judged.metric = crate::metric::LoadMetric::TimeoutRate.name().to_owned();
        judged.outcome.verdict = Verdict::Slower;
        results.comparisons.push(judged);
        let pgo = said(&results, "pgo");
        assert!(pgo.contains("(timeout_rate slower)"), "{pgo}");
    }
}
