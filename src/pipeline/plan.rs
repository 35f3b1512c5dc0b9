//! `afterburner plan`: what a run of an experiment file would do, and about
//! how long it would take, before any of it runs. The file is validated as
//! `run` validates it; nothing is fetched, built or written. Each build's
//! state is read from the work directory (cached, or to build), the rounds
//! and callgrind runs are counted as the bench counts them, and the time is
//! estimated from this work directory's records (build times, earlier
//! runs' records), else a probe: one run of each command workload on a
//! build that is already here.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::Result;

use super::Context;
use crate::experiment::{Experiment, Variant, Workload};
use crate::measure::{InstructionCounter, RunKind};
use crate::metric::Builtin;
use crate::toolchain::Stage;
use crate::workdir::Workdir;

/// Options of `afterburner plan`.
#[derive(Debug, Clone, Default)]
pub struct PlanOptions {
    pub quick: bool,
    /// Plan `afterburner race`: its most rounds, candidates that may drop.
    pub race: bool,
    pub workdir: Option<PathBuf>,
}

/// Callgrind's cost over a native run where no record says: about 50× on
/// the demo's Lua scripts here (0.1-s runs took about 5 s under callgrind).
const CALLGRIND_SLOWDOWN: f64 = 50.0;
/// An instrumented training run's cost over a bench run of its workload.
const TRAINING_SLOWDOWN: f64 = 2.0;
/// The longest a probe run may take.
const PROBE_TIMEOUT: Duration = Duration::from_mins(2);
/// Earlier runs read for their records, newest first.
const HISTORY_RUNS: usize = 5;

/// Print the plan of `file`.
pub fn plan(file: &Path, options: &PlanOptions) -> Result<()> {
    let experiment = crate::experiment::load(file, options.quick)?;
    let root = options
        .workdir
        .clone()
        .unwrap_or_else(|| experiment.default_workdir());
    let root = std::path::absolute(&root).unwrap_or(root);
    let cx = Context {
        experiment,
        workdir: Workdir::new(root),
    };
    let source_dir = crate::source::fetched(&cx.experiment.target.source, &cx.workdir.root);
    let variants: Vec<VariantPlan> = cx
        .experiment
        .variants
        .iter()
        .map(|v| VariantPlan::of(&cx, v, source_dir.as_deref()))
        .collect();
    let counter = InstructionCounter::detect(crate::env::perf_counts_instructions());
    let history = History::read(&cx.workdir);
    let costs = Costs::of(&cx, &history, counter);
    let text = render(
        &cx,
        source_dir.is_some(),
        &variants,
        &costs,
        counter,
        options,
    );
    crate::stdout::print(format_args!("{text}"))
}

/// One build or training step of a variant.
#[derive(Debug, Clone, PartialEq)]
enum State {
    /// Built (or trained) here with the inputs a run would use now.
    Cached,
    /// To do; the seconds its last build here took, where one did.
    ToDo(Option<f64>),
    /// Another variant's: nothing to do of its own.
    Shared(String),
}

#[derive(Debug, Clone)]
struct Step {
    what: String,
    state: State,
    /// A build (else a training step).
    build: bool,
    /// Training runs this step makes (0 for a build).
    training: usize,
}

#[derive(Debug, Clone)]
struct VariantPlan {
    name: String,
    how: String,
    steps: Vec<Step>,
}

