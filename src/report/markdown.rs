//! `report.md` in the seeds' layout: per workload and metric, a row per
//! repetition, then STDDEVP, Mean, STDDEVP/Mean and Opt/Default per variant,
//! then each verdict with its interval; the machine and the rules follow.

use std::fmt::Write as _;

use anyhow::Result;

use super::exporter::Exporter;
use super::format::{improvement, p_value, scale_for};
use super::sections::{
    axes, failures, headline, nodes, race, server, sets, share, stale, utilization,
};
use crate::analysis::results::{ComparisonEntry, Measurement};
use crate::analysis::Results;
use crate::stats::{Estimate, Precision};

/// Functions per workload and variant in the section "Where the
/// instructions went" (`afterburner explain --top N` shows more).
pub const EXPLAIN_TOP: usize = 10;

/// Renders results as Markdown.
pub struct Markdown;

impl Exporter for Markdown {
    fn name(&self) -> &'static str {
        "markdown"
    }

    fn describe(&self) -> &'static str {
        "report.md: the tables, rules and warnings as Markdown"
    }

    fn render(&self, results: &Results) -> Result<Vec<u8>> {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "# afterburner report: {} ({})\n",
            results.target, results.run_id
        );
        let _ = writeln!(
            out,
            "{} counted repetitions per variant and workload after {} warmup, interleaved in rounds shuffled with seed {}; baseline: `{}`. Instructions counted with {}.\n",
            results.repetitions, results.warmup, results.seed, results.baseline, results.instruction_counter.name()
        );
        if let Some(text) = headline::sequential(results) {
            let _ = writeln!(out, "{text}\n");
        }
        if let Some(p) = &results.pinning {
            let _ = writeln!(
                out,
                "Services ran on CPUs {}, the load client and workloads on CPUs {} (`[bench] pin`).\n",
                p.services, p.workload
            );
        }
        out.push_str(&race::markdown(results));
        out.push_str(&headline::markdown(results));
        out.push_str(&share::markdown(results));
        out.push_str(&stale::markdown(results));
        let mut workload = "";
        for group in results.groups() {
            if group.workload != workload {
                workload = group.workload;
                let _ = writeln!(out, "## Workload `{workload}`\n");
            }
            table(&mut out, results, &group.rows, &group.comparisons);
        }
        out.push_str(&failures::markdown(results));
        out.push_str(&nodes::markdown(results));
        out.push_str(&sets::markdown(results));
        out.push_str(&utilization::markdown(results));
        out.push_str(&server::markdown(results));
        out.push_str(&axes::markdown(results));
        unseen(&mut out, results);
        if let Some(explained) = &results.explained {
            out.push_str(&crate::explain::render::markdown(explained, EXPLAIN_TOP));
        }
        if let Some(simulated) = &results.simulated {
            out.push_str(&crate::explain::render::simulation_markdown(simulated));
        }
        variants(&mut out, results);
        rules(&mut out, results);
        warnings(&mut out, results);
        let _ = writeln!(
            out,
            "## Environment\n\n```\n{}```",
            results.environment.render_text()
        );
        Ok(out.into_bytes())
    }
}

fn table(
    out: &mut String,
    results: &Results,
    rows: &[&Measurement],
    comparisons: &[&ComparisonEntry],
) {
    let Some(first) = rows.first() else { return };
    let metric = &first.metric;
    let scale = scale_for(&metric.unit, first.summary.mean);
    let direction = crate::analysis::headline::direction(metric.lower_is_better);
    let _ = writeln!(
        out,
        "### {} ({}, {direction})\n",
        metric.name,
        scale.label(&metric.unit)
    );
    let header: Vec<String> = rows.iter().map(|m| format!("`{}`", m.variant)).collect();
    let _ = writeln!(out, "| Repetition | {} |", header.join(" | "));
    let _ = writeln!(out, "|---|{}", "---:|".repeat(rows.len()));
    let longest = rows.iter().map(|m| m.samples.len()).max().unwrap_or(0);
    for i in 0..longest {
        let cells: Vec<String> = rows
            .iter()
            .map(|m| m.samples.get(i).map_or(String::new(), |v| scale.show(*v)))
            .collect();
        let _ = writeln!(out, "| {} | {} |", i + 1, cells.join(" | "));
    }
    let stat_row = |label: &str, f: &dyn Fn(&Measurement) -> String| {
        let cells: Vec<String> = rows.iter().map(|m| f(m)).collect();
        format!("| **{label}** | {} |\n", cells.join(" | "))
    };
    out.push_str(&stat_row("STDDEVP", &|m| scale.show(m.summary.stddevp)));
    out.push_str(&stat_row("Mean", &|m| scale.show(m.summary.mean)));
    out.push_str(&stat_row("STDDEVP/Mean", &|m| {
        format!("{:.2}%", m.summary.cv * 100.0)
    }));
    out.push_str(&stat_row("Opt/Default", &|m| {
        if m.variant == results.baseline {
            "1.000".to_owned()
        } else {
            comparisons
                .iter()
                .find(|c| c.variant == m.variant)
                .map_or("n/a".to_owned(), |c| {
                    format!("{:.3}", c.outcome.mean_ratio.unwrap_or(c.outcome.ratio))
                })
        }
    }));
    out.push('\n');
    let judged_by = |c: &ComparisonEntry| {
        let o = &c.outcome;
        let mean = match (o.mean_ratio, o.mean_ci_low, o.mean_ci_high) {
            (Some(m), Some(low), Some(high)) => format!(
                "; ratio of means {m:.3} ({:.0}% bootstrap CI {low:.3}–{high:.3})",
                results.confidence * 100.0
            ),
            (Some(m), _, _) if o.estimate != Estimate::RatioOfMeans => {
                format!("; ratio of means {m:.3}")
            }
            _ => String::new(),
        };
        let tests = format!(
            "the {} decided (p = {}{}){mean}",
            o.estimate.label(),
            p_value(o.p_value),
            match (o.estimate, o.mann_whitney_p) {
                (Estimate::RatioOfMeans, _) | (_, None) => String::new(),
                (_, p) => format!("; Mann-Whitney p = {}", p_value(p)),
            }
        );
        match metric.precision {
            Precision::Noisy => tests,
            Precision::Share => format!(
                "a share of requests, judged on the answered share (1 − {}), whose ratio this is: {tests}",
                metric.name
            ),
            Precision::Exact => "exact metric, judged by resolution".to_owned(),
        }
    };
    for c in comparisons {
        let _ = writeln!(
            out,
            "- `{}` vs `{}`: **{}** — {}, ratio {:.3} ({:.0}% CI {:.3}–{:.3}), {}",
            c.variant,
            c.baseline,
            c.outcome.verdict_text(),
            improvement(c.outcome.improvement_pct),
            c.outcome.ratio,
            results.confidence * 100.0,
            c.outcome.ci_low,
            c.outcome.ci_high,
            judged_by(c)
        );
    }
    out.push('\n');
}

