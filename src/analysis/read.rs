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
    serde_json::from_slice(&bytes).with_context(|| {
        format!("{} is not an afterburner results.json\nhint: pass a results.json or a run directory (runs/<id>/)", path.display())
    })
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
