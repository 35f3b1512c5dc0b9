//! The bench phase: every variant on every benchmark workload, in rounds
//! whose order is shuffled with a recorded seed, warmup first; each finished
//! run is appended to `raw.jsonl` and synced before the next starts.

use std::collections::HashSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::{bail, Context as _, Result};

pub(crate) mod sequential;
pub(crate) mod served;
mod simulate;

pub use simulate::simulate;

use crate::build;
use crate::context::Context;
use crate::env::{self, Environment};
use crate::experiment::{Bindings, MetricKind};
use crate::measure::{self, InstructionCounter, Metric, RunKind, RunRecord, RunSetup, RunSlot};
use crate::process::quote_output;
use crate::rng::Rng;
use crate::runs::{
    self, BenchMeta, SequentialMeta, SequentialStop, StopReason, VariantInfo, SCHEMA_VERSION,
};
use crate::toolchain::{tools, Stage};
use crate::workdir::{tail, RAW_FILE};

/// A run already in `raw.jsonl`: (round, workload, variant, kind).
type Slot = (u32, String, String, RunKind);

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
    run_plan(cx, bindings, started, resume)
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
    fs_err::create_dir_all(&dir)?;
    let lock =
        crate::lockfile::acquire(&dir.join(crate::workdir::LOCK_FILE), "a block is starting")?;
    let bindings = final_bindings(cx)?;
    let resume = dir.join(crate::workdir::META_FILE).is_file();
    let started = if resume {
        resume_at(cx, &dir, lock)?
    } else {
        let environment = env::capture();
        let counter = InstructionCounter::detect(environment.perf_counters);
        let mut meta = bench_meta(cx, environment, counter)?;
        meta.run_id = format!("{run_id}-block{k}");
        meta.seed = runs::block_seed(cluster.seed, k);
        let writer = runs::Writer::create(&dir, &meta, lock)?;
        (meta, writer, HashSet::new(), Vec::new())
    };
    run_plan(cx, bindings, started, resume)
}

