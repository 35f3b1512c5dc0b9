//! The paired regression rule of `check --rev`: each variant built from
//! the baseline revision ran in the same interleaved rounds as the one
//! built from the working tree, so each round gives one ratio, and the
//! spread that judges it is the spread between rounds of one run, the
//! only one the two builds share. Six or more rounds: the signed-rank
//! interval of the median ratio (what every report uses); fewer: the
//! paired t-test on the log ratios ([`crate::stats::paired_t`]), which can
//! decide 3 rounds where the rank test never can.

use anyhow::{bail, Result};

use super::{workloads, Case, Percent, Suite, Threshold};
use crate::analysis::results::Measurement;
use crate::analysis::Results;
use crate::report::format::{improvement, scale_for};
use crate::stats::gate::{paired_looks, PairedGate};
use crate::stats::{self, CompareOptions, Comparison, Precision};

/// Rounds under which no test decides anything.
pub const FEWEST_ROUNDS: usize = 3;
/// Rounds from which the signed-rank interval can reach 95%.
const RANK_ROUNDS: usize = 6;

/// The paired suite of `results`, each of `pairs` (variant, the same built
/// from revision `short`) judged on every workload's headline metric.
pub fn suite(
    results: &Results,
    pairs: &[(String, String)],
    short: &str,
    threshold: Threshold,
) -> Result<Suite> {
    let mut cases = Vec::new();
    for (workload, metric) in workloads(results) {
        for (now, before) in pairs {
            let (Some(a), Some(b)) = (
                results.measurement(workload, before, metric),
                results.measurement(workload, now, metric),
            ) else {
                continue;
            };
            let (xa, xb) = by_round(a, b);
            // An exact count is judged by its resolution, not by a test.
            if a.metric.precision == Precision::Noisy && xa.len() < FEWEST_ROUNDS {
                bail!(
                    "`{workload}`: {} paired rounds of `{now}` and `{before}` can decide nothing (the paired t-test needs at least {FEWEST_ROUNDS}, the signed-rank test {RANK_ROUNDS})\nhint: set `repetitions = {RANK_ROUNDS}` (or more) under [bench]",
                    xa.len()
                );
            }
            let Some(outcome) = judge(results, a, b, (&xa, &xb), threshold.of(a.metric.precision))
            else {
                continue;
            };
            cases.push(case(a, b, &outcome, threshold.of(a.metric.precision)));
        }
    }
    if cases.is_empty() {
        bail!("the run measured no headline metric of both builds\nhint: check that every variant's runs succeeded (report.md lists the failures)");
    }
    Ok(Suite {
        name: format!("paired regression against revision {short}"),
        rule: rule(short, threshold, results),
        columns: vec![
            "Workload",
            "Variant",
            "Metric",
            "Revision",
            "This tree",
            "Ratio",
            "CI",
            "Verdict",
        ],
        cases,
    })
}

/// The samples of the rounds both measured, in round order.
fn by_round(a: &Measurement, b: &Measurement) -> (Vec<f64>, Vec<f64>) {
    let mut xa = Vec::new();
    let mut xb = Vec::new();
    for (round, x) in a.rounds.iter().zip(&a.samples) {
        if let Some(i) = b.rounds.iter().position(|r| r == round) {
            xa.push(*x);
            xb.push(b.samples[i]);
        }
    }
    (xa, xb)
}

