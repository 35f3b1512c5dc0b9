//! A bench run analysed from its records alone: every workload's metrics per
//! variant, each variant against the baseline, the report's family of tests
//! corrected ([`super::family`]), and the warnings a reader needs.

use super::judge::{in_common, judge, options};
use super::results::{ComparisonEntry, Measurement, Results, RunCounts, WarningEntry};
use crate::measure::{Metric, RunRecord};
use crate::runs::{BenchMeta, Progress};
use crate::stats::{self, Precision};

/// Analyse a bench run.
pub fn analyze(meta: &BenchMeta, runs: &[RunRecord]) -> Results {
    let baseline = meta
        .variants
        .first()
        .map(|v| v.name.clone())
        .unwrap_or_default();
    let race = super::race::race(meta, runs);
    // A race's tables are the normal report over its survivors and the
    // baseline (the reference): a dropped candidate lives in the standings,
    // its interval against the leader the one that dropped it.
    let survivors = race.as_ref().map(|r| survivors_only(meta, r, &baseline));
    let judged = survivors.as_ref().unwrap_or(meta);
    let (measurements, mut comparisons, mut warnings) = compare_all(judged, runs, &baseline);
    super::family::correct(judged, &measurements, &mut comparisons);
    warnings.extend(super::agreement::work_versus_time(&comparisons));
    if let Some(message) = meta.environment.frequency_warning() {
        warnings.push(WarningEntry {
            workload: None,
            metric: None,
            variant: None,
            message,
        });
    }
    let failed = runs.iter().filter(|r| !r.success).count();
    if failed > 0 {
        warnings.push(WarningEntry {
            workload: None,
            metric: None,
            variant: None,
            message: format!("{failed} run(s) failed and are left out of the statistics; see raw.jsonl and logs/"),
        });
    }
    let mut progress = Progress::of(meta, runs);
    if let (Some(_), Some(stop)) = (&meta.race, &meta.stopped) {
        // A race ends by its own rule: its dropped candidates' missing
        // rounds are not a stopped bench's.
        progress.planned_rounds = meta.warmup + stop.rounds;
        progress.complete_rounds = progress.planned_rounds;
    }
    if progress.is_partial() {
        warnings.push(WarningEntry {
            workload: None,
            metric: None,
            variant: None,
            message: format!(
                "partial: {} of {} rounds (the bench was stopped; `afterburner bench --resume` finishes it)",
                progress.complete_rounds, progress.planned_rounds
            ),
        });
    }
    if let Some(race) = &race {
        race_warnings(race, &baseline, &mut warnings);
    }
    Results {
        schema_version: crate::runs::SCHEMA_VERSION,
        run_id: meta.run_id.clone(),
        target: meta.target.clone(),
        experiment: meta.experiment.clone(),
        seed: meta.seed,
        confidence: meta.confidence,
        equivalence: meta.equivalence,
        pinning: meta.pinning.clone(),
        repetitions: meta.stopped.as_ref().map_or(meta.repetitions, |s| s.rounds),
        sequential: meta.sequential.clone(),
        stopped: meta.stopped.clone(),
        warmup: meta.warmup,
        instruction_counter: meta.instruction_counter,
        environment: meta.environment.clone(),
        revision: meta.revision.clone(),
        baseline,
        variants: meta.variants.clone(),
        training_workloads: meta.training_workloads.clone(),
        workload_sets: meta.workload_sets.clone(),
        judging: meta.judging.clone(),
        measurements,
        comparisons,
        warnings,
        runs: RunCounts {
            total: runs.len(),
            warmup: runs.iter().filter(|r| r.warmup).count(),
            failed,
            planned_rounds: progress.planned_rounds,
            complete_rounds: progress.complete_rounds,
        },
        loads: Vec::new(),
        failures: super::failures::tally(meta, runs),
        instances: Vec::new(),
        nodes: Vec::new(),
        gain_shares: Vec::new(),
        race,
        explained: None,
        simulated: None,
    }
}

/// The bench as the report judges a race: its survivors and the baseline.
fn survivors_only(meta: &BenchMeta, race: &super::race::RaceResult, baseline: &str) -> BenchMeta {
    let mut view = meta.clone();
    view.variants
        .retain(|v| v.name == baseline || race.survivors.contains(&v.name));
    view
}

