//! `afterburner compare A B`: two runs side by side. For every workload,
//! metric and variant present in both, B's samples are judged against A's
//! with the same statistics and verdict rule as a bench (unpaired: the runs
//! were not interleaved with each other). `afterburner check` judges a run
//! against its baseline run with the same [`across`].

use std::fmt::Write as _;
use std::path::Path;

use anyhow::{bail, Context as _, Result};

use super::format::{improvement, p_value, scale_for};
use super::results::Measurement;
use super::{load_results, Results};
use crate::stats::{self, CompareOptions, Comparison};

/// Read a run: a run directory (redrawn from its raw records) or a
/// `results.json` file.
pub fn read_run(path: &Path) -> Result<Results> {
    if path.is_dir() {
        return load_results(path);
    }
    let bytes = fs_err::read(path)?;
    serde_json::from_slice(&bytes).with_context(|| {
        format!("{} is not an afterburner results.json\nhint: pass a results.json or a run directory (runs/<id>/)", path.display())
    })
}

/// One workload, metric and variant measured in both runs, B judged
/// against A.
pub struct Across<'a> {
    /// A's measurement (the earlier run, or the baseline run of a check).
    pub a: &'a Measurement,
    /// B's measurement of the same workload, metric and variant.
    pub b: &'a Measurement,
    /// B against A: ratio B/A, interval, p-value, verdict and its rule.
    pub outcome: Comparison,
}

/// Every workload, metric and variant present in both runs, B's samples
/// judged against A's (unpaired bootstrap, Mann-Whitney U for noisy
/// metrics, the resolution for exact ones; A's confidence and margin), in
/// A's order. Left out: what only one run measured, and a baseline mean of
/// zero (no ratio).
pub fn across<'a>(a: &'a Results, b: &'a Results) -> Vec<Across<'a>> {
    let mut out = Vec::new();
    for ma in &a.measurements {
        let Some(mb) = b.measurements.iter().find(|m| {
            m.workload == ma.workload && m.metric.name == ma.metric.name && m.variant == ma.variant
        }) else {
            continue;
        };
        let options = CompareOptions {
            confidence: a.confidence,
            paired: false,
            precision: ma.metric.precision,
            lower_is_better: ma.metric.lower_is_better,
            resamples: 10_000,
            seed: a.seed ^ b.seed,
            equivalence: a.equivalence,
        };
        if let Some(outcome) = stats::compare(&ma.samples, &mb.samples, &options) {
            out.push(Across {
                a: ma,
                b: mb,
                outcome,
            });
        }
    }
    out
}

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
