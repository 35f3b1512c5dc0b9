//! The bench phase: every variant on every benchmark workload, in rounds
//! whose order is shuffled with a recorded seed, warmup first; each finished
//! run is appended to `raw.jsonl` and synced before the next starts.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context as _, Result};

mod meta;
pub(crate) mod race;
mod runner;
pub(crate) mod sequential;
mod simulate;

use crate::served::remote::RemoteLoad;
pub use crate::served::remote::{step as load_step, StepArgs as LoadStepArgs};
use meta::bench_meta;
pub(crate) use meta::run_id;
use runner::{planned_runs, Runner};

pub use simulate::simulate;

use crate::context::Context;
use crate::env;
use crate::experiment::{Bindings, Experiment};
use crate::measure::{InstructionCounter, RunKind};
use crate::metric::Builtin;
use crate::rng::Rng;
use crate::runs::{self, BenchMeta, StopReason};
use crate::toolchain::{tools, Stage};

/// A run already in `raw.jsonl`, by its place in the plan: a resumed
/// bench skips it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct DoneRun {
    round: u32,
    workload: String,
    variant: String,
    kind: RunKind,
}

/// A bench stopped by Ctrl-C or SIGTERM: every finished run is in its run
/// directory, which a caller can still report on (as partial).
#[derive(Debug, thiserror::Error)]
#[error("the bench of run {} was stopped", .run_dir.display())]
pub struct Stopped {
    pub run_dir: PathBuf,
}

/// Run the benchmark; returns the run directory. With `resume`, continue the
/// latest run: same seed, so the same order, skipping every run that
/// finished successfully. The work directory is locked meanwhile: a second
/// bench, resume or build refuses.
pub fn bench(cx: &Context, resume: bool) -> Result<PathBuf> {
    let lock = cx.workdir.lock("a bench is starting")?;
    let bindings = final_bindings(cx)?;
    let started = if resume {
        resume_run(cx, lock)?
    } else {
        start_run(cx, lock)?
    };
    run_plan(cx, bindings, started, resume, None, None)
}

/// `afterburner calibrate`'s bench: the same plan, runner and records as
/// [`bench`], in a run directory under `calibrations/`, its counted rounds
/// going on (from 2, up to the experiment's repetitions) until `budget`
/// (warmup included) cannot fit another. Returns the run directory.
pub fn calibration_bench(cx: &Context, budget: std::time::Duration) -> Result<PathBuf> {
    let lock = cx.workdir.lock("a calibration is starting")?;
    let bindings = final_bindings(cx)?;
    let started = start_in(cx, lock, |meta| {
        meta.run_id = run_id(meta_secs(), &cx.workdir.calibrations());
        cx.workdir.calibrations().join(&meta.run_id)
    })?;
    run_plan(cx, bindings, started, false, None, Some(budget))
}

/// Seconds since the epoch, for a run id.
fn meta_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs()
}

/// Every variant's final build, bound for runs.
fn final_bindings(cx: &Context) -> Result<Vec<Bindings>> {
    cx.experiment
        .variants
        .iter()
        .map(|v| cx.bindings(v, Stage::Final))
        .collect()
}

/// One block of cluster run `run_id` (a task of its job array): the whole
/// interleaved plan in the block's own run directory
/// (`runs/<id>/blocks/<k>/`), with its own seed and this node's
/// environment; a block that already has runs goes on where it stopped.
/// Locks the block alone: blocks on other nodes share the work directory.
pub fn bench_block(cx: &Context, run_id: &str, k: u32) -> Result<PathBuf> {
    let run_dir = cx.workdir.run(run_id);
    let cluster = runs::read_cluster(&run_dir)?;
    if k >= cluster.blocks {
        bail!(
            "cluster run {run_id} has blocks 0 to {}, not {k}\nhint: the job array's task index names the block",
            cluster.blocks.saturating_sub(1)
        );
    }
    let dir = runs::block_dir(&run_dir, k);
    let lock = lock_block(&run_dir, k)?;
    let mut bindings = final_bindings(cx)?;
    let remote = separate_load(cx, cluster.quick)?;
    if let Some(remote) = &remote {
        for b in &mut bindings {
            b.host = Some(remote.path.service_address.clone());
        }
        crate::progress::info(format_args!("block {k}: {}", remote.path.describe()));
    }
    let resume = dir.join(crate::workdir::META_FILE).is_file();
    let mut started = if resume {
        resume_at(cx, &dir, lock)?
    } else {
        start_in(cx, lock, |meta| {
            meta.run_id = format!("{run_id}-block{k}");
            meta.seed = runs::block_seed(cluster.seed, k);
            dir.clone()
        })?
    };
    let load_path = remote.as_ref().map(|r| r.path.clone());
    if started.meta.load_path != load_path {
        // Where this block's load runs now (a resumed block's may differ).
        started.meta.load_path = load_path;
        started.writer.rewrite_meta(&started.meta)?;
    }
    run_plan(cx, bindings, started, resume, remote.as_ref(), None)
}

