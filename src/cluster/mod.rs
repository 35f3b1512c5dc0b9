//! A run on a cluster (`[cluster]` or `--slurm`): builds and training as
//! one chain of jobs per variant (train after its instrumented build, the
//! final build inside training), then the bench as a job array of N
//! blocks, each running the whole interleaved plan on its node
//! (`runs/<id>/blocks/<k>/`), the array after every build by Slurm's own
//! `afterok` dependencies. afterburner waits for the jobs (watching the
//! queue to say where they are), cancels them all on Ctrl-C, and merges
//! the blocks into one report with a per-node table.

pub mod kubernetes;
mod plan;
mod shared;
mod slurm;
mod status;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{bail, Context as _, Result};

pub use plan::phases;
pub use status::status;

use crate::context::Context;
use crate::experiment::Cluster;
use crate::progress;
use crate::runs::{self, ClusterRun, Job};

/// How a cluster run is asked for.
#[derive(Debug, Clone)]
pub struct Request {
    pub cluster: Cluster,
    /// The experiment file as the user gave it and whether `--quick`.
    pub file: PathBuf,
    pub quick: bool,
    /// Submit the builds and training too (`run`), not only the bench.
    pub build: bool,
    /// Submit and return, without waiting.
    pub detach: bool,
}

/// How often the queue is read while waiting.
const POLL: Duration = Duration::from_secs(2);
/// How long the queue may fail to answer before the wait gives up.
const QUEUE_GRACE: Duration = Duration::from_mins(5);

/// Submit a cluster run; returns its run directory once every job has
/// ended (or at once with `detach`). Blocks that did not finish are an
/// error naming their logs, after the run directory is complete enough to
/// report on what did.
pub fn run(cx: &Context, request: &Request) -> Result<PathBuf> {
    let e = &cx.experiment;
    if !request.build {
        // A bench alone runs the builds there are: say so now, not in N logs.
        for v in &e.variants {
            cx.bindings(v, crate::toolchain::Stage::Final)?;
        }
    }
    let partitions = slurm::partitions()?;
    if let Some(p) = &request.cluster.partition {
        if !partitions.contains(p) {
            bail!(
                "Slurm has no partition `{p}` (it has {})\nhint: set partition in [cluster] to one of them",
                partitions.join(", ")
            );
        }
    }
    let nodes = slurm::node_count(request.cluster.partition.as_deref())?;
    shared::check(&cx.workdir.root, nodes, request.cluster.shared)?;
    let program = afterburner(&request.cluster)?;
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let seed = e
        .bench
        .seed
        .unwrap_or_else(|| u64::from(now.subsec_nanos()) ^ now.as_secs());
    let run_id = crate::bench::run_id(now.as_secs(), &cx.workdir.runs());
    let run_dir = cx.workdir.run(&run_id);
    let mut record = ClusterRun {
        engine: "slurm".to_owned(),
        run_id: run_id.clone(),
        experiment: e.file.clone(),
        workdir: cx.workdir.root.clone(),
        quick: request.quick,
        seed,
        blocks: request.cluster.nodes,
        jobs: Vec::new(),
    };
    // Written first: every job checks that it can see it.
    runs::write_cluster(&run_dir, &record)?;
    fs_err::create_dir_all(run_dir.join(runs::JOB_LOGS_DIR))?;
    let submitter = Submitter {
        cluster: &request.cluster,
        program: &program,
        run_dir: &run_dir,
        base: base_args(cx, request),
    };
    let mut builds = Vec::new();
    let outcome = (|| -> Result<()> {
        if request.build {
            // Fetched once here: jobs of several variants would race for it.
            crate::source::fetch(&e.target.source, &cx.workdir.root)?;
            for from in e.variants.iter().filter_map(|v| v.profile_from.as_ref()) {
                crate::source::fetch(&from.source, &cx.workdir.root)?;
            }
            let phases = plan::phases(e, &request.cluster, true);
            for v in &phases.builds {
                let build = submitter.job("build", Some(v), &[], None)?;
                builds.push(build.id.clone());
                record.jobs.push(build.clone());
                if phases.trains.contains(v) {
                    let train = submitter.job("train", Some(v), &[build.id], None)?;
                    builds.push(train.id.clone());
                    record.jobs.push(train);
                }
                runs::write_cluster(&run_dir, &record)?;
            }
        }
        let array = format!("0-{}", request.cluster.nodes - 1);
        let bench = submitter.job("bench", None, &builds, Some(&array))?;
        record.jobs.push(bench);
        runs::write_cluster(&run_dir, &record)
    })();
    if let Err(error) = outcome {
        // No half-submitted run left queued.
        let ids: Vec<String> = record.jobs.iter().map(|j| j.id.clone()).collect();
        let _ = slurm::cancel(&ids);
        return Err(error);
    }
    say_submitted(&record, &run_dir);
    if request.detach {
        return Ok(run_dir);
    }
    finish(&record, &run_dir)?;
    Ok(run_dir)
}