impl VariantPlan {
    fn of(cx: &Context, variant: &Variant, source_dir: Option<&Path>) -> Self {
        let how = describe(variant);
        let mut steps = Vec::new();
        if variant.prebuilt.is_some() {
            return Self {
                name: variant.name.clone(),
                how: format!("{how}, prebuilt"),
                steps,
            };
        }
        let last = |stage: Stage| {
            crate::build::load_record(&cx.workdir.build_record(&variant.name, stage))
                .map(|r| r.seconds)
        };
        // A variant built from another revision, or trained on one, would
        // fetch it to compute its keys: not looked at.
        let own_tree = variant.source.is_none() && variant.profile_from.is_none();
        let source_dir = source_dir.filter(|_| own_tree);
        let final_current = source_dir.is_some_and(|dir| super::final_is_current(cx, variant, dir));
        if variant.needs_profile() {
            let trainers = training_workloads(&cx.experiment).len();
            let first_stale = match source_dir {
                Some(dir) => {
                    crate::profiles::first_stale_round(cx, variant, dir).unwrap_or(Some(0))
                }
                None => Some(0),
            };
            let rounds = variant.rounds();
            for (round, kind) in rounds.iter().enumerate() {
                let stale = first_stale.is_some_and(|r| round >= r);
                // The first stale round's training build may be here
                // (`afterburner build` makes it); a later one's key waits
                // on this round's profile.
                let training_build_here = first_stale == Some(round)
                    && source_dir
                        .is_some_and(|dir| training_build_is_current(cx, variant, round, dir));
                let build = match (&variant.profile_donor, round, stale) {
                    (_, _, false) => State::Cached,
                    (Some(donor), 0, true) => State::Shared(donor.clone()),
                    _ if training_build_here => State::Cached,
                    (_, _, true) => State::ToDo(last(Stage::Instrumented(round))),
                };
                // A shared profile is the donor's: trained by its runs.
                let (training_state, training) = match &build {
                    State::Shared(donor) => (State::Shared(donor.clone()), 0),
                    _ if stale => (State::ToDo(None), trainers),
                    _ => (State::Cached, 0),
                };
                steps.push(Step {
                    what: format!("training build ({})", kind.name()),
                    state: build,
                    build: true,
                    training: 0,
                });
                steps.push(Step {
                    what: format!("training ({}): {trainers} run(s)", kind.name()),
                    state: training_state,
                    build: false,
                    training,
                });
            }
            let final_state = if first_stale.is_none() && final_current {
                State::Cached
            } else {
                State::ToDo(last(Stage::Final))
            };
            steps.push(Step {
                what: "final build".to_owned(),
                state: final_state,
                build: true,
                training: 0,
            });
        } else {
            steps.push(Step {
                what: "build".to_owned(),
                state: if final_current {
                    State::Cached
                } else {
                    State::ToDo(last(Stage::Final))
                },
                build: true,
                training: 0,
            });
        }
        Self {
            name: variant.name.clone(),
            how,
            steps,
        }
    }
}

fn training_build_is_current(
    cx: &Context,
    variant: &Variant,
    round: usize,
    source_dir: &Path,
) -> bool {
    crate::build::current(&cx.workdir, &variant.name, Stage::Instrumented(round)).is_some_and(|r| {
        crate::profiles::instrumented_key(cx, variant, round, source_dir).is_ok_and(|k| k == r.key)
    })
}

/// "gcc pgo+lto", "clang -O2", "rustc release profile".
fn describe(variant: &Variant) -> String {
    let what = if variant.optimize.is_empty() {
        if variant.compiler == crate::toolchain::Compiler::Rustc {
            "cargo's release profile (no optimization named)".to_owned()
        } else {
            "-O2 (no optimization named)".to_owned()
        }
    } else {
        variant
            .optimize
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("+")
    };
    format!("{} {what}", variant.compiler.name())
}

fn training_workloads(e: &Experiment) -> Vec<&Workload> {
    e.workloads.iter().filter(|w| w.role.trains()).collect()
}

fn bench_workloads(e: &Experiment) -> Vec<&Workload> {
    e.workloads.iter().filter(|w| w.role.benches()).collect()
}

/// Earlier runs' records: what each (workload, kind) cost, from one run's
/// start to the next one's (its server's start and stop included).
#[derive(Debug, Default)]
struct History {
    /// Seconds per run, by (workload, timing or counted).
    costs: BTreeMap<(String, bool), Vec<f64>>,
    runs: Vec<String>,
}

