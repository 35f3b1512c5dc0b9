//! The regression rule: every variant's headline metric in this run
//! against the same variant's in the baseline run, judged as `afterburner
//! compare` judges two runs; a verdict of slower by more than the
//! threshold fails.

use anyhow::{bail, Result};

use super::{workloads, Case, Percent, Status, Suite};
use crate::analysis::across::{across, Across};
use crate::analysis::Results;
use crate::report::format::{improvement, scale_for};

/// The regression suite of `current` against `baseline`.
pub fn suite(
    current: &Results,
    baseline: &Results,
    threshold: Percent,
    notes: &mut Vec<String>,
) -> Result<Suite> {
    if current.target != baseline.target {
        bail!(
            "run {} is of target `{}`, its baseline run {} of `{}`: they cannot be compared\nhint: pass --against a run of the same experiment",
            current.run_id,
            current.target,
            baseline.run_id,
            baseline.target
        );
    }
    let judged = across(baseline, current);
    let mut cases = Vec::new();
    for (workload, metric) in workloads(current) {
        if let Some(theirs) = baseline.primary_metric(workload).filter(|m| *m != metric) {
            notes.push(format!(
                "`{workload}`: the baseline run's headline metric is {theirs}, this run's {metric}: judged on {metric}"
            ));
        }
        for variant in current.variants.iter().map(|v| v.name.as_str()) {
            if current.mean(workload, variant, metric).is_none() {
                continue;
            }
            let found = judged.iter().find(|x| {
                x.b.workload == workload && x.b.metric.name == metric && x.b.variant == variant
            });
            cases.push(match found {
                Some(x) => case(x, threshold),
                None => skipped(workload, variant, metric, baseline),
            });
        }
    }
    if cases.iter().all(|c| c.status == Status::Skipped) {
        bail!(
            "run {} and its baseline run {} share no workload, variant and headline metric: mismatched experiments\nhint: pass --against a run of the same experiment (same workloads and variants)",
            current.run_id,
            baseline.run_id
        );
    }
    Ok(Suite {
        name: format!("regression against run {}", baseline.run_id),
        rule: rule(baseline, threshold),
        columns: vec![
            "Workload",
            "Variant",
            "Metric",
            "Baseline run",
            "This run",
            "Ratio",
            "CI",
            "Verdict",
        ],
        cases,
    })
}

/// The rule in words, with its figures.
fn rule(baseline: &Results, threshold: Percent) -> String {
    format!(
        "Regression rule: each workload's headline metric (time, unless `[bench] primary = \"instructions\"` or a declared primary figure) of every variant in this run is judged against the same variant in baseline run {} as `afterburner compare` judges two runs (unpaired, {}% confidence: a noisy metric by its bootstrap interval and the Mann-Whitney U test, an exact instruction count by its resolution). A case fails when that verdict is slower and its mean is worse by more than the threshold, {threshold}; slower by less, the same or faster pass, and so does an undecided case whose interval rules out a regression beyond the threshold; any other undecided case is inconclusive, never a pass. Unpaired, the spread that judges is the one within each run: two runs minutes apart differ by more (clock, neighbours), so prefer `check --rev`, which builds the baseline revision and runs both in the same rounds.",
        baseline.run_id,
        (baseline.confidence * 100.0 * 1e6).round() / 1e6
    )
}

/// One judged case.
fn case(x: &Across, threshold: Percent) -> Case {
    let o = &x.outcome;
    let status = super::status_of(o, x.b.metric.lower_is_better, threshold);
    let scale = scale_for(&x.a.metric.unit, x.a.summary.mean);
    let unit = scale.label(&x.a.metric.unit).to_owned();
    let why = super::why(o, status, threshold);
    Case {
        workload: x.b.workload.clone(),
        variant: x.b.variant.clone(),
        metric: x.b.metric.name.clone(),
        status,
        message: format!(
            "{} of `{}` on `{}`: {} → {} {unit} ({:.3}× [{:.3}, {:.3}]): {why}",
            x.b.metric.name,
            x.b.variant,
            x.b.workload,
            scale.show(x.a.summary.mean),
            scale.show(x.b.summary.mean),
            o.ratio,
            o.ci_low,
            o.ci_high,
        ),
        cells: vec![
            x.b.workload.clone(),
            x.b.variant.clone(),
            format!("{} ({unit})", x.b.metric.name),
            scale.show(x.a.summary.mean),
            scale.show(x.b.summary.mean),
            format!("{:.3}", o.ratio),
            format!("{:.3}–{:.3}", o.ci_low, o.ci_high),
            format!("{} ({})", o.verdict_text(), improvement(o.improvement_pct)),
        ],
        statistics: o.rule.clone(),
    }
}

/// A case the baseline run cannot judge.
fn skipped(workload: &str, variant: &str, metric: &str, baseline: &Results) -> Case {
    let message = format!(
        "{metric} of `{variant}` on `{workload}`: not measured in baseline run {}",
        baseline.run_id
    );
    Case {
        workload: workload.to_owned(),
        variant: variant.to_owned(),
        metric: metric.to_owned(),
        status: Status::Skipped,
        cells: vec![
            workload.to_owned(),
            variant.to_owned(),
            metric.to_owned(),
            "–".to_owned(),
            "–".to_owned(),
            "–".to_owned(),
            "–".to_owned(),
            "not in the baseline run".to_owned(),
        ],
        message,
        statistics: String::new(),
    }
}