/// Wait for the jobs; when some block did not finish, still write the
/// report of those that did, then say what failed.
fn finish(record: &ClusterRun, run_dir: &Path) -> Result<()> {
    let Err(error) = wait(record, run_dir) else {
        return Ok(());
    };
    if crate::interrupt::requested() {
        return Err(error);
    }
    let some_block_ran = runs::block_states(run_dir, record)
        .iter()
        .any(|(_, p)| p.is_some());
    if some_block_ran {
        if let Err(report) = crate::pipeline::report(run_dir) {
            progress::warn(format_args!("no report of the finished blocks: {report:#}"));
        }
    }
    Err(error)
}

/// `bench --resume` of a cluster run: resubmit the blocks that did not
/// finish (each goes on from its last finished run), then wait.
pub fn resume(cx: &Context, request: &Request) -> Result<PathBuf> {
    let run_dir = cx
        .workdir
        .latest_run()
        .filter(|d| runs::is_cluster(d))
        .with_context(|| {
            format!(
                "there is no cluster run to resume in {}\nhint: start one with `afterburner run --slurm`",
                cx.workdir.runs().display()
            )
        })?;
    let mut record = runs::read_cluster(&run_dir)?;
    let ids: Vec<String> = record.jobs.iter().map(|j| j.id.clone()).collect();
    let live = slurm::queued(&ids)?;
    if !live.is_empty() {
        bail!(
            "cluster run {} still has {} job(s) queued or running\nhint: `afterburner status` shows them; wait for them, or cancel them (scancel {}) before resuming",
            record.run_id,
            live.len(),
            ids.join(" ")
        );
    }
    let unfinished: Vec<String> = runs::block_states(&run_dir, &record)
        .into_iter()
        .filter(|(_, r)| r.as_ref().is_none_or(|r| r.progress.is_partial()))
        .map(|(k, _)| k.to_string())
        .collect();
    if unfinished.is_empty() {
        progress::info(format_args!(
            "every block of cluster run {} has finished; nothing to resubmit",
            record.run_id
        ));
        return Ok(run_dir);
    }
    let program = afterburner(&request.cluster)?;
    let submitter = Submitter {
        cluster: &request.cluster,
        program: &program,
        run_dir: &run_dir,
        base: base_args(cx, request),
    };
    let array = unfinished.join(",");
    let bench = submitter.job("bench", None, &[], Some(&array))?;
    progress::info(format_args!(
        "resubmitted block(s) {array} of cluster run {} as job {}",
        record.run_id, bench.id
    ));
    record.jobs.push(bench);
    runs::write_cluster(&run_dir, &record)?;
    if !request.detach {
        finish(&record, &run_dir)?;
    }
    Ok(run_dir)
}

/// The afterburner binary the jobs run: `[cluster] afterburner`, or this one.
fn afterburner(cluster: &Cluster) -> Result<PathBuf> {
    let program = match &cluster.afterburner {
        Some(path) => path.clone(),
        None => std::env::current_exe().context("cannot tell where this afterburner binary is")?,
    };
    if !program.is_file() {
        bail!(
            "the afterburner binary for the jobs, {}, is not a file\nhint: set afterburner = \"/shared/path/afterburner\" in [cluster]",
            program.display()
        );
    }
    Ok(program)
}

