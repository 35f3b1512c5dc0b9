//! `afterburner status`: a cluster run's jobs (queued, running or ended,
//! as far as the controller remembers), each block's progress, and the
//! log of anything that failed.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::Result;

use super::shared::NOT_SHARED_EXIT;
use super::slurm::{self, Seen};
use crate::runs::{self, ClusterRun, Job};

/// A job or array task in a few words: "bench block 1 (job 12)".
pub(super) fn job_name(record: &ClusterRun, seen: &Seen) -> String {
    let job = record.jobs.iter().find(|j| j.id == seen.id);
    let what = match (job, seen.task) {
        (Some(j), Some(k)) if j.step == "bench" => format!("bench block {k}"),
        (Some(j), _) => match &j.variant {
            Some(v) => format!("{} {v}", j.step),
            None => j.step.clone(),
        },
        (None, _) => "job".to_owned(),
    };
    match seen.task {
        Some(k) => format!("{what} (job {}_{k})", seen.id),
        None => format!("{what} (job {})", seen.id),
    }
}

/// Whether the scheduler names the node it ran (or runs) on.
fn has_node(seen: &Seen) -> bool {
    !seen.node.is_empty() && seen.node != "(null)"
}

/// Its state, node and why it waits (or how it ended).
pub(super) fn where_(seen: &Seen) -> String {
    let mut text = seen.state.clone();
    if has_node(seen) {
        let _ = write!(text, " on {}", seen.node);
    }
    if !seen.detail.is_empty() && seen.detail != "None" {
        let _ = write!(text, " ({})", seen.detail);
    }
    text
}

/// A failed job or block: what happened, its log and the log's tail.
pub(super) fn failure(job: &Job, task: Option<u32>, seen: &Seen) -> String {
    let log = job.log_of(task);
    let what = match (task, &job.variant) {
        (Some(k), _) => format!("block {k}"),
        (None, Some(v)) => format!("{} of variant `{v}`", job.step),
        (None, None) => job.step.clone(),
    };
    let mut text = format!("  {what}: {}", where_(seen));
    // The node's state when it is not simply up (down, drained, not
    // responding: `*`), which is often why the job ended.
    if has_node(seen) {
        if let Some(state) = slurm::node_state(&seen.node) {
            let up = ["idle", "allocated", "mixed", "completing", "reserved"];
            if !up.contains(&state.as_str()) {
                let _ = write!(text, "; node {} is now {state}", seen.node);
            }
        }
    }
    let _ = write!(text, "; log {}", log.display());
    if seen.state == "NODE_FAIL" {
        let _ = write!(
            text,
            "\n    the node was lost while the job ran{}",
            if task.is_some() {
                ": `afterburner bench --resume` runs this block again on another node, from its start"
            } else {
                ""
            }
        );
    }
    if seen
        .detail
        .contains(&format!("exit code {NOT_SHARED_EXIT}:"))
    {
        text.push_str(
            "\n    the node could not see the work directory: put it on storage every node sees",
        );
    }
    let tail = crate::workdir::tail(&log, 8);
    if tail.trim().is_empty() {
        if !log.exists() {
            text.push_str(
                "\n    (no log: the job never started, or its node cannot see the work directory)",
            );
        }
    } else {
        for line in tail.lines() {
            let _ = write!(text, "\n    | {line}");
        }
    }
    text
}

/// The status of the run in `run_dir`, as text.
pub fn status(run_dir: &Path) -> Result<String> {
    let mut out = String::new();
    if !runs::is_cluster(run_dir) {
        let recorded = runs::read(run_dir)?;
        let _ = writeln!(
            out,
            "run {} (on this machine): {} of {} rounds complete, {} runs recorded",
            recorded.meta.run_id,
            recorded.progress.complete_rounds,
            recorded.progress.planned_rounds,
            recorded.runs.len()
        );
        return Ok(out);
    }
    let record = runs::read_cluster(run_dir)?;
    let _ = writeln!(
        out,
        "cluster run {} ({}): {} bench block(s), seed {}",
        record.run_id, record.engine, record.blocks, record.seed
    );
    let ids: Vec<String> = record.jobs.iter().map(|j| j.id.clone()).collect();
    let queued = slurm::queued(&ids).unwrap_or_default();
    let _ = writeln!(out, "\njobs:");
    for job in &record.jobs {
        let mut seen: Vec<Seen> = queued.iter().filter(|s| s.id == job.id).cloned().collect();
        if seen.is_empty() {
            seen = slurm::show(&job.id);
        }
        if seen.is_empty() {
            let _ = writeln!(
                out,
                "  {} (job {}): no longer known to the controller; log {}",
                job.variant
                    .as_ref()
                    .map_or_else(|| job.step.clone(), |v| format!("{} {v}", job.step)),
                job.id,
                job.log.display()
            );
        }
        for s in &seen {
            let _ = writeln!(out, "  {}: {}", job_name(&record, s), where_(s));
        }
    }
    let _ = writeln!(out, "\nblocks:");
    for (k, block) in runs::block_states(run_dir, &record) {
        let _ = match block {
            Some(r) => writeln!(
                out,
                "  block {k} on {}: {} of {} rounds{}",
                r.meta.environment.hostname.as_deref().unwrap_or("-"),
                r.progress.complete_rounds,
                r.progress.planned_rounds,
                if r.progress.is_partial() {
                    ""
                } else {
                    " (finished)"
                }
            ),
            None => writeln!(out, "  block {k}: not started"),
        };
    }
    let live = !queued.is_empty();
    let _ = writeln!(
        out,
        "\n{}",
        if live {
            "jobs are still queued or running; Ctrl-C in the afterburner that submitted them (or scancel) cancels them"
        } else {
            "no job is queued: `afterburner report` merges the finished blocks; `afterburner bench --resume` resubmits the others"
        }
    );
    Ok(out)
}