/// Run the rounds of a started (or resumed) bench.
fn run_plan(
    cx: &Context,
    bindings: Vec<Bindings>,
    started: Started,
    resume: bool,
) -> Result<PathBuf> {
    let e = &cx.experiment;
    let (meta, writer, done, notes) = started;
    let run_dir = writer.dir().to_owned();
    // Each variant's services keep their state (a database a setup step
    // made) across the variant's runs of this bench.
    let bindings: Vec<Bindings> = bindings
        .into_iter()
        .zip(&e.variants)
        .map(|(mut b, v)| {
            b.state_root = Some(run_dir.join(STATE_DIR).join(&v.name));
            b
        })
        .collect();
    if e.bench.metrics.contains(&MetricKind::Instructions)
        && meta.instruction_counter == InstructionCounter::Callgrind
    {
        tools::ensure(&[tools::VALGRIND])?;
    }
    if !e.bench.aslr {
        without_aslr()?;
    }
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
    let Some(plan) = meta.sequential.clone() else {
        for round in 0..e.bench.warmup + e.bench.repetitions {
            if let Err(error) = runner.round(round, &mut rng) {
                return Err(stopped_or(error, run_dir));
            }
        }
        return Ok(run_dir);
    };
    let stop = match runner.sequential_rounds(&plan, &mut rng) {
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

/// A variant's system settings as results record them.
fn system_of(v: &crate::experiment::Variant) -> std::collections::BTreeMap<String, String> {
    v.system
        .iter()
        .map(|s| (s.key.clone(), s.value.clone()))
        .collect()
}

/// The directory of a run holding each variant's service state.
pub const STATE_DIR: &str = "state";

/// A failed round: [`Stopped`] when Ctrl-C or SIGTERM caused it (every
/// finished run is on disk, for a partial report), else the error itself.
fn stopped_or(error: anyhow::Error, run_dir: PathBuf) -> anyhow::Error {
    if crate::interrupt::requested() {
        error.context(Stopped { run_dir })
    } else {
        error
    }
}

/// What a bench starts from: its plan, the writer of its run directory,
/// the runs already done and what reading them back left out.
type Started = (BenchMeta, runs::Writer, HashSet<Slot>, Vec<String>);

/// Create a new run directory and its `meta.json`.
fn start_run(cx: &Context, lock: crate::lockfile::Held) -> Result<Started> {
    let environment = env::capture();
    let counter = InstructionCounter::detect(environment.perf_counters);
    let meta = bench_meta(cx, environment, counter)?;
    let writer = runs::Writer::create(&cx.workdir.run(&meta.run_id), &meta, lock)?;
    Ok((meta, writer, HashSet::new(), Vec::new()))
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
        .map(|r| (r.round, r.workload, r.variant, r.kind))
        .collect();
    Ok((resumed.meta, resumed.writer, done, resumed.notes))
}

/// Runs the rounds of one bench, appending each finished run.
struct Runner<'a> {
    cx: &'a Context,
    meta: &'a BenchMeta,
    bindings: &'a [Bindings],
    logs: PathBuf,
    scratch: PathBuf,
    raw: runs::Writer,
    /// Runs that finished before a resume; skipped.
    done: HashSet<Slot>,
    /// Runs made by this bench (not skipped as done).
    made: u64,
    progress: crate::progress::Runs,
    /// The CPUs afterburner could use when the bench began: where a run
    /// with no CPUs of its own goes back to.
    all_cpus: crate::pinning::CpuSet,
}

/// How many runs a bench of `e` makes: every round, bench workload and
/// variant, twice where instructions are counted too.
fn planned_runs(e: &crate::experiment::Experiment, counter: InstructionCounter) -> u64 {
    let counting = e.bench.metrics.contains(&MetricKind::Instructions);
    let variants = e.variants.len() as u64;
    e.workloads
        .iter()
        .filter(|w| w.role.benches())
        .map(|w| {
            let counted_runs = if counting && served::counted(w.load.as_ref(), counter) {
                u64::from(e.bench.instruction_repetitions.min(e.bench.repetitions))
            } else {
                0
            };
            (u64::from(e.bench.warmup + e.bench.repetitions) + counted_runs) * variants
        })
        .sum()
}

impl Runner<'_> {
    /// Rounds of a sequential plan: warmup, then counted rounds until a look
    /// finds every primary comparison decided, the budget cannot fit
    /// another round, or the plan's most rounds are run.
    fn sequential_rounds(
        &mut self,
        plan: &SequentialMeta,
        rng: &mut Rng,
    ) -> Result<SequentialStop> {
        let e = &self.cx.experiment;
        let started = std::time::Instant::now();
        let budget = std::time::Duration::from_secs_f64(plan.budget_s);
        let mut took = Vec::new();
        let mut stopped = SequentialStop {
            rounds: 0,
            reason: StopReason::Max,
            decided: 0,
            comparisons: 0,
        };
        for round in 0..e.bench.warmup + plan.plan.max {
            let counted = round.saturating_sub(e.bench.warmup);
            if round >= e.bench.warmup
                && counted >= plan.plan.min
                && !sequential::fits(budget, started.elapsed(), &took)
            {
                stopped.reason = StopReason::Budget;
                break;
            }
            let began = std::time::Instant::now();
            let ran = self.round(round, rng)?;
            if ran {
                took.push(began.elapsed());
            }
            if round < e.bench.warmup {
                continue;
            }
            stopped.rounds = counted + 1;
            if !plan.plan.is_look(counted + 1) {
                continue;
            }
            let runs = crate::runs::read_records(&self.raw.dir().join(RAW_FILE), self.meta)?.runs;
            let look = sequential::look(
                e,
                &self.meta.metrics,
                &plan.plan,
                &runs,
                self.meta.equivalence,
                self.meta.seed,
            );
            (stopped.decided, stopped.comparisons) = (look.decided, look.comparisons);
            self.progress.line(format_args!(
                "look after {} rounds: {} of {} primary comparisons decided{}",
                counted + 1,
                look.decided,
                look.comparisons,
                if look.pending.is_empty() {
                    String::new()
                } else {
                    format!("; undecided: {}", look.pending.join(", "))
                }
            ));
            if look.decided == look.comparisons {
                stopped.reason = StopReason::Decided;
                break;
            }
        }
        Ok(stopped)
    }

    /// One round: every benchmark workload on every variant, in an order
    /// shuffled by `rng` (drawn even when every run is done, so a resumed
    /// bench keeps the original order). Returns whether any run was made
    /// (false when a resume found them all done).
    fn round(&mut self, round: u32, rng: &mut Rng) -> Result<bool> {
        let e = &self.cx.experiment;
        let warmup = round < e.bench.warmup;
        let count_instructions = e.bench.metrics.contains(&MetricKind::Instructions)
            && round
                .checked_sub(e.bench.warmup)
                .is_some_and(|c| c < e.bench.instruction_repetitions);
        let rounds = e.bench.warmup + e.bench.repetitions;
        let made_before = self.made;
        let mut line = format!(
            "round {}/{rounds}{}:",
            round + 1,
            if warmup { " (warmup)" } else { "" }
        );
        for workload in e.workloads.iter().filter(|w| w.role.benches()) {
            let mut order: Vec<usize> = (0..e.variants.len()).collect();
            rng.shuffle(&mut order);
            for (position, &index) in order.iter().enumerate() {
                let kinds: &[RunKind] = if count_instructions
                    && served::counted(workload.load.as_ref(), self.meta.instruction_counter)
                {
                    &[RunKind::Timing, RunKind::Instructions]
                } else {
                    &[RunKind::Timing]
                };
                for &kind in kinds {
                    let slot = RunSlot {
                        round,
                        warmup,
                        position: u32::try_from(position).unwrap_or(u32::MAX),
                        variant: &e.variants[index].name,
                        workload,
                        kind,
                    };
                    self.progress.start(&format!(
                        "round {}: {} on {}{}",
                        round + 1,
                        workload.name,
                        slot.variant,
                        if kind == RunKind::Instructions {
                            " (instructions)"
                        } else {
                            ""
                        }
                    ));
                    let wall = self.run(&slot, index)?;
                    self.progress.tick();
                    if let Some(shown) = wall {
                        let _ = write!(line, " {}={shown}", slot.variant);
                    }
                }
            }
        }
        self.progress.line(line);
        Ok(self.made > made_before)
    }

    /// Append a finished run to raw.jsonl (synced) and describe it. An
    /// interrupted run is not a finished one: it is not kept.
    fn keep(&mut self, slot: &RunSlot, measured: Result<RunRecord>) -> Result<RunRecord> {
        crate::interrupt::check()?;
        let record = measured.with_context(|| {
            format!(
                "run of workload `{}` on variant `{}`",
                slot.workload.name, slot.variant
            )
        })?;
        self.raw.append(&record)?;
        self.describe(&record);
        Ok(record)
    }

    /// With `--verbose`, a line per finished run.
    fn describe(&self, record: &RunRecord) {
        if !crate::progress::verbose() {
            return;
        }
        let mut text = format!(
            "  round {} {} on {} ({:?}): {}",
            record.round + 1,
            record.workload,
            record.variant,
            record.kind,
            record.exit
        );
        if let Some(wall) = record.wall_ns {
            let _ = write!(text, ", wall {:.3} s", wall as f64 / 1e9);
        }
        if let Some(n) = record.instructions {
            let _ = write!(text, ", {n} instructions");
        }
        for (name, value) in &record.figures {
            let _ = write!(text, ", {name} {value:.3}");
        }
        self.progress.line(text);
    }

    /// Run one slot unless it is done; returns what the round's line shows.
    fn run(&mut self, slot: &RunSlot, index: usize) -> Result<Option<String>> {
        let key = (
            slot.round,
            slot.workload.name.clone(),
            slot.variant.to_owned(),
            slot.kind,
        );
        if self.done.contains(&key) {
            return Ok(None);
        }
        crate::interrupt::check()?;
        self.made += 1;
        let e = &self.cx.experiment;
        // The load's threads and the workload's processes inherit this
        // thread's CPUs.
        let cpus = slot
            .workload
            .cpus
            .as_ref()
            .or(self.meta.pinning.as_ref().map(|p| &p.workload))
            .unwrap_or(&self.all_cpus);
        if !cpus.0.is_empty() {
            crate::pinning::pin_current_thread(cpus)?;
        }
        // Put back when this run ends, however it ends.
        let _system = crate::system::apply(&e.variants[index].system).with_context(|| {
            format!("applying the system settings of variant `{}`", slot.variant)
        })?;
        if !e.target.services.is_empty() || slot.workload.load.is_some() {
            let served = served::Served {
                experiment: e,
                variant: &e.variants[index],
                bindings: &self.bindings[index],
                logs: &self.logs,
                scratch: &self.scratch,
                run_dir: self.raw.dir(),
                counter: self.meta.instruction_counter,
                seed: self.meta.seed,
                pinning: self.meta.pinning.as_ref(),
            };
            let record = self.keep(slot, served::measure_served(slot, &served))?;
            if !record.success {
                // A dead service fails its run, not the bench.
                self.progress.warn(format_args!(
                    "run {} of workload `{}` on variant `{}` failed (kept in raw.jsonl; the bench goes on): {}",
                    slot.round + 1,
                    slot.workload.name,
                    slot.variant,
                    record.error.as_deref().unwrap_or(&record.exit)
                ));
                return Ok(None);
            }
            return Ok(headline(&record));
        }
        let command = slot
            .workload
            .run
            .as_ref()
            .context("invariant: a workload without load has run")?
            .expand(&self.bindings[index])?;
        let keep = runs::profile_dir(
            self.raw.dir(),
            &slot.workload.name,
            slot.variant,
            slot.round,
        );
        let setup = RunSetup {
            command: &command,
            env: &e.variants[index].env,
            cwd: &e.dir,
            logs: &self.logs,
            scratch: &self.scratch,
            counter: self.meta.instruction_counter,
            keep: Some(&keep),
        };
        let stem = measure::log_stem(slot);
        let steps = (e.dir.as_path(), self.logs.as_path(), stem.as_str());
        let env = &e.variants[index].env;
        served::workload_step(slot.workload, false, &self.bindings[index], env, steps)?;
        let measured = measure::measure(slot, &setup);
        served::workload_step(slot.workload, true, &self.bindings[index], env, steps)?;
        let record = self.keep(slot, measured)?;
        check_success(&record, &command)?;
        Ok(headline(&record))
    }
}

