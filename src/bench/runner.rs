//! The rounds of one bench: each run in its slot, skipped when a resume
//! finds it done, appended to `raw.jsonl` (synced) before the next starts.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::{bail, Context as _, Result};

use super::{sequential, DoneRun};
use crate::context::Context;
use crate::experiment::Bindings;
use crate::measure::{self, InstructionCounter, RunKind, RunRecord, RunSetup, RunSlot};
use crate::metric::{Builtin, LoadMetric, MetricId};
use crate::process::quote_output;
use crate::rng::Rng;
use crate::runs::{self, BenchMeta, RaceMeta, SequentialMeta, SequentialStop, StopReason};
use crate::served;
use crate::workdir::{tail, RAW_FILE};

/// Runs the rounds of one bench, appending each finished run.
pub(super) struct Runner<'a> {
    pub(super) cx: &'a Context,
    pub(super) meta: &'a BenchMeta,
    pub(super) bindings: &'a [Bindings],
    pub(super) logs: PathBuf,
    pub(super) scratch: PathBuf,
    pub(super) raw: runs::Writer,
    /// Runs that finished before a resume; skipped.
    pub(super) done: HashSet<DoneRun>,
    /// Runs made by this bench (not skipped as done).
    pub(super) made: u64,
    pub(super) progress: crate::progress::Runs,
    /// The CPUs afterburner could use when the bench began: where a run
    /// with no CPUs of its own goes back to.
    pub(super) all_cpus: crate::pinning::CpuSet,
    /// The load's node, when it has one of its own.
    pub(super) remote: Option<&'a crate::served::remote::RemoteLoad>,
    /// Per variant, whether its runs are made: all, but for a race's
    /// dropped candidates (the baseline among them: once dropped, it too
    /// stops; the report pairs it over the rounds both ran).
    pub(super) alive: Vec<bool>,
    /// Per bench workload, the round last run and its order of variants
    /// (before a race's dropped ones were left out): the next counted
    /// round may run in its reverse ([`Runner::round`]).
    pub(super) orders: HashMap<String, (u32, Vec<usize>)>,
}

