//! The keep-gain rule: within one run, a variant (say `pgo`) must keep at
//! least a stated gain over the baseline on every workload's headline
//! metric, from the report's own verdict and interval. It fails when the
//! data rule the gain out (the upper bound of the gain's interval below
//! the floor: a profile gone stale in the repository), passes only when
//! they show it kept (the lower bound at or above the floor), and is
//! inconclusive between.

use anyhow::{bail, Result};

use super::{workloads, Case, KeepGain, Status, Suite};
use crate::analysis::results::ComparisonEntry;
use crate::analysis::Results;

/// The keep-gain suite of one `--keep-gain` rule.
pub fn suite(current: &Results, keep: &KeepGain) -> Result<Suite> {
    let variants: Vec<&str> = current.variants.iter().map(|v| v.name.as_str()).collect();
    if !variants.contains(&keep.variant.as_str()) {
        bail!(
            "--keep-gain {}:{}: run {} has no variant `{}`\nhint: its variants are {}",
            keep.variant,
            keep.floor,
            current.run_id,
            keep.variant,
            variants.join(", ")
        );
    }
    if keep.variant == current.baseline {
        bail!(
            "--keep-gain {}:{}: `{}` is the baseline itself, against which gains are measured\nhint: name a variant that should be faster than it",
            keep.variant,
            keep.floor,
            keep.variant
        );
    }
    let mut cases = Vec::new();
    for (workload, metric) in workloads(current) {
        let found = current
            .comparisons
            .iter()
            .find(|c| c.workload == workload && c.metric == metric && c.variant == keep.variant);
        cases.push(match found {
            Some(c) => case(current, c, keep),
            None => uncompared(workload, metric, keep),
        });
    }
    Ok(Suite {
        name: format!(
            "keep gain: {} ≥ {} over {}",
            keep.variant, keep.floor, current.baseline
        ),
        rule: rule(current, keep),
        columns: vec![
            "Workload",
            "Variant",
            "Metric",
            "Ratio",
            "Gain",
            "CI of gain",
            "Floor",
            "Verdict",
        ],
        cases,
    })
}

/// The rule in words, with its figures.
fn rule(current: &Results, keep: &KeepGain) -> String {
    format!(
        "Keep-gain rule: `{v}` must gain at least {f} over `{b}` on each workload's headline metric within this run. The gain is the report's own comparison: its estimate and {c}% interval (the median per-round ratio's for paired rounds of a noisy metric, else the ratio of means'), as 1 − ratio when lower is better. A case fails when the upper bound of that interval is below {f}, i.e. when the data rule out a gain of {f}; it passes only on evidence, when the lower bound reaches {f}; an interval on both sides of {f} is inconclusive, whatever the estimate.",
        v = keep.variant,
        f = keep.floor,
        b = current.baseline,
        c = (current.confidence * 100.0 * 1e6).round() / 1e6
    )
}

/// The gain in percent (estimate, low, high) of a comparison: positive is
/// better, whatever the metric's direction.
pub fn gain(current: &Results, c: &ComparisonEntry) -> (f64, f64, f64) {
    let lower_is_better = current
        .measurements
        .iter()
        .find(|m| m.workload == c.workload && m.metric.name == c.metric)
        .is_none_or(|m| m.metric.lower_is_better);
    let (ratio, low, high) = c.interval();
    if lower_is_better {
        (
            (1.0 - ratio) * 100.0,
            (1.0 - high) * 100.0,
            (1.0 - low) * 100.0,
        )
    } else {
        (
            (ratio - 1.0) * 100.0,
            (low - 1.0) * 100.0,
            (high - 1.0) * 100.0,
        )
    }
}

fn case(current: &Results, c: &ComparisonEntry, keep: &KeepGain) -> Case {
    let (estimate, low, high) = gain(current, c);
    let floor = keep.floor;
    let failed = high < floor.0;
    let kept = low >= floor.0;
    let why = if failed {
        format!("its upper bound {high:.1}% is below the {floor} floor")
    } else if kept {
        format!("kept: its lower bound {low:.1}% reaches the {floor} floor")
    } else {
        format!(
            "inconclusive: its interval reaches from {low:.1}% to {high:.1}%, both sides of the {floor} floor, so the data neither show the gain kept nor rule it out"
        )
    };
    let (ratio, _, _) = c.interval();
    Case {
        workload: c.workload.clone(),
        variant: c.variant.clone(),
        metric: c.metric.clone(),
        status: if failed {
            Status::Failed
        } else if kept {
            Status::Passed
        } else {
            Status::Inconclusive
        },
        message: format!(
            "{} of `{}` over `{}` on `{}`: gain {estimate:.1}% [{low:.1}%, {high:.1}%] (ratio {ratio:.3}, {}): {why}",
            c.metric,
            c.variant,
            c.baseline,
            c.workload,
            c.outcome.verdict_text()
        ),
        cells: vec![
            c.workload.clone(),
            c.variant.clone(),
            c.metric.clone(),
            format!("{ratio:.3}"),
            format!("{estimate:.1}%"),
            format!("{low:.1}% to {high:.1}%"),
            floor.to_string(),
            c.outcome.verdict_text(),
        ],
        statistics: c.outcome.rule.clone(),
    }
}

/// A workload on which the variant was not compared (its runs failed, or
/// it has no baseline figure): the gain cannot be shown, so the case fails
/// rather than pass unseen.
fn uncompared(workload: &str, metric: &str, keep: &KeepGain) -> Case {
    Case {
        workload: workload.to_owned(),
        variant: keep.variant.clone(),
        metric: metric.to_owned(),
        status: Status::Failed,
        cells: vec![
            workload.to_owned(),
            keep.variant.clone(),
            metric.to_owned(),
            "–".to_owned(),
            "–".to_owned(),
            "–".to_owned(),
            keep.floor.to_string(),
            "not compared in this run".to_owned(),
        ],
        message: format!(
            "{metric} of `{}` on `{workload}`: not compared with the baseline in this run, so its gain cannot be shown",
            keep.variant
        ),
        statistics: String::new(),
    }
}