/// A timing run in a few characters: its wall time, or a load's throughput.
fn headline(record: &RunRecord) -> Option<String> {
    if record.kind != RunKind::Timing {
        return None;
    }
    match (record.wall_ns, record.figures.get("throughput")) {
        (Some(wall), _) => Some(format!("{:.3}s", wall as f64 / 1e9)),
        (None, Some(rps)) => Some(format!("{rps:.0}/s")),
        (None, None) => None,
    }
}

fn check_success(record: &RunRecord, command: &str) -> Result<()> {
    if record.success {
        return Ok(());
    }
    if let Some(error) = &record.error {
        bail!(
            "workload `{}` on variant `{}`: {error} (the run is kept in raw.jsonl)",
            record.workload,
            record.variant
        );
    }
    let said = tail(&record.stderr_log, 20);
    // Valgrind's complaint comes last; a log may be gigabytes.
    let whole = crate::workdir::tail_text(&record.stderr_log, 1 << 20);
    let hint = if whole.contains("unhandled instruction bytes") {
        // Valgrind knows no AVX-512, which -march=native emits on CPUs that have it.
        "valgrind cannot run an instruction in this binary (AVX-512, as -march=native emits on CPUs that have it, is beyond it), so callgrind cannot count it; give such a variant a level valgrind can run (march = \"x86-64-v3\": AVX2 at most), or count with perf on a machine with hardware counters"
    } else {
        "run the command by hand to see why; every workload run must exit 0"
    };
    bail!(
        "workload `{}` failed on variant `{}` with {} (the run is kept in raw.jsonl)\ncommand: {command}\n{}\nlogs: {}\nhint: {hint}",
        record.workload,
        record.variant,
        record.exit,
        quote_output(&said),
        record.stderr_log.display()
    )
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

/// The metrics a bench of `e` records: the built-in ones asked for, each
/// workload's figures and load metrics, each service's, and instructions
/// per request where a load's services are counted over its window.
fn metrics(e: &crate::experiment::Experiment, counter: InstructionCounter) -> Vec<Metric> {
    let mut metrics: Vec<Metric> = e
        .bench
        .metrics
        .iter()
        .map(|m| Metric::builtin(*m, counter))
        .collect();
    for workload in e.workloads.iter().filter(|w| w.role.benches()) {
        let loads = workload.load.iter().flat_map(served::load_metrics);
        for metric in workload.figures.iter().map(Metric::figure).chain(loads) {
            if !metrics.iter().any(|m| m.name == metric.name) {
                metrics.push(metric);
            }
        }
    }
    metrics.extend(served::service_metrics(e));
    if e.bench.metrics.contains(&MetricKind::Instructions)
        && counter == InstructionCounter::Callgrind
        && e.workloads.iter().any(|w| {
            w.role.benches() && w.load.is_some() && served::counted(w.load.as_ref(), counter)
        })
    {
        // Judged as the counter's counts are: by their measured spread. A
        // server's background threads run in the window too, so identical
        // short runs differ (~20% per request for 100 memcached gets) while
        // long ones agree (±0.2% for 50,000).
        metrics.push(Metric {
            name: served::INSTRUCTIONS_PER_REQUEST.to_owned(),
            unit: "instructions".to_owned(),
            lower_is_better: true,
            precision: counter.precision(),
        });
    }
    metrics
}

fn bench_meta(
    cx: &Context,
    environment: Environment,
    counter: InstructionCounter,
) -> Result<BenchMeta> {
    let e = &cx.experiment;
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let seed = e
        .bench
        .seed
        .unwrap_or_else(|| u64::from(now.subsec_nanos()) ^ now.as_secs());
    let metrics = metrics(e, counter);
    let variants = e
        .variants
        .iter()
        .map(|v| {
            if let Some(binaries) = &v.prebuilt {
                return Ok(VariantInfo {
                    name: v.name.clone(),
                    optimize: Vec::new(),
                    compiler_version: "prebuilt".to_owned(),
                    cflags: String::new(),
                    ldflags: String::new(),
                    goflags: String::new(),
                    env: v.env.clone(),
                    binaries: binaries.clone(),
                    build_log: PathBuf::new(),
                    axes: v.axes.clone(),
                    system: system_of(v),
                });
            }
            let record = build::current(&cx.workdir, &v.name, Stage::Final)
                .context("invariant: bindings were loaded from this record")?;
            Ok(VariantInfo {
                name: v.name.clone(),
                optimize: v.optimize.clone(),
                compiler_version: record.compiler_version,
                cflags: record.cflags,
                ldflags: record.ldflags,
                goflags: record.goflags,
                env: v.env.clone(),
                binaries: record.binaries,
                build_log: record.log,
                axes: v.axes.clone(),
                system: system_of(v),
            })
        })
        .collect::<Result<_>>()?;
    Ok(BenchMeta {
        schema_version: SCHEMA_VERSION,
        run_id: run_id(now.as_secs(), &cx.workdir.runs()),
        experiment: e.file.clone(),
        target: e.target.name.clone(),
        seed,
        repetitions: e.bench.repetitions,
        warmup: e.bench.warmup,
        instruction_repetitions: e.bench.instruction_repetitions,
        confidence: e.bench.confidence,
        equivalence: e.bench.equivalence,
        aslr: e.bench.aslr,
        pinning: if e.bench.pin {
            crate::pinning::default_split(&crate::pinning::allowed(), !e.target.services.is_empty())
        } else {
            None
        },
        instruction_counter: counter,
        metrics,
        variants,
        workload_sets: e.workload_sets.clone(),
        training_workloads: e
            .workloads
            .iter()
            .filter(|w| w.role.trains())
            .map(|w| w.name.clone())
            .collect(),
        workloads: e
            .workloads
            .iter()
            .filter(|w| w.role.benches())
            .map(|w| w.name.clone())
            .collect(),
        environment,
        revision: crate::source::fetch(&e.target.source, &cx.workdir.root)
            .ok()
            .and_then(|dir| crate::source::revision(&e.target.source, &dir)),
        sequential: sequential::meta(e),
        stopped: None,
    })
}

/// A sortable, unique run id: UTC date and time, plus a suffix on collision.
pub(crate) fn run_id(unix_secs: u64, runs: &Path) -> String {
    let base = crate::env::format_utc(unix_secs)
        .replace([':', '-'], "")
        .replace('T', "-")
        .replace('Z', "");
    let mut id = base.clone();
    let mut n = 1;
    while runs.join(&id).exists() {
        n += 1;
        id = format!("{base}-{n}");
    }
    id
}