/// The load node of a block with `[cluster] load = "separate"`.
fn separate_load(cx: &Context, quick: bool) -> Result<Option<RemoteLoad>> {
    let e = &cx.experiment;
    if e.cluster.as_ref().map(|c| c.load) != Some(crate::experiment::LoadPlacement::Separate) {
        return Ok(None);
    }
    RemoteLoad::discover(&e.file, quick).map(Some)
}

/// Lock block `k`'s directory. A block that ran on another node (lost, or
/// resubmitted elsewhere) starts over here: its runs are set aside, not
/// continued, so that the pairs of a round, and the block as a stratum,
/// stay on one node and the report names the node they ran on.
fn lock_block(run_dir: &Path, k: u32) -> Result<crate::lockfile::Held> {
    let dir = runs::block_dir(run_dir, k);
    fs_err::create_dir_all(&dir)?;
    let lock_file = dir.join(crate::workdir::LOCK_FILE);
    let lock = crate::lockfile::acquire(&lock_file, "a block is starting")?;
    let Ok(meta) = runs::read_meta(&dir) else {
        return Ok(lock);
    };
    let here = env::hostname();
    let there = meta.environment.hostname;
    if there.is_none() || here.is_none() || there == here {
        return Ok(lock);
    }
    let there = there.unwrap_or_default();
    let aside = runs::set_aside(run_dir, k, &there)?;
    crate::progress::warn(format_args!(
        "block {k} ran on {there} before, not on {}: it starts over here, its runs there set aside in {} (a block's pairs stay on one node)",
        here.unwrap_or_default(),
        aside.display()
    ));
    // The lock went with the directory; a lock is re-entrant by path, so
    // the old one goes before the new directory's is taken.
    drop(lock);
    fs_err::create_dir_all(&dir)?;
    Ok(crate::lockfile::acquire(&lock_file, "a block is starting")?)
}

/// Run the rounds of a started (or resumed) bench; with `budget`, rounds
/// until it ends ([`calibration_bench`]).
fn run_plan(
    cx: &Context,
    bindings: Vec<Bindings>,
    started: Started,
    resume: bool,
    remote: Option<&RemoteLoad>,
    budget: Option<std::time::Duration>,
) -> Result<PathBuf> {
    let e = &cx.experiment;
    let Started {
        meta,
        writer,
        done,
        notes,
    } = started;
    let run_dir = writer.dir().to_owned();
    let bindings = with_state(bindings, e, &run_dir);
    ready_machine(e, &meta)?;
    let mut runner = Runner {
        cx,
        meta: &meta,
        bindings: &bindings,
        logs: run_dir.join("logs"),
        scratch: run_dir.join("scratch"),
        raw: writer,
        done,
        made: 0,
        progress: crate::progress::runs(planned_runs(e, meta.instruction_counter)),
        all_cpus: crate::pinning::CpuSet(crate::pinning::allowed()),
        remote,
        alive: vec![true; e.variants.len()],
        orders: std::collections::HashMap::new(),
    };
    fs_err::create_dir_all(&runner.logs)?;
    for note in notes {
        runner.progress.warn(format_args!("{note}"));
    }
    let mut rng = Rng::new(meta.seed);
    runner.progress.line(format_args!(
        "benchmarking {} variants × {} workloads: {} warmup + {} rounds, order shuffled with seed {}{}",
        e.variants.len(),
        meta.workloads.len(),
        e.bench.warmup,
        e.bench.repetitions,
        meta.seed,
        if resume { format!(", resuming with {} runs done", runner.done.len()) } else { String::new() }
    ));
    if let Some(race) = meta.race.clone() {
        if resume {
            // Who the race screened and dropped is replayed from the
            // records, up to the last round before the last recorded one
            // (that one may be cut short; the rounds take its look again
            // once it is whole).
            let runs = runs::read_records(&run_dir.join(crate::workdir::RAW_FILE), &meta)?.runs;
            let rounds = crate::analysis::race::rounds_recorded(&meta, &runs).saturating_sub(1);
            let so_far = crate::analysis::race::so_far(&meta, &race.plan, &runs, rounds);
            for out in so_far.out() {
                runner.alive[out] = false;
            }
        }
        let stop = runner.race_rounds(&race, &mut rng);
        return record_stop(&mut runner, &meta, stop, run_dir);
    }
    if let Some(budget) = budget {
        let stop = runner.budget_rounds(budget, &mut rng);
        return record_stop(&mut runner, &meta, stop, run_dir);
    }
    let Some(plan) = meta.sequential.clone() else {
        for round in 0..e.bench.warmup + e.bench.repetitions {
            if let Err(error) = runner.round(round, &mut rng) {
                return Err(stopped_or(error, run_dir));
            }
        }
        return Ok(run_dir);
    };
    sequential_rounds(&mut runner, &meta, &plan, &mut rng, run_dir)
}