/// How many runs a bench of `e` makes: every round, bench workload and
/// variant, twice where instructions are counted too.
pub(super) fn planned_runs(e: &crate::experiment::Experiment, counter: InstructionCounter) -> u64 {
    let counting = e.bench.metrics.contains(&Builtin::INSTRUCTIONS);
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

/// How a bench's rounds are watched by looks: from `min` counted rounds
/// the budget may end them; `max` ends them; `shrinking` rounds (a race's,
/// as candidates drop) take only the last round as the next one's length.
struct Watch {
    min: u32,
    max: u32,
    budget_s: f64,
    shrinking: bool,
    /// The questions counted before a look says how many (a race's
    /// candidates; a sequential plan's comparisons are known at its look).
    comparisons: usize,
}

/// What a look found: how many of how many questions are decided, and
/// whether that ends the rounds.
struct Looked {
    decided: usize,
    comparisons: usize,
    done: bool,
}

impl Runner<'_> {
    /// A race's rounds: warmup, then counted rounds of the candidates
    /// still in it, replayed after each of the plan's looks, until one is
    /// left, the rest are the same as the leader, the budget cannot fit
    /// another round, or the most rounds are run.
    pub(super) fn race_rounds(&mut self, race: &RaceMeta, rng: &mut Rng) -> Result<SequentialStop> {
        let plan = &race.plan;
        let watch = Watch {
            min: plan.min,
            max: plan.max,
            budget_s: race.budget_s,
            // Rounds shrink as candidates drop: the last one, with the most
            // left, bounds the next.
            shrinking: true,
            comparisons: self.cx.experiment.variants.len(),
        };
        let candidates = watch.comparisons;
        self.watched_rounds(rng, &watch, &mut |runner, rounds| {
            let screens = rounds == 1 && race.screen.is_some();
            if plan.level_at(rounds).is_none() && !screens {
                return Ok(None);
            }
            let runs = runner.records()?;
            let so_far = crate::analysis::race::so_far(runner.meta, plan, &runs, rounds);
            for out in so_far.out() {
                runner.alive[out] = false;
            }
            if screens {
                let counter = runner.meta.instruction_counter;
                runner.progress.line(super::race::screened(
                    &runner.cx.experiment,
                    &so_far,
                    counter,
                ));
            }
            if plan.level_at(rounds).is_none() {
                return Ok(None);
            }
            runner
                .progress
                .line(super::race::describe(&runner.cx.experiment, &so_far));
            let done = !matches!(so_far.outcome, crate::stats::race::RaceEnd::Undecided(_));
            Ok(Some(Looked {
                decided: so_far.out().count(),
                comparisons: candidates,
                done,
            }))
        })
    }

    /// Rounds of a sequential plan: warmup, then counted rounds until a look
    /// finds every primary comparison decided, the budget cannot fit
    /// another round, or the plan's most rounds are run.
    pub(super) fn sequential_rounds(
        &mut self,
        plan: &SequentialMeta,
        rng: &mut Rng,
    ) -> Result<SequentialStop> {
        let watch = Watch {
            min: plan.plan.min,
            max: plan.plan.max,
            budget_s: plan.budget_s,
            shrinking: false,
            comparisons: 0,
        };
        self.watched_rounds(rng, &watch, &mut |runner, rounds| {
            if !plan.plan.is_look(rounds) {
                return Ok(None);
            }
            let look = sequential::look(
                &runner.cx.experiment,
                &runner.meta.metrics,
                &plan.plan,
                &runner.records()?,
                runner.meta.equivalence,
                runner.meta.seed,
            );
            runner.progress.line(format_args!(
                "look after {rounds} rounds: {} of {} primary comparisons decided{}",
                look.decided,
                look.comparisons,
                if look.pending.is_empty() {
                    String::new()
                } else {
                    format!("; undecided: {}", look.pending.join(", "))
                }
            ));
            Ok(Some(Looked {
                decided: look.decided,
                comparisons: look.comparisons,
                done: look.decided == look.comparisons,
            }))
        })
    }

    /// Rounds until `budget` cannot fit another (from 2 counted rounds on),
    /// or the experiment's repetitions are run; no looks.
    pub(super) fn budget_rounds(
        &mut self,
        budget: std::time::Duration,
        rng: &mut Rng,
    ) -> Result<SequentialStop> {
        let watch = Watch {
            min: 2,
            max: self.cx.experiment.bench.repetitions,
            budget_s: budget.as_secs_f64(),
            shrinking: false,
            comparisons: 0,
        };
        self.watched_rounds(rng, &watch, &mut |_, _| Ok(None))
    }

    /// The records of this bench so far, read back from raw.jsonl.
    fn records(&self) -> Result<Vec<RunRecord>> {
        Ok(runs::read_records(&self.raw.dir().join(RAW_FILE), self.meta)?.runs)
    }

    /// Warmup, then counted rounds watched by `look`: after each counted
    /// round, `look` gets the rounds counted and says — where that round is
    /// a look — what is decided, of how many, and whether that ends the
    /// rounds; they end too when the budget cannot fit another round (from
    /// `min` rounds on) or after `max`.
    fn watched_rounds(
        &mut self,
        rng: &mut Rng,
        watch: &Watch,
        look: &mut dyn FnMut(&mut Self, u32) -> Result<Option<Looked>>,
    ) -> Result<SequentialStop> {
        let warmup = self.cx.experiment.bench.warmup;
        let started = std::time::Instant::now();
        let budget = std::time::Duration::from_secs_f64(watch.budget_s);
        let mut took = Vec::new();
        let mut stopped = SequentialStop {
            rounds: 0,
            reason: StopReason::Max,
            decided: 0,
            comparisons: watch.comparisons,
        };
        for round in 0..warmup + watch.max {
            let counted = round.saturating_sub(warmup);
            if round >= warmup
                && counted >= watch.min
                && !sequential::fits(budget, started.elapsed(), &took)
            {
                stopped.reason = StopReason::Budget;
                break;
            }
            let began = std::time::Instant::now();
            if self.round(round, rng)? {
                took.push(began.elapsed());
            }
            if round < warmup {
                continue;
            }
            stopped.rounds = counted + 1;
            let Some(looked) = look(self, counted + 1)? else {
                continue;
            };
            (stopped.decided, stopped.comparisons) = (looked.decided, looked.comparisons);
            if looked.done {
                stopped.reason = StopReason::Decided;
                break;
            }
            if watch.shrinking {
                took = took.last().copied().into_iter().collect();
            }
        }
        Ok(stopped)
    }

    /// One round: every benchmark workload on every variant, in an order
    /// shuffled by `rng` (drawn even when every run is done, so a resumed
    /// bench keeps the original order). Returns whether any run was made
    /// (false when a resume found them all done).
    pub(super) fn round(&mut self, round: u32, rng: &mut Rng) -> Result<bool> {
        let e = &self.cx.experiment;
        let warmup = round < e.bench.warmup;
        let count_instructions = e.bench.metrics.contains(&Builtin::INSTRUCTIONS)
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
            // Counted rounds go in pairs, the second in the reverse order
            // of the first: an effect of a run's place in its round (the
            // run after another's, with its caches and clock) then falls
            // on both variants of every pair alike, where two shuffles in
            // the same order would take it for a difference (a race with
            // 2 rounds once dropped an identical build 5% "slower").
            let counted = round.checked_sub(e.bench.warmup);
            if let Some((last, previous)) = self.orders.get(&workload.name) {
                if counted.is_some_and(|c| c % 2 == 1) && *last + 1 == round {
                    order = previous.iter().rev().copied().collect();
                }
            }
            self.orders
                .insert(workload.name.clone(), (round, order.clone()));
            // Drawn whole, then filtered: a resumed race keeps its order.
            let keep = |i: usize| i == 0 && e.race.keep_baseline;
            order.retain(|&i| keep(i) || self.alive.get(i).copied().unwrap_or(true));
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
        let key = DoneRun {
            round: slot.round,
            workload: slot.workload.name.clone(),
            variant: slot.variant.to_owned(),
            kind: slot.kind,
        };
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
                remote: self.remote,
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
            metrics: &e.bench.metrics,
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
pub(super) fn headline(record: &RunRecord) -> Option<String> {
    if record.kind != RunKind::Timing {
        return None;
    }
    let throughput = MetricId::Load(LoadMetric::Throughput).value(record);
    match (record.wall_ns, throughput) {
        (Some(wall), _) => Some(format!("{:.3}s", wall as f64 / 1e9)),
        (None, Some(rps)) => Some(format!("{rps:.0}/s")),
        (None, None) => None,
    }
}

pub(super) fn check_success(record: &RunRecord, command: &str) -> Result<()> {
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
