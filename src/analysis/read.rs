//! Results redrawn from a run directory's records alone (read and checked
//! by [`crate::runs`]): the analysis, the load curves and instances from
//! the files beside the runs' logs, a cluster run's blocks, the shares of a
//! reference's gain and where the instructions went; or read back from a
//! `results.json`.

use std::path::Path;

use anyhow::{Context as _, Result};

use super::analyze::analyze;
use super::results::{LoadCurves, Results, WarningEntry};
use super::{instances, nodes, share};
use crate::measure::RunRecord;
use crate::runs::{last_counted_run, read_cpu, read_load, BenchMeta};

/// Redraw results from a run directory's raw files alone (read and
/// checked by [`crate::runs`]); what the check left out is a warning.
pub fn load_results(run_dir: &Path) -> Result<Results> {
    let recorded = crate::runs::read(run_dir)?;
    let mut results = analyze(&recorded.meta, &recorded.runs);
    results.loads = load_curves(&recorded.meta, &recorded.runs);
    results.instances = instances::read(&recorded.meta, &recorded.runs);
    for set in &results.instances {
        for i in set.instances.iter().filter(|i| !i.healthy) {
            results.warnings.push(WarningEntry {
                workload: Some(set.workload.clone()),
                metric: None,
                variant: Some(set.variant.clone()),
                message: format!(
                    "instance {} of {} (round {}): {}",
                    i.index,
                    set.instances.len(),
                    set.round + 1,
                    i.note.as_deref().unwrap_or("unhealthy")
                ),
            });
        }
    }
    results.nodes = nodes::read(&recorded.blocks);
    share::attach(&mut results);
    results.warnings.extend(nodes::disagreements(&results));
    // A cluster run's profiles are its blocks': the first explains.
    let explained_run = recorded.with_files();
    // A profile that cannot be read costs the report its section, not
    // the report itself.
    match crate::explain::explain(explained_run) {
        Ok(explained) => results.explained = explained,
        Err(error) => results.warnings.push(WarningEntry {
            workload: None,
            metric: None,
            variant: None,
            message: format!("no section \"Where the instructions went\": {error:#}"),
        }),
    }
    match crate::explain::simulation::read(explained_run) {
        Ok(simulated) => results.simulated = Some(simulated).filter(|s| !s.runs.is_empty()),
        Err(error) => results.warnings.push(WarningEntry {
            workload: None,
            metric: None,
            variant: None,
            message: format!("no section \"Simulated caches and branches\": {error:#}"),
        }),
    }
    results
        .warnings
        .extend(recorded.notes.into_iter().map(|message| WarningEntry {
            workload: None,
            metric: None,
            variant: None,
            message,
        }));
    Ok(results)
}

/// Read a run: a run directory (redrawn from its raw records) or a
/// `results.json` file.
pub fn read_run(path: &Path) -> Result<Results> {
    if path.is_dir() {
        return load_results(path);
    }
    let bytes = fs_err::read(path)?;
    let mut results: Results = serde_json::from_slice(&bytes).with_context(|| {
        format!("{} is not an afterburner results.json\nhint: pass a results.json or a run directory (runs/<id>/)", path.display())
    })?;
    upgrade(&mut results);
    Ok(results)
}

/// A results.json written before schema 4 showed the ratio of means as
/// `ratio` even where the median per-round ratio decided: move the median
/// into `ratio`, `ci_low`, `ci_high` and `p_value` (the ratio of means to
/// `mean_ratio`), so the number shown is the one that decided.
fn upgrade(results: &mut Results) {
    if results.schema_version >= 4 {
        return;
    }
    for c in &mut results.comparisons {
        let o = &mut c.outcome;
        o.mean_ratio = Some(o.ratio);
        o.mann_whitney_p = o.p_value;
        if let (Some(m), Some(low), Some(high)) =
            (o.median_ratio, o.median_ci_low, o.median_ci_high)
        {
            let lower_is_better = (o.improvement_pct - (1.0 - o.ratio) * 100.0).abs() < 1e-9;
            (o.ratio, o.ci_low, o.ci_high) = (m, low, high);
            o.improvement_pct = crate::stats::improvement(m, lower_is_better);
            o.estimate = crate::stats::Estimate::MedianRatio;
            o.p_value = o.signed_rank_p;
        }
    }
}

/// The curves of the last counted run of each load workload and variant,
/// read from the `<stem>.load.json` files beside the runs' logs.
pub fn load_curves(meta: &BenchMeta, runs: &[RunRecord]) -> Vec<LoadCurves> {
    let mut out = Vec::new();
    for workload in &meta.workloads {
        for variant in &meta.variants {
            let Some(run) = last_counted_run(runs, workload, &variant.name) else {
                continue;
            };
            let Some(outcome) = read_load(&run.stdout_log) else {
                continue;
            };
            out.push(LoadCurves {
                workload: workload.clone(),
                variant: variant.name.clone(),
                round: run.round,
                percentiles: outcome.summary.percentiles,
                series: outcome.series,
                cpu: read_cpu(&run.stdout_log),
                mix: outcome.summary.mix,
            });
        }
    }
    out
}

#[cfg(test)]
mod upgrade_tests {
    use super::*;

    /// A results.json of schema 3 showed the ratio of means as `ratio`
    /// where the median per-round ratio decided: read back, the median is
    /// the number shown, and the ratio of means keeps its own field.
    #[test]
    fn an_older_results_file_shows_the_estimate_that_decided() {
        let fixture = include_str!("../../tests/fixtures/results/hotpath.json");
        let mut old: serde_json::Value = serde_json::from_str(fixture).unwrap();
        old["schema_version"] = 3.into();
        for c in old["comparisons"].as_array_mut().unwrap() {
            let o = c.as_object_mut().unwrap();
            o.insert("ratio".to_owned(), o["mean_ratio"].clone());
            for key in ["estimate", "mean_ratio", "mann_whitney_p"] {
                o.remove(key);
            }
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("results.json");
        fs_err::write(&path, serde_json::to_vec(&old).unwrap()).unwrap();
        let results = read_run(&path).unwrap();
        let medians: Vec<_> = results
            .comparisons
            .iter()
            .filter(|c| c.outcome.median_ratio.is_some())
            .collect();
        assert!(!medians.is_empty());
        for c in medians {
            let o = &c.outcome;
            assert_eq!(Some(o.ratio), o.median_ratio);
            assert_eq!(o.estimate, crate::stats::Estimate::MedianRatio);
            assert_ne!(o.mean_ratio, Some(o.ratio), "{o:?}");
        }
    }
}