/// Each variant's bindings with its services' state directory: the state
/// (a database a setup step made) lasts across the variant's runs of this
/// bench.
fn with_state(bindings: Vec<Bindings>, e: &Experiment, run_dir: &Path) -> Vec<Bindings> {
    bindings
        .into_iter()
        .zip(&e.variants)
        .map(|(mut b, v)| {
            b.state_root = Some(run_dir.join(STATE_DIR).join(&v.name));
            b
        })
        .collect()
}

/// What the bench needs of the machine: valgrind for callgrind's counts,
/// ASLR off where the bench asks.
fn ready_machine(e: &Experiment, meta: &BenchMeta) -> Result<()> {
    if e.bench.metrics.contains(&Builtin::INSTRUCTIONS)
        && meta.instruction_counter == InstructionCounter::Callgrind
    {
        tools::ensure(&[tools::VALGRIND])?;
    }
    if !e.bench.aslr {
        without_aslr()?;
    }
    Ok(())
}

/// A sequential plan's rounds until its rule stops them, the stop said
/// and kept in `meta.json`.
fn sequential_rounds(
    runner: &mut Runner,
    meta: &BenchMeta,
    plan: &crate::runs::SequentialMeta,
    rng: &mut Rng,
    run_dir: PathBuf,
) -> Result<PathBuf> {
    let stop = match runner.sequential_rounds(plan, rng) {
        Ok(stop) => stop,
        Err(error) => return Err(stopped_or(error, run_dir)),
    };
    runner.progress.line(format_args!(
        "stopped after {} rounds: {} ({} of {} primary comparisons decided)",
        stop.rounds,
        match stop.reason {
            StopReason::Decided => "every primary comparison decided".to_owned(),
            StopReason::Budget => format!(
                "the budget of {:.0} s leaves no room for another round",
                plan.budget_s
            ),
            StopReason::Max => format!("the most rounds, max = {}", plan.plan.max),
        },
        stop.decided,
        stop.comparisons,
    ));
    runner.raw.rewrite_meta(&BenchMeta {
        stopped: Some(stop),
        ..meta.clone()
    })?;
    Ok(run_dir)
}

/// Record in `meta.json` why rounds watched by their own rule (a race's,
/// a calibration's budget) stopped; a failed round is [`stopped_or`].
fn record_stop(
    runner: &mut Runner<'_>,
    meta: &BenchMeta,
    stop: Result<runs::SequentialStop>,
    run_dir: PathBuf,
) -> Result<PathBuf> {
    let stop = match stop {
        Ok(stop) => stop,
        Err(error) => return Err(stopped_or(error, run_dir)),
    };
    runner.raw.rewrite_meta(&BenchMeta {
        stopped: Some(stop),
        ..meta.clone()
    })?;
    Ok(run_dir)
}

pub use crate::served::STATE_DIR;

/// A failed round: [`Stopped`] when Ctrl-C or SIGTERM caused it (every
/// finished run is on disk, for a partial report), else the error itself.
fn stopped_or(error: anyhow::Error, run_dir: PathBuf) -> anyhow::Error {
    if crate::interrupt::requested() {
        error.context(Stopped { run_dir })
    } else {
        error
    }
}

/// What a bench starts from.
struct Started {
    /// Its plan.
    meta: BenchMeta,
    /// The writer of its run directory.
    writer: runs::Writer,
    /// The runs already done.
    done: HashSet<DoneRun>,
    /// What reading them back left out.
    notes: Vec<String>,
}