impl History {
    fn read(workdir: &Workdir) -> Self {
        let mut history = Self::default();
        let Ok(entries) = fs_err::read_dir(workdir.runs()) else {
            return history;
        };
        let mut dirs: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
        dirs.sort();
        for dir in dirs.iter().rev() {
            if history.runs.len() == HISTORY_RUNS {
                break;
            }
            let Ok(recorded) = crate::runs::read(dir) else {
                continue;
            };
            history.add(&recorded.runs);
            history.runs.push(recorded.meta.run_id.clone());
        }
        history
    }

    fn add(&mut self, runs: &[crate::measure::RunRecord]) {
        let mut sorted: Vec<_> = runs.iter().collect();
        sorted.sort_by_key(|r| r.started_unix_ms);
        for pair in sorted.windows(2) {
            let seconds = pair[1]
                .started_unix_ms
                .saturating_sub(pair[0].started_unix_ms) as f64
                / 1e3;
            let counted = pair[0].kind == RunKind::Instructions;
            self.costs
                .entry((pair[0].workload.clone(), counted))
                .or_default()
                .push(seconds);
        }
    }

    fn median(&self, workload: &str, counted: bool) -> Option<f64> {
        median(self.costs.get(&(workload.to_owned(), counted))?.clone())
    }
}

/// The middle value (the upper one of an even count); `None` when empty.
fn median(mut values: Vec<f64>) -> Option<f64> {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied()
}

