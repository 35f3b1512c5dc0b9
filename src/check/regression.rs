//! The regression rule: every variant's headline metric in this run
//! against the same variant's in the baseline run; a verdict of slower by
//! more than the threshold fails. An exact count is judged as `afterburner
//! compare` judges it; a noisy metric by the spread between runs, from
//! history ([`crate::stats::lookback`]), since the spread within each run
//! says nothing of the drift between two runs minutes or days apart.

use std::fmt::Write as _;

use anyhow::{bail, Result};

use super::{workloads, Case, Percent, Status, Suite, Threshold};
use crate::analysis::across::{across, Across};
use crate::analysis::Results;
use crate::report::format::{improvement, scale_for};
use crate::stats::{lookback, Comparison, Precision};

/// The regression suite of `current` against `baseline`, noisy metrics
/// judged with the spread between the runs of `history` (stored runs of
/// the same target on the baseline's machine class; the baseline is
/// counted once whether among them or not).
pub fn suite(
    current: &Results,
    baseline: &Results,
    history: &[Results],
    threshold: Threshold,
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
                Some(x) if x.b.metric.precision == Precision::Exact => {
                    case(x, &x.outcome, threshold.of(Precision::Exact))
                }
                Some(x) => {
                    let means = between(baseline, history, workload, variant, metric);
                    match lookback::compare(
                        &means,
                        x.a.summary.mean,
                        x.b.summary.mean,
                        current.confidence,
                        current.equivalence,
                        x.b.metric.lower_is_better,
                    ) {
                        Some(o) => {
                            let judged = case(x, &o, threshold.of(x.b.metric.precision));
                            too_few_to_pass(judged, means.len())
                        }
                        None => unknown_spread(x, means.len()),
                    }
                }
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
        rule: rule(baseline, history.len(), threshold),
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
fn rule(baseline: &Results, history: usize, threshold: Threshold) -> String {
    format!(
        "Regression rule: each workload's headline metric (time, unless `[bench] primary = \"instructions\"` or a declared primary figure) of every variant in this run is judged against the same variant in baseline run {} at {}% confidence. An exact instruction count is judged by its resolution. A noisy metric (time) is judged by the spread between runs, not within them: two runs minutes apart differ by more (clock, neighbours); the spread is that of the variant's means in the stored runs of this target on the baseline run's machine class ({history} found, the baseline counted once), never another machine's. With fewer than {} such runs the spread is unknown and the case is inconclusive; with fewer than {} it may fail but not pass (inconclusive instead). {} `check --rev` builds the baseline revision and runs both in the same rounds, where the drift between runs cancels: prefer it.",
        baseline.run_id,
        crate::stats::tidy(baseline.confidence * 100.0),
        lookback::FEWEST_RUNS,
        lookback::FEWEST_RUNS_TO_PASS,
        crate::stats::gate::rule_text(&threshold.describe()),
    )
}

/// The means of `metric` for `variant` on `workload` in `history` and in
/// the baseline (once, when it is not among them).
fn between(
    baseline: &Results,
    history: &[Results],
    workload: &str,
    variant: &str,
    metric: &str,
) -> Vec<f64> {
    let mut runs: Vec<&Results> = history.iter().collect();
    if !history.iter().any(|h| h.run_id == baseline.run_id) {
        runs.push(baseline);
    }
    runs.iter()
        .filter_map(|r| r.mean(workload, variant, metric))
        .collect()
}

/// What every judged case of `x` shows first: "METRIC of `V` on `W`: A →
/// B UNIT", and its first five cells (workload, variant, metric and unit,
/// both means).
fn shown(x: &Across) -> (String, Vec<String>) {
    let scale = scale_for(&x.a.metric.unit, x.a.summary.mean);
    let unit = scale.label(&x.a.metric.unit);
    let (before, now) = (scale.show(x.a.summary.mean), scale.show(x.b.summary.mean));
    (
        format!(
            "{} of `{}` on `{}`: {before} → {now} {unit}",
            x.b.metric.name, x.b.variant, x.b.workload
        ),
        vec![
            x.b.workload.clone(),
            x.b.variant.clone(),
            format!("{} ({unit})", x.b.metric.name),
            before,
            now,
        ],
    )
}

/// A noisy case whose spread between runs history cannot give.
fn unknown_spread(x: &Across, runs: usize) -> Case {
    let why = format!(
        "the spread between runs is unknown: {runs} stored run(s) of it on the baseline run's machine class, {} needed to judge and {} to pass (bench the baseline revision again on that machine class, or prefer `check --rev`)",
        lookback::FEWEST_RUNS,
        lookback::FEWEST_RUNS_TO_PASS
    );
    let (head, mut cells) = shown(x);
    cells.extend([
        format!("{:.3}", x.b.summary.mean / x.a.summary.mean),
        "–".to_owned(),
        "inconclusive: spread between runs unknown".to_owned(),
    ]);
    Case {
        workload: x.b.workload.clone(),
        variant: x.b.variant.clone(),
        metric: x.b.metric.name.clone(),
        status: Status::Inconclusive,
        message: format!("{head}: {why}"),
        cells,
        statistics: why,
    }
}

/// A noisy case that would pass on a spread from fewer than
/// [`lookback::FEWEST_RUNS_TO_PASS`] stored runs (`runs`): inconclusive,
/// saying how many it has and needs. A failure stands.
fn too_few_to_pass(mut c: Case, runs: usize) -> Case {
    if c.status != Status::Passed || runs >= lookback::FEWEST_RUNS_TO_PASS {
        return c;
    }
    c.status = Status::Inconclusive;
    let _ = write!(
        c.message,
        "; but the spread between runs comes from {runs} stored run(s) of the baseline run's machine class, and a pass needs {} (bench the baseline revision again on that machine class, or prefer `check --rev`)",
        lookback::FEWEST_RUNS_TO_PASS
    );
    if let Some(verdict) = c.cells.last_mut() {
        let _ = write!(
            verdict,
            "; too few runs to pass ({runs} of {})",
            lookback::FEWEST_RUNS_TO_PASS
        );
    }
    c
}

/// One judged case.
fn case(x: &Across, o: &Comparison, threshold: Percent) -> Case {
    let lower_is_better = x.b.metric.lower_is_better;
    let status = super::status_of(o, lower_is_better, threshold);
    let why = super::why(o, status, threshold, lower_is_better);
    let (ratio, low, high) = crate::stats::gate::deciding(o);
    let (head, mut cells) = shown(x);
    cells.extend([
        format!("{ratio:.3}"),
        format!("{low:.3}–{high:.3}"),
        format!(
            "{} ({})",
            o.verdict_text(),
            improvement(-crate::stats::gate::worse_pct(ratio, lower_is_better))
        ),
    ]);
    Case {
        workload: x.b.workload.clone(),
        variant: x.b.variant.clone(),
        metric: x.b.metric.name.clone(),
        status,
        message: format!("{head} ({ratio:.3}× [{low:.3}, {high:.3}]): {why}"),
        cells,
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
