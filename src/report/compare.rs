//! `afterburner compare A B`: two runs side by side. For every workload,
//! metric and variant present in both, B's samples are judged against A's
//! with the same statistics and verdict rule as a bench (unpaired: the runs
//! were not interleaved with each other).

use std::fmt::Write as _;
use std::path::Path;

use anyhow::{bail, Context as _, Result};

use super::format::{improvement, p_value, scale_for};
use super::{load_results, Results};
use crate::stats::{self, CompareOptions};

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

/// Markdown table of B against A.
pub fn compare_runs(a: &Results, b: &Results, a_name: &str, b_name: &str) -> Result<String> {
    let mut out = format!(
        "# {b_name} against {a_name}\n\nB's samples against A's, per workload, metric and variant (unpaired bootstrap, Mann-Whitney U, same verdict rule as a bench).\n\n| Workload | Metric | Variant | A mean | B mean | B/A | {:.0}% CI | p | Verdict |\n|---|---|---|---:|---:|---:|---|---|---|\n",
        a.confidence * 100.0
    );
    let mut rows = 0;
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
        let Some(c) = stats::compare(&ma.samples, &mb.samples, &options) else {
            continue;
        };
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
        rows += 1;
    }
    if rows == 0 {
        bail!("{a_name} and {b_name} share no workload, metric and variant\nhint: compare two runs of the same experiment");
    }
    Ok(out)
}
