//! The terminal summary: one line per variant, metric and workload, with the
//! verdict against the baseline.

use std::fmt::Write as _;

use anyhow::Result;

use super::exporter::Exporter;
use super::format::{improvement, scale_for};
use super::sections::{headline, nodes, race, share, stale};
use crate::analysis::results::WarningEntry;
use crate::analysis::Results;

/// Each variant's profiles and how much of each matched its binaries.
fn profiles_text(results: &Results) -> String {
    let mut out = String::new();
    for v in &results.variants {
        for p in &v.profiles {
            if out.is_empty() {
                out.push_str("\nprofiles:\n");
            }
            let _ = writeln!(out, "  {}: {}", v.name, p.describe());
        }
    }
    out
}

/// Renders a compact plain-text summary.
pub struct Terminal;

impl Exporter for Terminal {
    fn name(&self) -> &'static str {
        "text"
    }

    fn describe(&self) -> &'static str {
        "the terminal summary, as plain text"
    }

    fn render(&self, results: &Results) -> Result<Vec<u8>> {
        let mut out = headline::sequential(results)
            .map(|text| format!("{text}\n\n"))
            .unwrap_or_default();
        out.push_str(&race::text(results));
        out.push_str(&headline::text(results));
        out.push_str(&share::text(results));
        out.push_str(&stale::text(results));
        out.push_str(&nodes::text(results));
        let width = results
            .variants
            .iter()
            .map(|v| v.name.len())
            .max()
            .unwrap_or(8)
            .max(8);
        let mut last = (String::new(), String::new());
        for m in &results.measurements {
            if (m.workload.clone(), m.metric.name.clone()) != last {
                let _ = writeln!(
                    out,
                    "\n{} / {} ({}):",
                    m.workload,
                    m.metric.name,
                    crate::analysis::headline::direction(m.metric.lower_is_better)
                );
                last = (m.workload.clone(), m.metric.name.clone());
            }
            let scale = scale_for(&m.metric.unit, m.summary.mean);
            let unit = scale.label(&m.metric.unit);
            let mut line = format!(
                "  {:<width$}  {:>12} ± {:<10} {unit:<8} (n={})",
                m.variant,
                scale.show(m.summary.mean),
                scale.show(m.summary.stddevp),
                m.summary.n
            );
            if let Some(c) = results.comparisons.iter().find(|c| {
                c.workload == m.workload && c.metric == m.metric.name && c.variant == m.variant
            }) {
                let _ = write!(
                    line,
                    "  ratio {:.3} [{:.3}, {:.3}]  {}: {}",
                    c.outcome.ratio,
                    c.outcome.ci_low,
                    c.outcome.ci_high,
                    c.outcome.verdict_text(),
                    improvement(c.outcome.improvement_pct)
                );
            }
            let _ = writeln!(out, "{line}");
        }
        if let Some(explained) = &results.explained {
            out.push_str(&crate::explain::render::summary(explained));
        }
        out.push_str(&profiles_text(results));
        // Warnings grouped by kind (the message up to its first `(` or
        // `:`), the first in full with a count; report.md lists them all.
        let mut kinds: Vec<(&str, Vec<&WarningEntry>)> = Vec::new();
        for w in &results.warnings {
            let kind = w.message.split(['(', ':']).next().unwrap_or("").trim();
            match kinds.iter_mut().find(|(k, _)| *k == kind) {
                Some((_, same_kind)) => same_kind.push(w),
                None => kinds.push((kind, vec![w])),
            }
        }
        let context = |w: &WarningEntry| {
            [&w.workload, &w.metric, &w.variant]
                .into_iter()
                .filter_map(Option::as_deref)
                .collect::<Vec<&str>>()
                .join(" / ")
        };
        for (_, list) in kinds {
            let first = list[0];
            let at = context(first);
            let head = if at.is_empty() {
                format!("warning: {}", first.message)
            } else {
                format!("warning: {at}: {}", first.message)
            };
            if list.len() == 1 {
                let _ = writeln!(out, "{head}");
            } else {
                let _ = writeln!(
                    out,
                    "{head}\n  (the same for {} more: {}; every one is in report.md)",
                    list.len() - 1,
                    list[1..]
                        .iter()
                        .map(|w| context(w))
                        .collect::<Vec<_>>()
                        .join(", ")
                );
            }
        }
        out.push('\n');
        Ok(out.into_bytes())
    }
}
