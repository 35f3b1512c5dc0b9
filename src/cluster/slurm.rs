//! Slurm's own commands, each under a deadline: `sinfo` (is there a
//! cluster, how many nodes), `sbatch` (a job, its dependencies and array),
//! `squeue` and `scontrol` (where the jobs are) and `scancel`.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{bail, Context as _, Result};

use crate::experiment::Cluster;
use crate::process::{capture_cleanup, capture_command, quote_output, Captured, ProcessError};

/// A Slurm command answers within this, or the controller is not there.
const TIMEOUT: Duration = Duration::from_mins(1);

/// How a Slurm command is run: [`capture_command`], or [`capture_cleanup`]
/// for what must still run after Ctrl-C.
type Runner = fn(&mut Command, Duration) -> Result<Captured, ProcessError>;

fn slurm(program: &str, args: &[&str]) -> Result<String> {
    run(capture_command, program, args)
}

fn run(runner: Runner, program: &str, args: &[&str]) -> Result<String> {
    let mut command = Command::new(program);
    command.args(args);
    let out = runner(&mut command, TIMEOUT).map_err(|e| match e {
        ProcessError::Spawn { .. } => anyhow::anyhow!(
            "{e}\nhint: install Slurm's client (apt-get install slurm-client) and point SLURM_CONF at the cluster's slurm.conf"
        ),
        other => other.into(),
    })?;
    if !out.success() {
        bail!(
            "`{program} {}` failed ({}):\n{}",
            args.join(" "),
            crate::process::describe_status(out.status),
            quote_output(out.stderr.trim())
        );
    }
    Ok(out.stdout)
}

/// The partitions a user can submit to, or why there is no cluster here.
pub fn partitions() -> Result<Vec<String>> {
    let out = slurm("sinfo", &["-h", "-o", "%P"])
        .context("no Slurm cluster answers here (sinfo)\nhint: run where `sinfo` lists partitions, or set SLURM_CONF")?;
    Ok(out
        .lines()
        .map(|l| l.trim().trim_end_matches('*').to_owned())
        .filter(|l| !l.is_empty())
        .collect())
}

/// How many nodes `partition` (or the default partition) has.
pub fn node_count(partition: Option<&str>) -> Result<u32> {
    let mut args = vec!["-h", "-o", "%D|%P"];
    if let Some(p) = partition {
        args.extend(["-p", p]);
    }
    let out = slurm("sinfo", &args)?;
    let mut total = 0;
    for line in out.lines() {
        let Some((count, name)) = line.split_once('|') else {
            continue;
        };
        // Without -p, the default partition is marked with `*`.
        if partition.is_none() && !name.ends_with('*') {
            continue;
        }
        total += count.trim().parse::<u32>().unwrap_or(0);
    }
    Ok(total)
}

/// Node `name`'s state and, if it has one, the reason for it, as `sinfo`
/// says them ("down* (Not responding)"); `None` when it cannot tell.
pub fn node_state(name: &str) -> Option<String> {
    let out = slurm("sinfo", &["-h", "-N", "-n", name, "-o", "%T|%E"]).ok()?;
    let (state, reason) = out.lines().next()?.split_once('|')?;
    let reason = reason.trim();
    Some(if reason.is_empty() || reason == "none" {
        state.trim().to_owned()
    } else {
        format!("{} ({reason})", state.trim())
    })
}

/// A job to submit.
pub struct Submission<'a> {
    pub name: &'a str,
    pub script: &'a Path,
    pub log: &'a Path,
    /// Job ids it runs after, each having succeeded.
    pub after: &'a [String],
    /// `--array` indices.
    pub array: Option<&'a str>,
    /// Nodes each job (or array task) holds: 2 for a bench block whose
    /// load runs on a node of its own, else 1.
    pub nodes: u32,
}

/// The sbatch arguments of a submission under `cluster`'s settings.
pub fn sbatch_args(cluster: &Cluster, job: &Submission<'_>) -> Vec<String> {
    let mut args = vec![
        "--parsable".to_owned(),
        format!("--job-name={}", job.name),
        format!("--output={}", job.log.display()),
        // A failed dependency cancels its dependants instead of leaving
        // them pending for ever.
        "--kill-on-invalid-dep=yes".to_owned(),
        // A job whose node fails ends NODE_FAIL instead of starting again
        // by itself: the lost node may still be writing its block, and
        // `bench --resume` decides what runs again, and where it starts.
        "--no-requeue".to_owned(),
    ];
    if !job.after.is_empty() {
        args.push(format!("--dependency=afterok:{}", job.after.join(":")));
    }
    if let Some(array) = job.array {
        args.push(format!("--array={array}"));
    }
    if job.nodes > 1 {
        // A block whose load has a node of its own: the batch step (the
        // services) runs on the first, the load's steps on the second.
        args.push(format!("--nodes={}", job.nodes));
    }
    if let Some(p) = &cluster.partition {
        args.push(format!("--partition={p}"));
    }
    if let Some(t) = &cluster.time {
        args.push(format!("--time={t}"));
    }
    if let Some(a) = &cluster.account {
        args.push(format!("--account={a}"));
    }
    if cluster.exclusive {
        args.push("--exclusive".to_owned());
    }
    args.extend(cluster.sbatch.iter().cloned());
    args.push(job.script.display().to_string());
    args
}

