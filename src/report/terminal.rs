//! The terminal summary: one line per variant, metric and workload, with the
//! verdict against the baseline.

use std::fmt::Write as _;

use anyhow::Result;

use super::format::{improvement, scale_for};
use super::{Exporter, Results};

/// Renders a compact plain-text summary.
pub struct Terminal;

impl Exporter for Terminal {
    fn render(&self, results: &Results) -> Result<Vec<u8>> {
        let mut out = String::new();
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
                let _ = writeln!(out, "\n{} / {}:", m.workload, m.metric.name);
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
        for w in &results.warnings {
            let context: Vec<&str> = [&w.workload, &w.metric, &w.variant]
                .into_iter()
                .filter_map(Option::as_deref)
                .collect();
            if context.is_empty() {
                let _ = writeln!(out, "warning: {}", w.message);
            } else {
                let _ = writeln!(out, "warning: {}: {}", context.join(" / "), w.message);
            }
        }
        out.push('\n');
        Ok(out.into_bytes())
    }
}