/// The arguments every job's afterburner gets: the experiment file and
/// work directory as absolute paths, `--local`, and `--quick` if asked.
fn base_args(cx: &Context, request: &Request) -> Vec<String> {
    let file = std::path::absolute(&request.file).unwrap_or_else(|_| request.file.clone());
    let mut args = vec![
        file.display().to_string(),
        "--workdir".to_owned(),
        cx.workdir.root.display().to_string(),
        "--local".to_owned(),
    ];
    if request.quick {
        args.push("--quick".to_owned());
    }
    args
}

/// Writes job scripts into the run directory and submits them.
struct Submitter<'a> {
    cluster: &'a Cluster,
    program: &'a Path,
    run_dir: &'a Path,
    base: Vec<String>,
}

impl Submitter<'_> {
    /// Submit `step` (build, train or bench) for `variant`, after `after`.
    fn job(
        &self,
        step: &str,
        variant: Option<&str>,
        after: &[String],
        array: Option<&str>,
    ) -> Result<Job> {
        let logs = self.run_dir.join(runs::JOB_LOGS_DIR);
        let file_stem = match variant {
            Some(v) => format!("{step}-{v}"),
            None => step.to_owned(),
        };
        let log = if array.is_some() {
            logs.join(format!("{file_stem}-%a.log"))
        } else {
            logs.join(format!("{file_stem}.log"))
        };
        let mut args = vec![step.to_owned()];
        args.extend(self.base.iter().cloned());
        if let Some(v) = variant {
            args.extend(["--variant".to_owned(), v.to_owned()]);
        }
        if step == "bench" {
            let run_id = self
                .run_dir
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            args.extend(["--run".to_owned(), run_id]);
            // The task's index is the block's; the shell expands it.
            args.push("--block".to_owned());
        }
        let script = logs.join(format!("{file_stem}.sh"));
        fs_err::write(
            &script,
            script_text(self.program, self.run_dir, &args, step == "bench"),
        )?;
        let name = format!("afterburner-{file_stem}");
        let id = slurm::submit(
            self.cluster,
            &slurm::Submission {
                name: &name,
                script: &script,
                log: &log,
                after,
                array,
                nodes: if step == "bench"
                    && self.cluster.load == crate::experiment::LoadPlacement::Separate
                {
                    2
                } else {
                    1
                },
            },
        )?;
        progress::info(format_args!("submitted {file_stem} as Slurm job {id}"));
        Ok(Job {
            id,
            step: step.to_owned(),
            variant: variant.map(str::to_owned),
            array: array.map(str::to_owned),
            log,
        })
    }
}

/// A job's batch script: check that this node sees the run directory,
/// then run afterburner (a bench task with its array index as block).
fn script_text(program: &Path, run_dir: &Path, args: &[String], block: bool) -> String {
    let quoted: Vec<String> = args
        .iter()
        .map(|a| shell_words::quote(a).into_owned())
        .collect();
    let marker = run_dir.join(runs::CLUSTER_FILE);
    format!(
        "#!/bin/bash\n# Written by afterburner for run {run}.\nif [ ! -f {marker} ]; then\n  echo \"afterburner: {marker} is not visible on $(hostname): the work directory must be on storage every node sees\" >&2\n  exit {code}\nfi\nexec {program} {args}{block}\n",
        run = run_dir.display(),
        marker = shell_words::quote(&marker.display().to_string()),
        code = shared::NOT_SHARED_EXIT,
        program = shell_words::quote(&program.display().to_string()),
        args = quoted.join(" "),
        block = if block { " \"$SLURM_ARRAY_TASK_ID\"" } else { "" },
    )
}

fn say_submitted(record: &ClusterRun, run_dir: &Path) {
    progress::info(format_args!(
        "cluster run {}: {} job(s), {} bench block(s); logs in {}\n`afterburner status` shows them; `afterburner report` merges the blocks",
        record.run_id,
        record.jobs.len(),
        record.blocks,
        run_dir.join(runs::JOB_LOGS_DIR).display()
    ));
}