/// The gain of profiled variants on benchmark workloads that did not train
/// them: the honest test of a profile.
fn unseen(out: &mut String, results: &Results) {
    let profiled = |name: &str| {
        results
            .variants
            .iter()
            .any(|v| v.name == name && v.optimize.iter().any(|o| o.needs_profile()))
    };
    let entries: Vec<&ComparisonEntry> = results
        .comparisons
        .iter()
        .filter(|c| profiled(&c.variant) && !results.training_workloads.contains(&c.workload))
        .collect();
    if entries.is_empty() || results.training_workloads.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "## Gain on workloads the profile never saw

Profiles were trained on {}.

| Workload | Metric | Variant | Ratio | {:.0}% CI | Verdict |\n|---|---|---|---:|---|---|",
        results
            .training_workloads
            .iter()
            .map(|w| format!("`{w}`"))
            .collect::<Vec<_>>()
            .join(", "),
        results.confidence * 100.0
    );
    for c in entries {
        let _ = writeln!(
            out,
            "| `{}` | {} | `{}` | {:.3} | {:.3}–{:.3} | {} |",
            c.workload,
            c.metric,
            c.variant,
            c.outcome.ratio,
            c.outcome.ci_low,
            c.outcome.ci_high,
            c.outcome.verdict_text()
        );
    }
    out.push('\n');
}

fn variants(out: &mut String, results: &Results) {
    let _ = writeln!(out, "## Variants\n\n| Variant | Optimize | Compiler | CFLAGS | LDFLAGS |\n|---|---|---|---|---|");
    let flags = |f: &str| {
        if f.is_empty() {
            "(none)".to_owned()
        } else {
            format!("`{f}`")
        }
    };
    for v in &results.variants {
        let optimize: Vec<&str> = v.optimize.iter().map(|o| o.word()).collect();
        let mut ldflags = flags(&v.ldflags);
        if !v.goflags.is_empty() {
            let _ = write!(ldflags, "; GOFLAGS `{}`", v.goflags);
        }
        if !v.rustflags.is_empty() || !v.cargo.is_empty() {
            let _ = write!(
                ldflags,
                "; RUSTFLAGS {}; cargo {}",
                flags(&v.rustflags),
                flags(&v.cargo)
            );
        }
        let _ = writeln!(
            out,
            "| `{}` | {} | {} | {} | {ldflags} |",
            v.name,
            optimize.join(" + "),
            v.compiler_version,
            flags(&v.cflags)
        );
    }
    out.push('\n');
    for v in &results.variants {
        for p in &v.profiles {
            let _ = writeln!(out, "- `{}` profile {}", v.name, p.describe());
        }
    }
    if results.variants.iter().any(|v| !v.profiles.is_empty()) {
        out.push('\n');
    }
}

fn rules(out: &mut String, results: &Results) {
    let rules = results.rules();
    if rules.is_empty() {
        return;
    }
    let _ = writeln!(out, "## How verdicts are decided\n");
    for rule in rules {
        let _ = writeln!(out, "- {rule}");
    }
    out.push('\n');
}

fn warnings(out: &mut String, results: &Results) {
    if results.warnings.is_empty() {
        return;
    }
    let _ = writeln!(out, "## Warnings\n");
    for w in &results.warnings {
        let context: Vec<String> = [&w.workload, &w.metric, &w.variant]
            .iter()
            .filter_map(|s| s.as_ref().map(|s| format!("`{s}`")))
            .collect();
        if context.is_empty() {
            let _ = writeln!(out, "- {}", w.message);
        } else {
            let _ = writeln!(out, "- {}: {}", context.join(" / "), w.message);
        }
    }
    out.push('\n');
}
