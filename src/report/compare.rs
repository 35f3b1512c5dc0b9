//! `afterburner compare A B`: two runs side by side, as a Markdown table of
//! B's samples judged against A's ([`crate::analysis::across`]).

use std::fmt::Write as _;

use anyhow::{bail, Result};

use super::format::{improvement, p_value, scale_for};
use crate::analysis::across::{across, Across};
use crate::analysis::Results;

/// Markdown table of B against A.
pub fn compare_runs(a: &Results, b: &Results, a_name: &str, b_name: &str) -> Result<String> {
    let mut out = format!(
        "# {b_name} against {a_name}\n\nB's samples against A's, per workload, metric and variant (unpaired bootstrap, Mann-Whitney U, same verdict rule as a bench).\n\n| Workload | Metric | Variant | A mean | B mean | B/A | {:.0}% CI | p | Verdict |\n|---|---|---|---:|---:|---:|---|---|---|\n",
        a.confidence * 100.0
    );
    let rows = across(a, b);
    if rows.is_empty() {
        bail!("{a_name} and {b_name} share no workload, metric and variant\nhint: compare two runs of the same experiment");
    }
    for Across {
        a: ma,
        b: mb,
        outcome: c,
    } in &rows
    {
        let scale = scale_for(&ma.metric.unit, ma.summary.mean);
        let _ = writeln!(
            out,
            "| `{}` | {} ({}) | `{}` | {} | {} | {:.3} | {:.3}–{:.3} | {} | {} ({}) |",
            ma.workload,
            ma.metric.name,
            scale.label(&ma.metric.unit),
            ma.variant,
            scale.show(ma.summary.mean),
            scale.show(mb.summary.mean),
            c.ratio,
            c.ci_low,
            c.ci_high,
            p_value(c.p_value),
            c.verdict_text(),
            improvement(c.improvement_pct)
        );
    }
    Ok(out)
}