/// A race's warnings: a dropped (or screened) candidate's few rounds are
/// the race's decision, not a plan to fix with more repetitions; a dropped baseline
/// stops too, so every comparison rests on its rounds (paired), and the
/// report says so.
fn race_warnings(race: &super::race::RaceResult, baseline: &str, warnings: &mut Vec<WarningEntry>) {
    let out = |s: &&super::race::Standing| s.dropped_by.is_some() || s.status == "screened";
    let dropped: Vec<&str> = race
        .standings
        .iter()
        .filter(out)
        .map(|s| s.candidate.as_str())
        .collect();
    // Kept (`keep_baseline`), it ran every round after its drop too.
    let base_left = race
        .standings
        .iter()
        .filter(out)
        .find(|s| s.candidate == baseline && s.rounds < race.rounds);
    warnings.retain(|w| {
        !(w.message.starts_with("too few repetitions")
            && (base_left.is_some() || w.variant.as_deref().is_some_and(|v| dropped.contains(&v))))
    });
    if let Some(s) = base_left {
        warnings.push(WarningEntry {
            workload: None,
            metric: None,
            variant: None,
            message: format!(
                "the baseline `{baseline}` left the race after {} rounds and ran no more: each comparison against it pairs the rounds both ran; the race's standings set the candidates against each other",
                s.rounds
            ),
        });
    }
}

/// Every workload's metrics per variant, and each variant against the
/// baseline at the stated level (before the secondaries are corrected).
fn compare_all(
    meta: &BenchMeta,
    runs: &[RunRecord],
    baseline: &str,
) -> (Vec<Measurement>, Vec<ComparisonEntry>, Vec<WarningEntry>) {
    let mut measurements = Vec::new();
    let mut comparisons = Vec::new();
    let mut warnings = Vec::new();
    for workload in &meta.workloads {
        for metric in &meta.metrics {
            let per_variant: Vec<Measurement> = meta
                .variants
                .iter()
                .filter_map(|v| measurement(workload, metric, &v.name, runs))
                .collect();
            let Some(base) = per_variant.iter().find(|m| m.variant == baseline).cloned() else {
                measurements.extend(per_variant);
                continue;
            };
            if metric.cumulative && meta.judging.get(workload).is_some_and(|j| j.fixed_duration) {
                // A total over a fixed time grows with the work done: shown,
                // not judged; its per-request twin is.
                measurements.extend(per_variant);
                continue;
            }
            for m in per_variant.iter().filter(|m| m.variant != baseline) {
                if metric.precision == Precision::Share
                    && base.summary.max == 0.0
                    && m.summary.max == 0.0
                {
                    // Neither failed a request: nothing to judge, and no
                    // test to spend the report's level on.
                    continue;
                }
                match compare(meta, &base, m) {
                    Ok((entry, found)) => {
                        comparisons.push(entry);
                        warnings.extend(found);
                    }
                    Err(warning) => warnings.push(warning),
                }
            }
            measurements.extend(per_variant);
        }
    }
    (measurements, comparisons, warnings)
}

fn measurement(
    workload: &str,
    metric: &Metric,
    variant: &str,
    runs: &[RunRecord],
) -> Option<Measurement> {
    let mut pairs: Vec<(u32, f64)> = runs
        .iter()
        .filter(|r| r.workload == workload && r.variant == variant && !r.warmup && r.success)
        .filter_map(|r| metric.value(r).map(|v| (r.round, v)))
        .collect();
    pairs.sort_by_key(|p| p.0);
    let samples: Vec<f64> = pairs.iter().map(|p| p.1).collect();
    let summary = stats::summarize(&samples)?;
    Some(Measurement {
        workload: workload.to_owned(),
        metric: metric.clone(),
        variant: variant.to_owned(),
        rounds: pairs.iter().map(|p| p.0).collect(),
        samples,
        summary,
    })
}

fn compare(
    meta: &BenchMeta,
    base: &Measurement,
    m: &Measurement,
) -> Result<(ComparisonEntry, Vec<WarningEntry>), WarningEntry> {
    let common = in_common(meta, base, m);
    let (base, m) = common.as_ref().map_or((base, m), |(b, v)| (b, v));
    let options = options(meta, base, m);
    let paired = options.paired;
    let judged = judge(meta, base, m, &options);
    let Some(c) = judged else {
        let warning = WarningEntry {
            workload: Some(m.workload.clone()),
            metric: Some(m.metric.name.clone()),
            variant: Some(m.variant.clone()),
            message: format!("no ratio: the baseline's mean {} is zero", m.metric.name),
        };
        return Err(warning);
    };
    let warnings = stats::warnings(
        &base.summary,
        &m.summary,
        &c,
        m.metric.precision,
        meta.confidence,
    )
    .into_iter()
    .map(|w| WarningEntry {
        workload: Some(m.workload.clone()),
        metric: Some(m.metric.name.clone()),
        variant: Some(m.variant.clone()),
        message: w.to_string(),
    })
    .collect();
    let entry = ComparisonEntry {
        workload: m.workload.clone(),
        metric: m.metric.name.clone(),
        unit: m.metric.unit.clone(),
        variant: m.variant.clone(),
        baseline: base.variant.clone(),
        outcome: c,
        paired,
        primary: false,
        level: None,
    };
    Ok((entry, warnings))
}
