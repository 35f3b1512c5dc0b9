//! The bench phase: every variant on every benchmark workload, in rounds
//! whose order is shuffled with a recorded seed, warmup first; each finished
//! run is appended to `raw.jsonl` and synced before the next starts.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::{bail, Context as _, Result};
use serde::{Deserialize, Serialize};

use crate::build;
use crate::env::{self, Environment};
use crate::experiment::{Bindings, MetricKind, Workload};
use crate::measure::{self, InstructionCounter, Metric, RunKind, RunRecord, RunSetup, RunSlot};
use crate::pipeline::Context;
use crate::process::quote_output;
use crate::rng::Rng;
use crate::toolchain::{tools, Optimization, Stage};
use crate::workdir::{tail, META_FILE, RAW_FILE};

/// Version of `meta.json`, `raw.jsonl` and `results.json`; bumped on any
/// incompatible change (see `docs/results-schema.md`).
pub const SCHEMA_VERSION: u32 = 1;

/// What a bench run is, written to `meta.json` before the first run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BenchMeta {
    pub schema_version: u32,
    pub run_id: String,
    /// The experiment file.
    pub experiment: PathBuf,
    pub target: String,
    /// Seed of the per-round order shuffle (and of the bootstrap).
    pub seed: u64,
    pub repetitions: u32,
    pub warmup: u32,
    pub instruction_repetitions: u32,
    /// Confidence level, e.g. 0.95.
    pub confidence: f64,
    pub instruction_counter: InstructionCounter,
    pub metrics: Vec<Metric>,
    /// Variants in experiment order; the first is the baseline.
    pub variants: Vec<VariantInfo>,
    /// Benchmark workloads, in order.
    pub workloads: Vec<String>,
    /// Workloads that trained the profiles (role train or both).
    #[serde(default)]
    pub training_workloads: Vec<String>,
    pub environment: Environment,
}

/// How a variant was built.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VariantInfo {
    pub name: String,
    pub optimize: Vec<Optimization>,
    pub compiler_version: String,
    pub cflags: String,
    pub ldflags: String,
    /// Go build flags (`GOFLAGS`); empty for C and C++.
    #[serde(default)]
    pub goflags: String,
    pub env: BTreeMap<String, String>,
    /// Binary name → path.
    pub binaries: BTreeMap<String, PathBuf>,
    /// The final build's log (absent in runs recorded before it was added).
    #[serde(default)]
    pub build_log: PathBuf,
}