/// Submit a job; returns its id.
pub fn submit(cluster: &Cluster, job: &Submission<'_>) -> Result<String> {
    let args = sbatch_args(cluster, job);
    let words: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = slurm("sbatch", &words).with_context(|| format!("submitting job `{}`", job.name))?;
    // --parsable prints `id` or `id;cluster`.
    let id = out.trim().split(';').next().unwrap_or_default().to_owned();
    if id.is_empty() || !id.bytes().all(|b| b.is_ascii_digit()) {
        bail!("sbatch printed no job id for `{}`: {out:?}", job.name);
    }
    Ok(id)
}

/// A job (or array task) as the scheduler sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seen {
    /// The job's id, or its array's.
    pub id: String,
    /// The array task, for a task of an array.
    pub task: Option<u32>,
    /// PENDING, RUNNING, COMPLETED, FAILED, CANCELLED, TIMEOUT, …
    pub state: String,
    pub node: String,
    /// Why it waits, or an exit code once done.
    pub detail: String,
}

/// The jobs among `ids` still queued or running (one line per array task).
pub fn queued(ids: &[String]) -> Result<Vec<Seen>> {
    queued_with(capture_command, ids)
}

fn queued_with(runner: Runner, ids: &[String]) -> Result<Vec<Seen>> {
    // Every job, filtered here: `squeue -j` errs on an id already purged.
    let out = run(runner, "squeue", &["-h", "-r", "-o", "%F|%K|%T|%N|%r"])?;
    Ok(out
        .lines()
        .filter_map(|line| {
            let f: Vec<&str> = line.split('|').collect();
            let [id, task, state, node, reason] = f[..] else {
                return None;
            };
            ids.iter().any(|i| i == id).then(|| Seen {
                id: id.to_owned(),
                task: task.parse().ok(),
                state: state.to_owned(),
                node: node.to_owned(),
                detail: reason.to_owned(),
            })
        })
        .collect())
}

/// What the controller still remembers of job `id` (its tasks, for an
/// array), finished ones included; empty once it has forgotten them.
pub fn show(id: &str) -> Vec<Seen> {
    let Ok(out) = slurm("scontrol", &["show", "job", "-o", id]) else {
        return Vec::new();
    };
    out.lines()
        .filter_map(|line| {
            let field = |key: &str| {
                line.split_whitespace()
                    .find_map(|w| w.strip_prefix(key).and_then(|v| v.strip_prefix('=')))
                    .map(str::to_owned)
            };
            let id = field("ArrayJobId").or_else(|| field("JobId"))?;
            Some(Seen {
                id,
                task: field("ArrayTaskId").and_then(|t| t.parse().ok()),
                state: field("JobState").unwrap_or_default(),
                node: field("NodeList").unwrap_or_default(),
                detail: field("ExitCode").map_or_else(String::new, |c| format!("exit code {c}")),
            })
        })
        .collect()
}

/// Cancel `ids` (arrays whole) and wait, up to a minute, until none is
/// queued any more. Runs after Ctrl-C, so through the clean-up runner,
/// which only its deadline stops.
pub fn cancel(ids: &[String]) -> Result<()> {
    if ids.is_empty() {
        return Ok(());
    }
    let words: Vec<&str> = ids.iter().map(String::as_str).collect();
    run(capture_cleanup, "scancel", &words)?;
    let started = Instant::now();
    while started.elapsed() < TIMEOUT {
        if queued_with(capture_cleanup, ids)?.is_empty() {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    bail!(
        "jobs {} were cancelled but are still queued after {TIMEOUT:?}\nhint: `squeue` shows them; `scancel` them again",
        ids.join(" ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sbatch_arguments_carry_every_setting() {
        let mut cluster = Cluster::slurm_defaults();
        cluster.partition = Some("bench".into());
        cluster.time = Some("1:00:00".into());
        cluster.account = Some("perf".into());
        cluster.sbatch = vec!["--constraint=epyc".into()];
        let after = ["12".to_owned(), "13".to_owned()];
        let job = Submission {
            name: "ab-bench",
            script: Path::new("/w/bench.sh"),
            log: Path::new("/w/bench-%a.log"),
            after: &after,
            array: Some("0-3"),
            nodes: 2,
        };
        let args = sbatch_args(&cluster, &job).join(" ");
        assert_eq!(
            args,
            "--parsable --job-name=ab-bench --output=/w/bench-%a.log --kill-on-invalid-dep=yes \
             --no-requeue --dependency=afterok:12:13 --array=0-3 --nodes=2 --partition=bench --time=1:00:00 --account=perf \
             --exclusive --constraint=epyc /w/bench.sh"
        );
    }
}