/// Wait until no job of `record` is queued, saying each change of state;
/// on Ctrl-C, cancel them all. Then check that every block finished.
fn wait(record: &ClusterRun, run_dir: &Path) -> Result<()> {
    let ids: Vec<String> = record.jobs.iter().map(|j| j.id.clone()).collect();
    let mut last: Vec<slurm::Seen> = Vec::new();
    let mut failing_since: Option<Instant> = None;
    loop {
        if crate::interrupt::requested() {
            progress::warn(format_args!(
                "cancelling the jobs of cluster run {}: {}",
                record.run_id,
                ids.join(" ")
            ));
            slurm::cancel(&ids)?;
            bail!(
                "cancelled Slurm job(s) {} of cluster run {}; every finished run of each block is in {}/*/raw.jsonl; `afterburner bench --resume` resubmits the unfinished blocks",
                ids.join(" "),
                record.run_id,
                run_dir.join(runs::BLOCKS_DIR).display()
            );
        }
        let seen = match slurm::queued(&ids) {
            Ok(seen) => {
                failing_since = None;
                seen
            }
            Err(error) => {
                let since = *failing_since.get_or_insert_with(Instant::now);
                if since.elapsed() > QUEUE_GRACE {
                    return Err(error.context(format!(
                        "the Slurm queue did not answer for {QUEUE_GRACE:?}; the jobs may still run\nhint: `afterburner status` once the controller is back"
                    )));
                }
                Vec::new()
            }
        };
        if failing_since.is_none() {
            for s in &seen {
                if !last.iter().any(|l| l == s) {
                    progress::info(format_args!(
                        "  {}: {}",
                        status::job_name(record, s),
                        status::where_(s)
                    ));
                }
            }
            if seen.is_empty() {
                break;
            }
            last = seen;
        }
        std::thread::sleep(POLL);
    }
    check_finished(record, run_dir)
}

/// Every job has left the queue: say which failed, with its log.
fn check_finished(record: &ClusterRun, run_dir: &Path) -> Result<()> {
    let mut failures = Vec::new();
    for job in record.jobs.iter().filter(|j| j.step != "bench") {
        let ended = slurm::show(&job.id);
        if let Some(s) = ended.iter().find(|s| s.state != "COMPLETED") {
            failures.push(status::failure(job, None, s));
        }
    }
    if let Some(bench) = record.jobs.iter().rev().find(|j| j.step == "bench") {
        // One question to the controller for every task of the array.
        let tasks = slurm::show(&bench.id);
        for (k, block) in runs::block_states(run_dir, record) {
            let progress = block.map(|r| r.progress);
            if progress.is_some_and(|p| !p.is_partial()) {
                continue;
            }
            let seen = tasks
                .iter()
                .find(|s| s.task == Some(k))
                .cloned()
                .unwrap_or_else(|| slurm::Seen {
                    id: bench.id.clone(),
                    task: Some(k),
                    state: "unknown".to_owned(),
                    node: String::new(),
                    detail: match progress {
                        Some(p) => format!("{} of {} rounds", p.complete_rounds, p.planned_rounds),
                        None => "no finished run".to_owned(),
                    },
                });
            failures.push(status::failure(bench, Some(k), &seen));
        }
    }
    if failures.is_empty() {
        return Ok(());
    }
    bail!(
        "cluster run {} did not finish:\n{}\nhint: fix the cause, then `afterburner bench --resume` resubmits only the unfinished blocks; `afterburner report` shows the finished ones",
        record.run_id,
        failures.join("\n")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_job_script_checks_the_shared_directory_then_runs_its_block() {
        let args = vec![
            "bench".to_owned(),
            "/x/my file.toml".to_owned(),
            "--block".to_owned(),
        ];
        let text = script_text(
            Path::new("/bin/afterburner"),
            Path::new("/w/runs/1"),
            &args,
            true,
        );
        assert!(
            text.contains("if [ ! -f /w/runs/1/cluster.json ]"),
            "{text}"
        );
        assert!(text.contains("exit 97"), "{text}");
        assert!(
            text.contains(
                "exec /bin/afterburner bench '/x/my file.toml' --block \"$SLURM_ARRAY_TASK_ID\""
            ),
            "{text}"
        );
    }
}