/// Create a new run directory and its `meta.json`.
fn start_run(cx: &Context, lock: crate::lockfile::Held) -> Result<Started> {
    start_in(cx, lock, |meta| cx.workdir.run(&meta.run_id))
}

/// Plan a bench on this machine (its environment, its counter) and create
/// its run directory, which `place` names after adjusting the plan (a
/// cluster block's id and seed).
fn start_in(
    cx: &Context,
    lock: crate::lockfile::Held,
    place: impl FnOnce(&mut BenchMeta) -> PathBuf,
) -> Result<Started> {
    let environment = env::capture();
    let counter = InstructionCounter::detect(environment.perf_counters);
    let mut meta = bench_meta(cx, environment, counter)?;
    let dir = place(&mut meta);
    let writer = runs::Writer::create(&dir, &meta, lock)?;
    Ok(Started {
        meta,
        writer,
        done: HashSet::new(),
        notes: Vec::new(),
    })
}

/// Reopen the latest run, if it is a run of this same plan.
fn resume_run(cx: &Context, lock: crate::lockfile::Held) -> Result<Started> {
    let run_dir = cx.workdir.latest_run().with_context(|| {
        format!(
            "there is no bench run to resume in {}\nhint: run `afterburner bench` without --resume",
            cx.workdir.runs().display()
        )
    })?;
    if runs::is_cluster(&run_dir) {
        bail!(
            "the latest run {} is a cluster run: its blocks resume as cluster jobs\nhint: run `afterburner bench --resume` with the experiment's [cluster] section (or --slurm)",
            run_dir.display()
        );
    }
    resume_at(cx, &run_dir, lock)
}

/// Reopen the run directory `run_dir`, if it is a run of this same plan.
fn resume_at(cx: &Context, run_dir: &Path, lock: crate::lockfile::Held) -> Result<Started> {
    let e = &cx.experiment;
    let meta = runs::read_meta(run_dir)?;
    if let Some(stop) = &meta.stopped {
        bail!(
            "run {} is a sequential plan that already stopped after {} rounds ({:?}): there is nothing to resume\nhint: run `afterburner report` for its results, or `afterburner bench` for a new run (with a larger budget or max)",
            meta.run_id,
            stop.rounds,
            stop.reason
        );
    }
    let names: Vec<&str> = e.variants.iter().map(|v| v.name.as_str()).collect();
    let workloads: Vec<&str> = e
        .workloads
        .iter()
        .filter(|w| w.role.benches())
        .map(|w| w.name.as_str())
        .collect();
    let same = meta
        .variants
        .iter()
        .map(|v| v.name.as_str())
        .eq(names.iter().copied())
        && meta
            .workloads
            .iter()
            .map(String::as_str)
            .eq(workloads.iter().copied())
        && (meta.repetitions, meta.warmup, meta.instruction_repetitions)
            == (
                e.bench.repetitions,
                e.bench.warmup,
                e.bench.instruction_repetitions,
            );
    if !same {
        bail!(
            "the latest run {} was planned with other variants, workloads or repetitions than {}\nhint: resume with the experiment file as it was, or start a new run without --resume",
            run_dir.display(),
            e.file.display()
        );
    }
    let resumed = runs::Writer::resume(run_dir, lock)?;
    let done = resumed
        .runs
        .into_iter()
        .filter(|r| r.success)
        .map(|r| DoneRun {
            round: r.round,
            workload: r.workload,
            variant: r.variant,
            kind: r.kind,
        })
        .collect();
    Ok(Started {
        meta: resumed.meta,
        writer: resumed.writer,
        done,
        notes: resumed.notes,
    })
}

/// Turn address-space randomization off for every process afterburner
/// starts from now on (the personality is inherited across fork and exec).
fn without_aslr() -> Result<()> {
    // SAFETY: personality(0xffffffff) only reads the current persona.
    let current = unsafe { libc::personality(0xffff_ffff) };
    if current < 0 {
        bail!(
            "cannot read the process personality: {}",
            std::io::Error::last_os_error()
        );
    }
    #[allow(clippy::cast_sign_loss, clippy::cast_possible_wrap)] // flag bits
    let wanted = current as libc::c_ulong | libc::ADDR_NO_RANDOMIZE as libc::c_ulong;
    // SAFETY: setting a persona flag has no memory effects.
    if unsafe { libc::personality(wanted) } < 0 {
        bail!(
            "cannot turn address-space randomization off: {}\nhint: a container may forbid personality(2); remove aslr = false from [bench]",
            std::io::Error::last_os_error()
        );
    }
    Ok(())
}