/// What one run of each bench workload costs, and where that figure came
/// from.
#[derive(Debug, Default)]
struct Costs {
    /// Seconds of a timed run, and of a counted one, by workload.
    timed: BTreeMap<String, (f64, &'static str)>,
    counted: BTreeMap<String, (f64, &'static str)>,
    history_runs: Vec<String>,
    /// Workloads with no figure, and why.
    unknown: Vec<String>,
}

impl Costs {
    fn of(cx: &Context, history: &History, counter: InstructionCounter) -> Self {
        let mut costs = Costs {
            history_runs: history.runs.clone(),
            ..Costs::default()
        };
        for workload in &cx.experiment.workloads {
            let timed = history
                .median(&workload.name, false)
                .map(|s| (s, "as in earlier runs"))
                .or_else(|| load_seconds(workload).map(|s| (s, "the load's duration")))
                .or_else(|| probe(cx, workload).map(|s| (s, "a probe run")));
            let Some(timed) = timed else {
                costs.unknown.push(workload.name.clone());
                continue;
            };
            let per_count = history.median(&workload.name, true).map_or(
                match (counter, load_seconds(workload)) {
                    // A load of a set time counts over that time.
                    (_, Some(s)) => (s, "the load's duration"),
                    (InstructionCounter::Callgrind, None) => {
                        (timed.0 * CALLGRIND_SLOWDOWN, "50× a run")
                    }
                    (InstructionCounter::Perf, None) => (timed.0, "a run"),
                },
                |s| (s, "as in earlier runs"),
            );
            costs.timed.insert(workload.name.clone(), timed);
            costs.counted.insert(workload.name.clone(), per_count);
        }
        costs
    }
}

/// A load that runs for a set time: its warmup and duration.
fn load_seconds(workload: &Workload) -> Option<f64> {
    let load = workload.load.as_ref()?;
    // An SLA search's probes are as many as its bound needs: unknown.
    let duration = load.model.duration.filter(|_| load.model.sla.is_none())?;
    Some((duration + load.warmup).as_secs_f64())
}

/// One run of `workload`'s command on a build already here (the first
/// variant's with one), timed; `None` where none is built or it fails.
fn probe(cx: &Context, workload: &Workload) -> Option<f64> {
    let run = workload.run.as_ref()?;
    let bindings = cx
        .experiment
        .variants
        .iter()
        .find_map(|v| cx.bindings(v, Stage::Final).ok())?;
    let line = run.expand(&bindings).ok()?;
    let mut command = std::process::Command::new("sh");
    command.arg("-c").arg(&line).current_dir(&cx.experiment.dir);
    let started = Instant::now();
    let captured = crate::process::capture_command(&mut command, PROBE_TIMEOUT).ok()?;
    captured.success().then(|| started.elapsed().as_secs_f64())
}

/// The builds and training steps counted over every variant.
#[derive(Debug, Default)]
struct Tally {
    cached: usize,
    to_do: usize,
    /// Seconds of the builds to do that have a figure.
    seconds: f64,
    /// Builds to do timed as this work directory's typical build.
    typical: usize,
    /// Builds to do with no figure at all.
    unknown: usize,
    training_runs: usize,
    /// Training steps to do (one per instrumented build trained).
    trainings: usize,
}

impl Tally {
    fn add(&mut self, step: &Step, typical: Option<f64>) {
        if step.training > 0 {
            self.training_runs += step.training;
            self.trainings += 1;
            return;
        }
        if !step.build {
            return;
        }
        match step.state {
            State::Cached => self.cached += 1,
            State::Shared(_) => {}
            State::ToDo(last) => {
                self.to_do += 1;
                match (last, typical) {
                    (Some(s), _) => self.seconds += s,
                    (None, Some(s)) => {
                        self.seconds += s;
                        self.typical += 1;
                    }
                    (None, None) => self.unknown += 1,
                }
            }
        }
    }
}

/// The median time of the builds recorded in this work directory (any
/// variant, any stage, a shared one's not counted): a build never made
/// here is timed as one of them.
fn typical_build(workdir: &Workdir) -> Option<f64> {
    let entries = fs_err::read_dir(workdir.root.join("variants")).ok()?;
    let seconds: Vec<f64> = entries
        .flatten()
        .filter_map(|e| fs_err::read_dir(e.path()).ok())
        .flat_map(|files| files.flatten().map(|f| f.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .filter_map(|p| crate::build::load_record(&p))
        .filter(|r| r.shared_from.is_none())
        .map(|r| r.seconds)
        .collect();
    median(seconds)
}

/// The plan as text.
fn render(
    cx: &Context,
    fetched: bool,
    variants: &[VariantPlan],
    costs: &Costs,
    counter: InstructionCounter,
    options: &PlanOptions,
) -> String {
    let e = &cx.experiment;
    let mut out = vec![
        format!(
            "plan of {}{}{}: the file is valid",
            if options.race { "a race of " } else { "" },
            e.file.display(),
            if options.quick { " (--quick)" } else { "" }
        ),
        format!(
            "source: {}{}",
            crate::source::describe(&e.target.source, None),
            if fetched {
                ", fetched"
            } else {
                ", not fetched yet (a run fetches it first)"
            }
        ),
        format!("work directory: {}", cx.workdir.root.display()),
        String::new(),
    ];
    let tally = render_variants(&mut out, e, variants, typical_build(&cx.workdir));
    let work = Work::of(e, variants.len(), counter, options.race);
    work.render(&mut out, &tally, counter);
    render_estimate(&mut out, e, &work, &tally, costs, counter);
    let mut text = out.join("\n");
    text.push('\n');
    text
}

fn render_variants(
    out: &mut Vec<String>,
    e: &Experiment,
    variants: &[VariantPlan],
    typical: Option<f64>,
) -> Tally {
    let mut tally = Tally::default();
    out.push(format!(
        "variants ({}; the first is the baseline):",
        variants.len()
    ));
    for v in variants {
        out.push(format!("  {:<16} {}", v.name, v.how));
        for step in &v.steps {
            let state = match &step.state {
                State::Cached => "cached".to_owned(),
                State::Shared(donor) => format!("{donor}'s"),
                State::ToDo(Some(s)) => format!("to do (last time {})", seconds(*s)),
                State::ToDo(None) => "to do".to_owned(),
            };
            out.push(format!("      {:<36} {state}", step.what));
            tally.add(step, typical);
        }
    }
    for left in &e.race.left_out {
        out.push(format!("  left out: {} ({})", left.candidate, left.reason));
    }
    tally
}

/// The runs a bench makes, counted as the bench counts them.
struct Work<'a> {
    bench: Vec<&'a Workload>,
    rounds: u32,
    variants: usize,
    counted_rounds: u32,
    counted: Vec<&'a Workload>,
    counting: bool,
    warmup: u32,
    /// A sequential bench (or a race) may stop before `rounds`.
    at_most: bool,
}

impl<'a> Work<'a> {
    fn of(e: &'a Experiment, variants: usize, counter: InstructionCounter, race: bool) -> Self {
        let bench = bench_workloads(e);
        let counting = e.bench.metrics.contains(&Builtin::INSTRUCTIONS);
        let rounds = if race {
            e.race.max
        } else {
            e.bench
                .sequential
                .as_ref()
                .map_or(e.bench.repetitions, |s| s.max)
        };
        let counted_workloads = bench
            .iter()
            .copied()
            .filter(|w| counting && crate::served::counted(w.load.as_ref(), counter))
            .collect();
        Self {
            bench,
            rounds,
            variants,
            counted_rounds: e.bench.instruction_repetitions.min(rounds),
            counted: counted_workloads,
            counting,
            warmup: e.bench.warmup,
            at_most: race || e.bench.sequential.is_some(),
        }
    }

    fn render(&self, out: &mut Vec<String>, tally: &Tally, counter: InstructionCounter) {
        let n = self.variants;
        out.push(String::new());
        out.push("work:".to_owned());
        out.push(format!(
            "  builds: {} to do, {} cached",
            tally.to_do, tally.cached
        ));
        out.push(format!(
            "  training runs: {} (each training workload once on each training build)",
            tally.training_runs
        ));
        out.push(format!(
            "  bench: ({} warmup + {}{} rounds) × {n} variant(s) × {} workload(s) = {}{} timed runs",
            self.warmup,
            if self.at_most { "at most " } else { "" },
            self.rounds,
            self.bench.len(),
            if self.at_most { "at most " } else { "" },
            u64::from(self.warmup + self.rounds) * (n * self.bench.len()) as u64
        ));
        if self.counting {
            out.push(format!(
                "  instructions: {} rounds × {n} variant(s) × {} workload(s) = {} {} runs",
                self.counted_rounds,
                self.counted.len(),
                self.counted_rounds as usize * n * self.counted.len(),
                counter.name()
            ));
        }
    }
}

fn render_estimate(
    out: &mut Vec<String>,
    e: &Experiment,
    work: &Work,
    tally: &Tally,
    costs: &Costs,
    counter: InstructionCounter,
) {
    let n = work.variants as f64;
    let timed = |w: &&Workload| costs.timed.get(&w.name).map(|c| c.0);
    let bench_s =
        work.bench.iter().filter_map(timed).sum::<f64>() * n * f64::from(work.warmup + work.rounds);
    let counted_s = work
        .counted
        .iter()
        .filter_map(|w| costs.counted.get(&w.name).map(|c| c.0))
        .sum::<f64>()
        * n
        * f64::from(work.counted_rounds);
    let training_s = training_workloads(e).iter().filter_map(timed).sum::<f64>()
        * TRAINING_SLOWDOWN
        * tally.trainings as f64;
    let total = tally.seconds + training_s + bench_s + counted_s;
    let known = tally.unknown == 0 && costs.unknown.is_empty();
    out.push(String::new());
    out.push(if known {
        format!("estimate: about {}", seconds(total))
    } else if tally.seconds + bench_s == 0.0 {
        "estimate: unknown: nothing has been built or run here yet (after `afterburner build`, a plan times the rest from those builds and a probe run of each workload)".to_owned()
    } else {
        format!("estimate: at least {} (what has no figure is named below)", seconds(total))
    });
    let mut builds_from = vec!["each build's last time here".to_owned()];
    if tally.typical > 0 {
        builds_from.push(format!(
            "{} never built here timed as this directory's median build",
            tally.typical
        ));
    }
    if tally.unknown > 0 {
        builds_from.push(format!(
            "{} with no build here to time them by",
            tally.unknown
        ));
    }
    out.push(format!(
        "  builds        {:>10}  ({})",
        seconds(tally.seconds),
        builds_from.join("; ")
    ));
    out.push(format!(
        "  training      {:>10}  ({TRAINING_SLOWDOWN}× a bench run of each training workload)",
        seconds(training_s)
    ));
    let sources: Vec<String> = work
        .bench
        .iter()
        .filter_map(|w| {
            let (s, from) = costs.timed.get(&w.name)?;
            Some(format!("{} {} ({from})", w.name, seconds_fine(*s)))
        })
        .collect();
    out.push(format!(
        "  bench         {:>10}  (a run: {})",
        seconds(bench_s),
        if sources.is_empty() {
            "unknown".to_owned()
        } else {
            sources.join(", ")
        }
    ));
    if work.counting {
        let from = work
            .counted
            .iter()
            .find_map(|w| costs.counted.get(&w.name).map(|c| c.1))
            .unwrap_or("unknown");
        out.push(format!(
            "  instructions  {:>10}  ({} runs, each {from})",
            seconds(counted_s),
            counter.name()
        ));
    }
    if !costs.history_runs.is_empty() {
        out.push(format!(
            "  earlier runs read: {}",
            costs.history_runs.join(", ")
        ));
    }
    if !costs.unknown.is_empty() {
        out.push(format!(
            "  no figure for {}: no earlier run here, and no build here to probe",
            costs.unknown.join(", ")
        ));
    }
}

/// "0.105 s" below a minute's tenth, else as [`seconds`].
fn seconds_fine(s: f64) -> String {
    if s < 10.0 {
        format!("{s:.3} s")
    } else {
        seconds(s)
    }
}

/// "42 s", "3 min 05 s", "1 h 02 min".
fn seconds(s: f64) -> String {
    let s = Duration::try_from_secs_f64(s.round())
        .unwrap_or_default()
        .as_secs();
    match s {
        0..60 => format!("{s} s"),
        60..3600 => format!("{} min {:02} s", s / 60, s % 60),
        _ => format!("{} h {:02} min", s / 3600, (s % 3600) / 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(workload: &str, kind: RunKind, started_unix_ms: u64) -> crate::measure::RunRecord {
        crate::measure::RunRecord {
            round: 0,
            warmup: false,
            position: 0,
            variant: "v".to_owned(),
            workload: workload.to_owned(),
            kind,
            started_unix_ms,
            success: true,
            exit: "exit code 0".to_owned(),
            wall_ns: None,
            user_ns: None,
            sys_ns: None,
            max_rss_kib: None,
            instructions: None,
            instruction_source: None,
            figures: BTreeMap::new(),
            error: None,
            stdout_log: PathBuf::new(),
            stderr_log: PathBuf::new(),
        }
    }

    /// A run costs the time from its start to the next run's (whatever
    /// its record says of its own wall time), kept apart for timed and
    /// counted runs; the median of each decides.
    #[test]
    fn a_run_costs_the_gap_to_the_next_start() {
        let mut history = History::default();
        history.add(&[
            record("a", RunKind::Timing, 1_000),
            record("a", RunKind::Timing, 1_100),
            record("a", RunKind::Timing, 1_300),
            record("a", RunKind::Instructions, 1_400),
            record("a", RunKind::Instructions, 6_400),
            record("b", RunKind::Timing, 11_400),
        ]);
        assert_eq!(history.median("a", false), Some(0.1));
        assert_eq!(history.median("a", true), Some(5.0));
        assert_eq!(history.median("b", false), None);
    }

    #[test]
    fn durations_read_as_a_person_writes_them() {
        assert_eq!(seconds(42.4), "42 s");
        assert_eq!(seconds(185.0), "3 min 05 s");
        assert_eq!(seconds(3_720.0), "1 h 02 min");
        assert_eq!(seconds_fine(0.1049), "0.105 s");
    }
}