/// Run the benchmark; returns the run directory.
pub fn bench(cx: &Context) -> Result<PathBuf> {
    let e = &cx.experiment;
    let wants_instructions = e.bench.metrics.contains(&MetricKind::Instructions);
    let environment = env::capture();
    let counter = InstructionCounter::detect(environment.perf_counters);
    if wants_instructions && counter == InstructionCounter::Callgrind {
        tools::ensure(&[tools::VALGRIND])?;
    }
    let bindings: Vec<Bindings> = e
        .variants
        .iter()
        .map(|v| cx.bindings(v, Stage::Final))
        .collect::<Result<_>>()?;
    let meta = bench_meta(cx, environment, counter)?;
    let run_dir = cx.workdir.run(&meta.run_id);
    let logs = run_dir.join("logs");
    fs_err::create_dir_all(&logs)?;
    fs_err::write(run_dir.join(META_FILE), serde_json::to_vec_pretty(&meta)?)?;
    let mut raw = RawWriter::create(&run_dir.join(RAW_FILE))?;
    let workloads: Vec<&Workload> = e.workloads.iter().filter(|w| w.role.benches()).collect();
    let mut rng = Rng::new(meta.seed);
    let rounds = e.bench.warmup + e.bench.repetitions;
    eprintln!(
        "benchmarking {} variants × {} workloads: {} warmup + {} rounds, order shuffled with seed {}",
        e.variants.len(),
        workloads.len(),
        e.bench.warmup,
        e.bench.repetitions,
        meta.seed
    );
    for round in 0..rounds {
        let warmup = round < e.bench.warmup;
        let counted_round = round.checked_sub(e.bench.warmup);
        let count_instructions = wants_instructions
            && counted_round.is_some_and(|c| c < e.bench.instruction_repetitions);
        let mut line = format!(
            "round {}/{rounds}{}:",
            round + 1,
            if warmup { " (warmup)" } else { "" }
        );
        for workload in &workloads {
            let mut order: Vec<usize> = (0..e.variants.len()).collect();
            rng.shuffle(&mut order);
            for (position, &index) in order.iter().enumerate() {
                let variant = &e.variants[index];
                let command = workload.run.expand(&bindings[index])?;
                let setup = RunSetup {
                    command: &command,
                    env: &variant.env,
                    cwd: &e.dir,
                    logs: &logs,
                    scratch: &run_dir.join("scratch"),
                    counter,
                };
                let mut kinds = vec![RunKind::Timing];
                if count_instructions {
                    kinds.push(RunKind::Instructions);
                }
                for kind in kinds {
                    let slot = RunSlot {
                        round,
                        warmup,
                        position: u32::try_from(position).unwrap_or(u32::MAX),
                        variant: &variant.name,
                        workload,
                        kind,
                    };
                    let record = measure::measure(&slot, &setup).with_context(|| {
                        format!(
                            "run of workload `{}` on variant `{}`",
                            workload.name, variant.name
                        )
                    })?;
                    raw.append(&record)?;
                    check_success(&record, &command)?;
                    if kind == RunKind::Timing {
                        let wall = record.wall_ns.unwrap_or(0) as f64 / 1e9;
                        let _ = write!(line, " {}={wall:.3}s", variant.name);
                    }
                }
            }
        }
        eprintln!("{line}");
    }
    Ok(run_dir)
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
    bail!(
        "workload `{}` failed on variant `{}` with {} (the run is kept in raw.jsonl)\ncommand: {command}\n{}\nlogs: {}\nhint: run the command by hand to see why; every workload run must exit 0",
        record.workload,
        record.variant,
        record.exit,
        quote_output(&tail(&record.stderr_log, 20)),
        record.stderr_log.display()
    )
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
    let mut metrics: Vec<Metric> = e
        .bench
        .metrics
        .iter()
        .map(|m| Metric::builtin(*m, counter))
        .collect();
    for workload in e.workloads.iter().filter(|w| w.role.benches()) {
        for figure in &workload.figures {
            if !metrics.iter().any(|m| m.name == figure.name) {
                metrics.push(Metric::figure(figure));
            }
        }
    }
    let variants = e
        .variants
        .iter()
        .map(|v| {
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
        instruction_counter: counter,
        metrics,
        variants,
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
    })
}

/// A sortable, unique run id: UTC date and time, plus a suffix on collision.
fn run_id(unix_secs: u64, runs: &Path) -> String {
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

/// Appends run records as JSON lines, each synced before returning.
struct RawWriter {
    file: fs_err::File,
}

impl RawWriter {
    fn create(path: &Path) -> Result<Self> {
        let file = fs_err::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?;
        Ok(Self { file })
    }

    fn append(&mut self, record: &RunRecord) -> Result<()> {
        let mut line = serde_json::to_vec(record)?;
        line.push(b'\n');
        self.file.write_all(&line)?;
        self.file.flush()?;
        self.file.file().sync_data()?;
        Ok(())
    }
}

/// Read every run of `raw.jsonl`; a torn last line (a crash mid-write) is skipped.
pub fn read_raw(path: &Path) -> Result<Vec<RunRecord>> {
    let text = fs_err::read_to_string(path)?;
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let mut runs = Vec::with_capacity(lines.len());
    for (i, line) in lines.iter().enumerate() {
        match serde_json::from_str(line) {
            Ok(run) => runs.push(run),
            Err(_) if i + 1 == lines.len() => eprintln!("warning: {}: ignoring a torn last line", path.display()),
            Err(err) => bail!("{}:{}: not a run record: {err}\nhint: raw.jsonl is written by afterburner; was it edited?", path.display(), i + 1),
        }
    }
    Ok(runs)
}