/// The pair judged: exact counts by their resolution; noisy ones of a
/// sequential run (`--budget`) look by look by the paired t at each look's
/// level, else by the signed-rank interval from six rounds, by the paired t
/// below.
fn judge(
    results: &Results,
    a: &Measurement,
    b: &Measurement,
    (xa, xb): (&[f64], &[f64]),
    threshold: Percent,
) -> Option<Comparison> {
    let noisy = a.metric.precision == Precision::Noisy;
    if let (true, Some(sequential)) = (noisy, &results.sequential) {
        let tagged = |m: &Measurement| -> Vec<(u32, f64)> {
            m.rounds
                .iter()
                .copied()
                .zip(m.samples.iter().copied())
                .collect()
        };
        let gate = PairedGate {
            equivalence: results.equivalence,
            lower_is_better: a.metric.lower_is_better,
            threshold_pct: threshold.0,
        };
        return paired_looks(&sequential.plan, &tagged(a), &tagged(b), gate).map(|looked| {
            let mut comparison = looked.comparison;
            comparison.rule = format!(
                "{} Sequential (`check --budget`): looks after {} rounds, this one after {} judged at {:.2}% confidence (repeated confidence intervals under the plan's alpha spending).",
                comparison.rule,
                sequential
                    .plan
                    .looks
                    .iter()
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join(", "),
                looked.rounds,
                looked.confidence * 100.0
            );
            comparison
        });
    }
    if noisy && xa.len() < RANK_ROUNDS {
        return stats::paired_t::compare(
            xa,
            xb,
            results.confidence,
            results.equivalence,
            a.metric.lower_is_better,
        );
    }
    stats::compare(
        xa,
        xb,
        &CompareOptions {
            confidence: results.confidence,
            paired: true,
            precision: a.metric.precision,
            lower_is_better: a.metric.lower_is_better,
            resamples: 10_000,
            seed: results.seed,
            equivalence: results.equivalence,
        },
    )
}

fn case(before: &Measurement, now: &Measurement, o: &Comparison, threshold: Percent) -> Case {
    let lower_is_better = now.metric.lower_is_better;
    let status = super::status_of(o, lower_is_better, threshold);
    let why = super::why(o, status, threshold, lower_is_better);
    // The estimate and interval that decided (the signed-rank one's from
    // six rounds), the ones the rule judged.
    let (ratio, low, high) = crate::stats::gate::deciding(o);
    let scale = scale_for(&now.metric.unit, before.summary.mean);
    let unit = scale.label(&now.metric.unit).to_owned();
    Case {
        workload: now.workload.clone(),
        variant: now.variant.clone(),
        metric: now.metric.name.clone(),
        status,
        message: format!(
            "{} of `{}` on `{}`: {} at the revision → {} {unit} here ({:.3}× [{:.3}, {:.3}], {} paired rounds): {why}",
            now.metric.name,
            now.variant,
            now.workload,
            scale.show(before.summary.mean),
            scale.show(now.summary.mean),
            ratio,
            low,
            high,
            now.samples.len().min(before.samples.len()),
        ),
        cells: vec![
            now.workload.clone(),
            now.variant.clone(),
            format!("{} ({unit})", now.metric.name),
            scale.show(before.summary.mean),
            scale.show(now.summary.mean),
            format!("{ratio:.3}"),
            format!("{low:.3}–{high:.3}"),
            format!(
                "{} ({})",
                o.verdict_text(),
                improvement(-crate::stats::gate::worse_pct(ratio, lower_is_better))
            ),
        ],
        statistics: o.rule.clone(),
    }
}

fn rule(short: &str, threshold: Threshold, results: &Results) -> String {
    let c = crate::stats::tidy(results.confidence * 100.0);
    let test = match &results.sequential {
        Some(s) => format!(
            "Rounds went on until every pair was decided or the budget ({:.0} s) ran out (`check --budget`): at each look (after {} rounds) Student's paired t-test on the log ratios, its interval at that look's level under group-sequential alpha spending (Lan–DeMets, Pocock-type), so that the intervals of all looks hold the true ratio together at {c}% (repeated confidence intervals, Jennison & Turnbull 1984); the first look that passes or fails a pair decides it.",
            s.budget_s,
            s.plan
                .looks
                .iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
        None => format!("Six or more rounds: the {c}% signed-rank interval of the median ratio; fewer: Student's paired t-test on the log ratios."),
    };
    format!(
        "Paired regression rule: every variant was built twice, from revision {short} and from this tree, and the two ran in the same interleaved rounds of one run; each round's ratio of the headline metric (time, unless `[bench] primary` says otherwise) is one observation, so the drift between runs (clock, neighbours) cancels. {test} {}",
        crate::stats::gate::rule_text(&threshold.describe())
    )
}
