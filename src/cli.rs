//! Command-line arguments and dispatch to the library.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context as _, Result};
use clap::{Args, Parser, Subcommand};

use crate::pipeline::{self, Context, Options};

/// Make a C, C++ or Go program faster with feedback-directed optimization, and prove it.
#[derive(Debug, Parser)]
#[command(name = "afterburner", version, about, after_help = optimizations_help())]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// Only warnings, errors and results: no progress.
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    pub quiet: bool,
    /// Also say what each run did.
    #[arg(short, long, global = true)]
    pub verbose: bool,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// The whole pipeline: build, train, bench, report.
    Run(PhaseArgs),
    /// A dry run: validate the file, list the variants and the builds,
    /// training runs, rounds and instruction runs a run would make (cached
    /// builds said), and estimate its time. Builds and runs nothing.
    Plan(PlanArgs),
    /// The whole pipeline with a race for a bench: after each look the
    /// variants decided slower than the leader are dropped (`[race]`).
    Race(PhaseArgs),
    /// Fetch the source and build every variant (instrumented where a profile is needed).
    Build(PhaseArgs),
    /// Run the training workloads on instrumented builds, then build with the profiles.
    Train(PhaseArgs),
    /// Benchmark every variant, interleaved and repeated; writes runs/<id>/raw.jsonl.
    Bench(BenchArgs),
    /// Redraw results.json and report.md from a bench run's raw records.
    Report(ReportArgs),
    /// A run's progress; for a cluster run, its jobs, blocks and logs.
    Status(ReportArgs),
    /// Where the instructions went: per function and object, each variant
    /// against the baseline, from callgrind's files of the counted runs.
    Explain(ExplainArgs),
    /// Two runs side by side: B against A, per workload, metric and variant.
    Compare {
        /// A run directory (runs/<id>/) or a results.json.
        a: PathBuf,
        /// A run directory (runs/<id>/) or a results.json.
        b: PathBuf,
    },
    /// A CI gate: a run against a baseline run and --keep-gain rules.
    ///
    /// A case passes only when its interval rules out a regression beyond
    /// --threshold, fails when it is decided worse by more, and is
    /// inconclusive otherwise. Exit status: 0 the gate passed; 1 a case
    /// failed; 2 an error (no baseline, mismatched runs, a bad option);
    /// 3 inconclusive, some case undecided and none failed (0 with
    /// --inconclusive pass).
    Check(CheckArgs),
    /// This machine's error rate on your workloads: the baseline's binaries
    /// run as two variants (A/A) within a time budget, judged in trials of
    /// the file's repetitions as a report judges them.
    Calibrate(CalibrateArgs),
    /// Stored runs (history.db in the work directory); `history show ID` redraws one.
    History(HistoryArgs),
    /// Print the JSON Schema of results.json (generated from the types).
    Schema,
    /// Print the machine and software capture.
    Env {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// What each optimization needs, what is here, and how to install the rest.
    #[command(after_help = optimizations_help())]
    Doctor {
        /// Install what is missing with apt-get (as root).
        #[arg(long)]
        fix: bool,
    },
    /// Load a running server with any driver and model (both listed below).
    #[command(after_help = crate::load::command::help())]
    Load(crate::load::command::LoadArgs),
    /// Ship a variant's final build: its binaries stripped (debug info in
    /// `.debug` files), its merged profiles and a manifest.json, in one archive.
    Export(ShipArgs),
    /// Profile a running process without stopping it: sampled with perf, its
    /// instrumented counters dumped, or a Go service's pprof endpoint.
    Profile(crate::capture::ProfileArgs),
    /// Build Lua's interpreter from Debian's source as baseline, PGO, LTO and
    /// PGO+LTO variants (and BOLT where installed), train and benchmark them.
    Demo(DemoArgs),
    /// Print the manifests the experiment's cluster run would have on
    /// another scheduler (`--engine kubernetes --dry-run`: Indexed Jobs
    /// per phase, a `ReadWriteMany` volume; see `docs/kubernetes.md`).
    Cluster(ClusterPrintArgs),
    /// One run's load on a node of its own (what a cluster block with
    /// `load = "separate"` runs there through srun).
    #[command(hide = true)]
    LoadStep(crate::bench::LoadStepArgs),
}

/// The words of a variant's `optimize` list, from their declarations.
fn optimizations_help() -> String {
    format!(
        "Optimizations (a variant's `optimize` list; stack them in order):\n{}",
        crate::toolchain::optimize::table()
    )
}

#[derive(Debug, Args)]
pub struct PhaseArgs {
    /// The experiment file.
    #[arg(default_value = "afterburner.toml")]
    pub file: PathBuf,
    /// Apply the experiment's [quick] overrides: fewer repetitions, smaller inputs.
    #[arg(long)]
    pub quick: bool,
    /// Work directory (default: .afterburner/ beside the experiment file).
    #[arg(long)]
    pub workdir: Option<PathBuf>,
    /// Only this variant (build and train; a cluster's per-variant jobs).
    #[arg(long, value_name = "NAME")]
    pub variant: Option<String>,
    #[command(flatten)]
    pub cluster: ClusterArgs,
    #[command(flatten)]
    pub exports: ExportArgs,
}

/// Where `run` and `bench` run: here, or as Slurm jobs.
#[derive(Debug, Args, Default)]
pub struct ClusterArgs {
    /// Run as Slurm jobs (builds per variant, then the bench as a job
    /// array of blocks), with the experiment's [cluster] settings or
    /// defaults (run and bench).
    #[arg(long, conflicts_with = "local")]
    pub slurm: bool,
    /// Bench blocks on the cluster: the job array's tasks, a node each.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub nodes: Option<u32>,
    /// Submit the cluster jobs and return; `afterburner status` follows them.
    #[arg(long)]
    pub detach: bool,
    /// Run here even if the experiment has a [cluster] section (what the
    /// cluster's own jobs do).
    #[arg(long)]
    pub local: bool,
}

impl ClusterArgs {
    /// The cluster to submit to, if any: `--slurm` or `[cluster]`, unless `--local`.
    fn cluster(&self, e: &crate::experiment::Experiment) -> Option<crate::experiment::Cluster> {
        if self.local {
            return None;
        }
        let mut cluster = e
            .cluster
            .clone()
            .or_else(|| self.slurm.then(crate::experiment::Cluster::slurm_defaults))?;
        if let Some(n) = self.nodes {
            cluster.nodes = n;
        }
        Some(cluster)
    }
}

/// Copies of the report in other formats, like hyperfine's `--export-*`.
#[derive(Debug, Args, Default)]
pub struct ExportArgs {
    #[arg(long = "export", value_name = "FORMAT=FILE", value_parser = parse_export, help = export_help())]
    pub export: Vec<(String, PathBuf)>,
}

/// `--export`'s help: the formats, from their declarations.
fn export_help() -> String {
    let formats: Vec<String> = crate::report::EXPORTERS
        .iter()
        .map(|e| format!("{} ({})", e.name(), e.describe()))
        .collect();
    format!(
        "Also write the report as FORMAT to FILE (repeatable; `--export-FORMAT FILE` is the same). Formats: {}",
        formats.join("; ")
    )
}

/// `FORMAT=FILE`, with FORMAT one of the exporters.
fn parse_export(value: &str) -> Result<(String, PathBuf), String> {
    let (format, file) = value
        .split_once('=')
        .filter(|(_, file)| !file.is_empty())
        .ok_or_else(|| format!("`{value}` is not FORMAT=FILE, e.g. csv=results.csv"))?;
    crate::report::exporter(format)?;
    Ok((format.to_owned(), PathBuf::from(file)))
}

impl ExportArgs {
    fn exports(&self) -> crate::report::Exports {
        crate::report::Exports(
            self.export
                .iter()
                .filter_map(|(format, file)| {
                    // Checked when parsed.
                    crate::report::exporter(format)
                        .ok()
                        .map(|e| (e, file.clone()))
                })
                .collect(),
        )
    }
}

/// Parse the command line: `--export-FORMAT FILE` (and
/// `--export-FORMAT=FILE`), hyperfine's spelling, becomes
/// `--export FORMAT=FILE` for every format there is, so a new exporter
/// needs no flag of its own. Arguments after `--` are left alone.
pub fn parse() -> Cli {
    Cli::parse_from(expand_export_flags(std::env::args_os()))
}

fn expand_export_flags(args: impl IntoIterator<Item = OsString>) -> Vec<OsString> {
    let mut out = Vec::new();
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        if arg == "--" {
            out.push(arg);
            out.extend(args);
            break;
        }
        let text = arg.to_string_lossy();
        let Some(rest) = text.strip_prefix("--export-") else {
            out.push(arg);
            continue;
        };
        let (format, inline) = match rest.split_once('=') {
            Some((f, file)) => (f.to_owned(), Some(file.to_owned())),
            None => (rest.to_owned(), None),
        };
        if crate::report::exporter(&format).is_err() {
            out.push(arg);
            continue;
        }
        let file = match inline {
            Some(file) => OsString::from(file),
            None => args.next().unwrap_or_default(),
        };
        let mut value = OsString::from(format!("{format}="));
        value.push(file);
        out.extend([OsString::from("--export"), value]);
    }
    out
}

#[derive(Debug, Args)]
pub struct BenchArgs {
    #[command(flatten)]
    pub phase: PhaseArgs,
    /// Continue the latest run where it stopped (same seed and order),
    /// keeping every finished run; a cluster run resubmits its unfinished blocks.
    #[arg(long)]
    pub resume: bool,
    /// Run one block of cluster run --run ID (what a job array task does).
    #[arg(long, value_name = "K", requires = "run", hide = true)]
    pub block: Option<u32>,
    /// The cluster run a --block belongs to.
    #[arg(long, value_name = "ID", requires = "block", hide = true)]
    pub run: Option<String>,
}

/// `afterburner cluster --engine kubernetes --dry-run`'s arguments.
#[derive(Debug, Args)]
pub struct ClusterPrintArgs {
    /// The experiment file.
    #[arg(default_value = "afterburner.toml")]
    pub file: PathBuf,
    /// The scheduler to write manifests for.
    #[arg(long, value_parser = ["kubernetes"], default_value = "kubernetes")]
    pub engine: String,
    /// Print the manifests, apply nothing (the one mode there is).
    #[arg(long)]
    pub dry_run: bool,
    /// Apply the experiment's [quick] overrides in the pods' commands.
    #[arg(long)]
    pub quick: bool,
    /// Bench blocks (default: [cluster] nodes, else 2).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub nodes: Option<u32>,
    /// The image holding afterburner and the toolchains.
    #[arg(long, default_value = "afterburner:latest")]
    pub image: String,
    /// Whole CPUs per pod (requests equal limits: Guaranteed `QoS`).
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub cpus: u32,
    /// Memory per pod, as Kubernetes writes it.
    #[arg(long, default_value = "4Gi")]
    pub memory: String,
}

#[derive(Debug, Args)]
pub struct HistoryArgs {
    /// `show` to redraw a stored run's report.
    #[arg(value_parser = ["show"])]
    pub action: Option<String>,
    /// The run id to show.
    pub id: Option<String>,
    /// The experiment file whose work directory holds the history.
    #[arg(long, default_value = "afterburner.toml")]
    pub file: PathBuf,
    /// Work directory (default: .afterburner/ beside the experiment file).
    #[arg(long)]
    pub workdir: Option<PathBuf>,
}

/// `afterburner calibrate`'s arguments.
#[derive(Debug, Args)]
pub struct CalibrateArgs {
    /// The experiment file.
    #[arg(default_value = "afterburner.toml")]
    pub file: PathBuf,
    /// The time the A/A rounds may take (building not counted), e.g. 2m.
    #[arg(long, value_name = "DURATION", value_parser = budget, default_value = "2m")]
    pub budget: std::time::Duration,
    /// Random subsets of the file's repetitions judged besides the
    /// disjoint trials.
    #[arg(long, value_name = "N", default_value_t = pipeline::DEFAULT_SUBSAMPLES)]
    pub subsets: u32,
    /// Apply the experiment's [quick] overrides: fewer repetitions, smaller inputs.
    #[arg(long)]
    pub quick: bool,
    /// Work directory (default: .afterburner/ beside the experiment file).
    #[arg(long)]
    pub workdir: Option<PathBuf>,
}

/// `--budget 10m`: a duration more than 0.
fn budget(text: &str) -> Result<std::time::Duration, String> {
    crate::units::parse_duration(text)
        .filter(|d| !d.is_zero())
        .ok_or_else(|| format!("`{text}` is not a duration, e.g. 90s, 10m or 1h"))
}

/// `afterburner check`'s arguments.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The experiment file whose work directory holds the runs and history.db.
    #[arg(default_value = "afterburner.toml")]
    pub file: PathBuf,
    /// Work directory (default: .afterburner/ beside the experiment file).
    #[arg(long)]
    pub workdir: Option<PathBuf>,
    /// The run to check: a run directory or its results.json (default: the latest run).
    #[arg(long, value_name = "RUN")]
    pub run: Option<PathBuf>,
    /// The baseline run: a run directory or a results.json (default: the
    /// last earlier run of the same target on the same machine class in
    /// history.db). Unpaired: two runs minutes apart differ by more than
    /// the spread within each; prefer --rev.
    #[arg(long, value_name = "RUN", conflicts_with = "rev")]
    pub against: Option<PathBuf>,
    /// The paired gate: build every variant also from this revision of the
    /// target's source (a git commit, branch or tag, or a directory holding
    /// the baseline's source), run both builds interleaved in one run, and
    /// judge each pair within rounds.
    #[arg(long, value_name = "REV")]
    pub rev: Option<String>,
    /// With --rev: build and run with the experiment's `[quick]` settings.
    #[arg(long, requires = "rev")]
    pub quick: bool,
    /// With --rev: rounds go on past the repetitions, looked at
    /// sequentially (alpha spending), until every case passes or fails or
    /// this much time is spent, e.g. 10m.
    #[arg(long, requires = "rev", value_name = "DURATION", value_parser = budget)]
    pub budget: Option<std::time::Duration>,
    /// The regression a case is judged by: it fails when decided worse
    /// than the baseline by more than this, and passes only when its
    /// interval rules out more (default: 2% for an exact instruction
    /// count, 5% for time and other noisy metrics).
    #[arg(long, value_name = "PCT%")]
    pub threshold: Option<crate::check::Percent>,
    /// Fail when VARIANT's gain over the baseline variant in this run is
    /// ruled out at PCT% (the upper bound of its interval below it), pass
    /// when its lower bound reaches PCT%, e.g. pgo:5%; repeatable.
    #[arg(long = "keep-gain", value_name = "VARIANT:PCT%")]
    pub keep_gain: Vec<crate::check::KeepGain>,
    /// What a case the data cannot decide makes of the gate: `fail` (exit
    /// 3, a JUnit failure) or `pass` (exit 0, a JUnit skipped case with
    /// the reason); shown as inconclusive either way.
    #[arg(long, value_enum, default_value = "fail")]
    pub inconclusive: crate::check::Inconclusive,
    /// Write JUnit XML here: a test case per workload, variant and headline metric.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    #[arg(
        long,
        value_name = "FILE",
        help = "Write the Markdown summary here (default: append it to $GITHUB_STEP_SUMMARY when that is set)"
    )]
    pub markdown: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    #[command(flatten)]
    pub phase: PhaseArgs,
    /// The run directory to report on (default: the latest run).
    #[arg(long)]
    pub run: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct ExplainArgs {
    /// The experiment file whose work directory holds the runs.
    #[arg(default_value = "afterburner.toml")]
    pub file: PathBuf,
    /// Work directory (default: .afterburner/ beside the experiment file).
    #[arg(long)]
    pub workdir: Option<PathBuf>,
    /// The run directory to explain (default: the latest run).
    #[arg(long)]
    pub run: Option<PathBuf>,
    /// Only this variant against the baseline (default: every variant).
    #[arg(long)]
    pub variant: Option<String>,
    /// Only this workload (default: every benchmark workload).
    #[arg(long)]
    pub workload: Option<String>,
    /// Functions shown per workload and variant, largest change first.
    #[arg(long, default_value_t = 15)]
    pub top: usize,
    /// Run each command workload once per variant under callgrind's cache
    /// and branch simulation (a model, not this CPU) and show mispredicts
    /// and cache misses per variant and their top function.
    #[arg(long)]
    pub simulate: bool,
    /// With --simulate: the experiment's [quick] overrides, as the bench
    /// had them if it ran with --quick.
    #[arg(long, requires = "simulate")]
    pub quick: bool,
}

/// `afterburner export`'s arguments: a variant to pack, or a package to verify.
#[derive(Debug, Args)]
pub struct ShipArgs {
    /// The variant to export (see the experiment's `[[variant]]`s).
    #[arg(required_unless_present = "verify")]
    pub variant: Option<String>,
    /// The experiment file.
    #[arg(default_value = "afterburner.toml")]
    pub file: PathBuf,
    /// The archive to write: NAME.tar.zst (or .tar.gz, .tar).
    #[arg(long, value_name = "PATH", required_unless_present = "verify")]
    pub out: Option<PathBuf>,
    /// Instead of exporting: unpack this archive to a temporary folder and
    /// check every file against the SHA-256 its manifest.json records.
    #[arg(long, value_name = "PATH", conflicts_with_all = ["variant", "out"])]
    pub verify: Option<PathBuf>,
    /// Work directory (default: .afterburner/ beside the experiment file).
    #[arg(long)]
    pub workdir: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct PlanArgs {
    /// The experiment file.
    #[arg(default_value = "afterburner.toml")]
    pub file: PathBuf,
    /// Plan the run with the file's [quick] overrides.
    #[arg(long)]
    pub quick: bool,
    /// Plan `afterburner race`: up to [race]'s most rounds, as candidates drop.
    #[arg(long)]
    pub race: bool,
    /// Work directory (default: .afterburner/ beside the experiment file).
    #[arg(long)]
    pub workdir: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct DemoArgs {
    /// A short version: baseline and pgo only, the two trained scripts, smaller inputs.
    #[arg(long)]
    pub quick: bool,
    /// Where the demo's experiment file and work directory go.
    #[arg(long, default_value = "afterburner-demo")]
    pub dir: PathBuf,
}

/// `--run DIR`, or the work directory's latest run.
fn run_dir_or_latest(cx: &Context, run: Option<PathBuf>) -> Result<PathBuf> {
    match run {
        Some(dir) => Ok(dir),
        None => cx.workdir.latest_run().with_context(|| {
            format!(
                "no bench run in {}\nhint: run `afterburner bench` first",
                cx.workdir.runs().display()
            )
        }),
    }
}

/// `run` or `bench` as cluster jobs; the merged report once they end
/// (`None` when detached).
fn on_cluster(
    cx: &Context,
    args: &PhaseArgs,
    cluster: crate::experiment::Cluster,
    build: bool,
    resume: bool,
) -> Result<Option<crate::analysis::Results>> {
    let request = crate::cluster::Request {
        cluster,
        file: args.file.clone(),
        quick: args.quick,
        build,
        detach: args.cluster.detach,
    };
    let run_dir = if resume {
        crate::cluster::resume(cx, &request)?
    } else {
        crate::cluster::run(cx, &request)?
    };
    if request.detach {
        return Ok(None);
    }
    pipeline::report(&run_dir).map(Some)
}

impl Cli {
    /// The exit status when the command fails: 2 for `check` (whose 1 means
    /// "the gate failed"), else 1.
    pub fn error_status(&self) -> u8 {
        match self.command {
            Command::Check(_) => 2,
            _ => 1,
        }
    }
}

/// Run the parsed command; its exit status when it did not fail.
pub fn run(cli: Cli) -> Result<ExitCode> {
    crate::progress::set_level(cli.quiet, cli.verbose);
    if let Command::Check(a) = &cli.command {
        return check(a);
    }
    dispatch(cli).map(|()| ExitCode::SUCCESS)
}

/// `check`: judge, write the reports, print; exit 1 when the gate failed.
fn check(args: &CheckArgs) -> Result<ExitCode> {
    let options = crate::check::Options {
        workdir: workdir_root(&args.file, args.workdir.as_ref()),
        run: args.run.clone(),
        against: args.against.clone(),
        threshold: crate::check::Threshold(args.threshold),
        keep_gain: args.keep_gain.clone(),
        inconclusive: args.inconclusive,
        budget: args.budget,
    };
    let outcome = match &args.rev {
        Some(rev) => {
            let mut cx = Context::open(
                &args.file,
                &Options {
                    quick: args.quick,
                    workdir: args.workdir.clone(),
                    variant: None,
                },
            )?;
            crate::check::check_revision(&mut cx, rev, &options)?
        }
        None => crate::check::check(&options)?,
    };
    crate::check::write_reports(&outcome, args.junit.as_deref(), args.markdown.as_deref())?;
    // A reader that hung up early does not change the verdict: the status.
    crate::stdout::unless_closed(crate::stdout::print(format_args!(
        "{}",
        crate::check::markdown::text(&outcome)
    )))?;
    Ok(ExitCode::from(
        outcome.gate().exit_status(args.inconclusive),
    ))
}

fn dispatch(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Run(a) => {
            let cx = open(&a)?;
            let results = match a.cluster.cluster(&cx.experiment) {
                Some(cluster) => {
                    let Some(results) = on_cluster(&cx, &a, cluster, true, false)? else {
                        return Ok(());
                    };
                    results
                }
                None => pipeline::run(&cx)?,
            };
            a.exports.exports().write(&results)
        }
        Command::Race(a) => race(&a),
        Command::Build(a) => pipeline::build(&open(&a)?),
        Command::Train(a) => pipeline::train(&open(&a)?),
        Command::Bench(a) => {
            let cx = open(&a.phase)?;
            if let (Some(k), Some(id)) = (a.block, &a.run) {
                crate::bench::bench_block(&cx, id, k)?;
                return Ok(());
            }
            let results = match a.phase.cluster.cluster(&cx.experiment) {
                Some(cluster) => {
                    let Some(results) = on_cluster(&cx, &a.phase, cluster, false, a.resume)? else {
                        return Ok(());
                    };
                    results
                }
                None => pipeline::bench_and_report(&cx, a.resume)?,
            };
            a.phase.exports.exports().write(&results)
        }
        Command::Status(a) => {
            let cx = open(&a.phase)?;
            let run_dir = run_dir_or_latest(&cx, a.run)?;
            crate::stdout::print(format_args!("{}", crate::cluster::status(&run_dir)?))?;
            Ok(())
        }
        Command::Report(a) => {
            let cx = open(&a.phase)?;
            let run_dir = run_dir_or_latest(&cx, a.run)?;
            let results = pipeline::report(&run_dir)?;
            a.phase.exports.exports().write(&results)
        }
        Command::History(a) => history(&a),
        // Answered by `run` with its own exit status; here for completeness.
        Command::Check(a) => check(&a).map(|_| ()),
        Command::Explain(a) => explain(&a),
        Command::Load(a) => crate::load::command::main(&a),
        Command::Schema => crate::stdout::print(format_args!("{}", crate::report::schema())),
        Command::Compare { a, b } => compare(&a, &b),
        Command::Env { json } => env(json),
        Command::Doctor { fix } => doctor(fix),
        Command::Calibrate(a) => calibrate(&a),
        Command::Demo(a) => demo(&a),
        Command::Plan(a) => plan(a),
        Command::Export(a) => ship(&a),
        Command::LoadStep(a) => crate::bench::load_step(&a),
        Command::Cluster(a) => {
            crate::stdout::print(format_args!("{}", kubernetes(&a)?))?;
            Ok(())
        }
        Command::Profile(a) => crate::capture::main(&a),
    }
}

fn compare(a: &Path, b: &Path) -> Result<()> {
    let (ra, rb) = (
        crate::analysis::read::read_run(a)?,
        crate::analysis::read::read_run(b)?,
    );
    let table = crate::report::compare::compare_runs(
        &ra,
        &rb,
        &a.display().to_string(),
        &b.display().to_string(),
    )?;
    crate::stdout::print(format_args!("{table}"))
}

fn env(json: bool) -> Result<()> {
    let env = crate::env::capture();
    if json {
        crate::stdout::line(format_args!("{}", serde_json::to_string_pretty(&env)?))
    } else {
        crate::stdout::print(format_args!("{}", env.render_text()))
    }
}

fn doctor(fix: bool) -> Result<()> {
    let env = crate::env::capture();
    let sections = if fix {
        crate::doctor::fix(&env)?;
        crate::doctor::diagnose(&crate::env::capture())
    } else {
        crate::doctor::diagnose(&env)
    };
    crate::stdout::print(format_args!("{}", crate::doctor::render(&sections)))
}

fn plan(args: PlanArgs) -> Result<()> {
    crate::stdout::unless_closed(pipeline::plan(
        &args.file,
        &pipeline::PlanOptions {
            quick: args.quick,
            race: args.race,
            workdir: args.workdir,
        },
    ))
}

/// The Kubernetes manifests of the experiment's cluster run, as YAML.
fn kubernetes(args: &ClusterPrintArgs) -> Result<String> {
    if !args.dry_run {
        anyhow::bail!(
            "afterburner does not submit to {} yet: it prints the manifests it would apply\nhint: add --dry-run, and see docs/kubernetes.md",
            args.engine
        );
    }
    let e = crate::experiment::load(&args.file, args.quick)?;
    let mut cluster = e
        .cluster
        .clone()
        .unwrap_or_else(crate::experiment::Cluster::slurm_defaults);
    if let Some(n) = args.nodes {
        cluster.nodes = n;
    }
    let phases = crate::cluster::phases(&e, &cluster, true);
    let workdir = crate::workdir::Workdir::new(workdir_root(&args.file, None));
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let options = crate::cluster::kubernetes::Options {
        run_id: crate::bench::run_id(now.as_secs(), &workdir.runs()),
        file: args.file.file_name().map_or_else(
            || "afterburner.toml".to_owned(),
            |n| n.to_string_lossy().into_owned(),
        ),
        image: args.image.clone(),
        cpus: args.cpus,
        memory: args.memory.clone(),
        machine_class: cluster.partition.clone(),
        quick: args.quick,
        seed: e
            .bench
            .seed
            .unwrap_or_else(|| u64::from(now.subsec_nanos()) ^ now.as_secs()),
    };
    let manifests = crate::cluster::kubernetes::manifests(&phases, &options);
    Ok(crate::cluster::kubernetes::yaml(&manifests))
}

/// `export VARIANT --out PATH`, or `export --verify PATH`.
fn ship(args: &ShipArgs) -> Result<()> {
    if let Some(archive) = &args.verify {
        let (manifest, files) = crate::ship::verify(archive)?;
        crate::stdout::line(format_args!(
            "OK: {} ({}-{}): {files} files match manifest.json",
            archive.display(),
            manifest.target,
            manifest.variant
        ))?;
        return Ok(());
    }
    let (Some(variant), Some(out)) = (&args.variant, &args.out) else {
        anyhow::bail!(
            "export needs a VARIANT and --out PATH\nhint: afterburner export pgo --out pgo.tar.zst"
        );
    };
    let cx = Context::open(
        &args.file,
        &Options {
            quick: false,
            workdir: args.workdir.clone(),
            variant: None,
        },
    )?;
    let manifest = crate::ship::export(&cx, variant, out)?;
    for binary in &manifest.binaries {
        if let Some(note) = &binary.note {
            eprintln!("warning: {}: {note}", binary.name);
        }
    }
    crate::stdout::line(format_args!(
        "exported {}: {} binaries, {} profile files, {}",
        out.display(),
        manifest.binaries.len(),
        manifest.profiles.len(),
        manifest.bench.as_ref().map_or_else(
            || "no bench run".to_owned(),
            |b| format!("verdicts of run {}", b.run_id)
        )
    ))?;
    Ok(())
}

/// `afterburner race`: the pipeline with a race for a bench.
fn race(a: &PhaseArgs) -> Result<()> {
    let mut cx = open(a)?;
    if cx.experiment.cluster.is_some() {
        bail!(
            "{}: a race looks at every candidate's round on one machine, and this experiment has [cluster]\nhint: run the full design with `afterburner run`, or race without the [cluster] table",
            cx.experiment.file.display()
        );
    }
    if cx.experiment.variants.len() < 2 {
        bail!(
            "{}: a race needs two variants or more\nhint: add [[variant]]s or a [[matrix]] of them",
            cx.experiment.file.display()
        );
    }
    cx.experiment = cx.experiment.racing();
    let results = pipeline::race(cx)?;
    a.exports.exports().write(&results)
}

fn open(args: &PhaseArgs) -> Result<Context> {
    Context::open(
        &args.file,
        &Options {
            quick: args.quick,
            workdir: args.workdir.clone(),
            variant: args.variant.clone(),
        },
    )
}

/// The work directory: `workdir`, or `.afterburner/` beside `file`.
fn workdir_root(file: &Path, workdir: Option<&PathBuf>) -> PathBuf {
    workdir.cloned().unwrap_or_else(|| {
        let dir = file
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        dir.join(".afterburner")
    })
}

fn explain(args: &ExplainArgs) -> Result<()> {
    if args.simulate {
        return simulate(args);
    }
    let run_dir = if let Some(dir) = &args.run {
        dir.clone()
    } else {
        let workdir = crate::workdir::Workdir::new(workdir_root(&args.file, args.workdir.as_ref()));
        workdir.latest_run().with_context(|| {
            format!(
                "no bench run in {}\nhint: run `afterburner bench` first, or name a run directory with --run",
                workdir.runs().display()
            )
        })?
    };
    let merged = crate::runs::read(&run_dir)?;
    // A cluster run's profiles are in its first block.
    let recorded = merged.with_files();
    let explanation = crate::explain::explain_or_say_why(recorded)?;
    let selection = crate::explain::render::Selection {
        variant: args.variant.as_deref(),
        workload: args.workload.as_deref(),
        top: args.top,
    };
    crate::explain::check_selection(&recorded.meta, &selection)?;
    crate::stdout::print(format_args!(
        "{}",
        crate::explain::render::text(&explanation, &selection)
    ))?;
    crate::stdout::print(format_args!(
        "{}",
        crate::explain::binary::text(&explanation.binaries)
    ))?;
    Ok(())
}

/// `explain --simulate`: simulate the latest run's (or `--run`'s)
/// workloads with the experiment's current builds, and print the model's
/// findings.
fn simulate(args: &ExplainArgs) -> Result<()> {
    let cx = Context::open(
        &args.file,
        &Options {
            quick: args.quick,
            workdir: args.workdir.clone(),
            variant: None,
        },
    )?;
    let run_dir = run_dir_or_latest(&cx, args.run.clone())?;
    let merged = crate::runs::read(&run_dir)?;
    // A cluster run simulates beside its first block's profiles.
    let recorded = merged.with_files();
    let run_dir = recorded.dir.clone();
    let planned = recorded.meta.variants.iter().map(|v| v.name.as_str());
    if !planned.eq(cx.experiment.variants.iter().map(|v| v.name.as_str())) {
        anyhow::bail!(
            "run {} has other variants than {} has now\nhint: simulate with the experiment file the run was benched with, or bench again",
            recorded.meta.run_id,
            cx.experiment.file.display()
        );
    }
    let selection = crate::explain::render::Selection {
        variant: None,
        workload: args.workload.as_deref(),
        top: args.top,
    };
    crate::explain::check_selection(&recorded.meta, &selection)?;
    let notes = crate::bench::simulate(&cx, &run_dir, args.workload.as_deref())?;
    let mut simulation = crate::explain::simulation::read(recorded)?;
    simulation
        .runs
        .retain(|r| args.workload.as_deref().is_none_or(|w| w == r.workload));
    crate::stdout::print(format_args!(
        "{}",
        crate::explain::render::simulation_text(&simulation)
    ))?;
    for note in notes {
        crate::progress::warn(note);
    }
    Ok(())
}

fn history(args: &HistoryArgs) -> Result<()> {
    let root = &workdir_root(&args.file, args.workdir.as_ref());
    match (args.action.as_deref(), &args.id) {
        (Some("show"), Some(id)) => {
            let entry = crate::store::find(root, id)?.with_context(|| {
                format!(
                    "no run `{id}` in {}\nhint: `afterburner history` lists the stored runs",
                    root.join(crate::store::HISTORY_FILE).display()
                )
            })?;
            pipeline::report(&entry.run_dir).map(|_| ())
        }
        (Some(_), None) => {
            anyhow::bail!("`history show` needs a run id\nhint: `afterburner history` lists them")
        }
        _ => {
            let entries = crate::store::list(root)?;
            if entries.is_empty() {
                crate::stdout::print(format_args!(
                    "no runs stored in {} yet: `afterburner run` (or `bench` and `report`) stores each\n",
                    root.join(crate::store::HISTORY_FILE).display()
                ))?;
                return Ok(());
            }
            crate::stdout::print(format_args!("{}", crate::store::render(&entries)))?;
            Ok(())
        }
    }
}

/// `afterburner calibrate`: the A/A trials, their table and their record.
fn calibrate(args: &CalibrateArgs) -> Result<()> {
    let cx = Context::open(
        &args.file,
        &Options {
            quick: args.quick,
            workdir: args.workdir.clone(),
            variant: None,
        },
    )?;
    let options = pipeline::CalibrateOptions {
        budget: args.budget,
        subsamples: args.subsets,
    };
    pipeline::calibrate(&cx, &options).map(|_| ())
}

fn demo(args: &DemoArgs) -> Result<()> {
    crate::stdout::unless_closed(pipeline::demo::demo(&args.dir, args.quick))
}

#[cfg(test)]
mod tests {
    use clap::Parser as _;

    use super::*;

    fn parse_args(args: &[&str]) -> Result<Cli, clap::Error> {
        Cli::try_parse_from(expand_export_flags(args.iter().map(OsString::from)))
    }

    fn exports_of(cli: &Cli) -> Vec<(&'static str, PathBuf)> {
        let Command::Report(a) = &cli.command else {
            panic!("not report: {cli:?}")
        };
        a.phase
            .exports
            .exports()
            .0
            .into_iter()
            .map(|(e, path)| (e.name(), path))
            .collect()
    }

    #[test]
    fn every_format_is_written_by_export_and_by_its_own_flag() {
        let cli = parse_args(&[
            "afterburner",
            "report",
            "--export-csv",
            "a.csv",
            "--export-json=b.json",
            "--export",
            "markdown=c.md",
        ])
        .unwrap();
        assert_eq!(
            exports_of(&cli),
            [
                ("csv", PathBuf::from("a.csv")),
                ("json", PathBuf::from("b.json")),
                ("markdown", PathBuf::from("c.md")),
            ]
        );
        for e in crate::report::EXPORTERS {
            let flag = format!("--export-{}", e.name());
            let cli = parse_args(&["afterburner", "report", &flag, "out"]).unwrap();
            assert_eq!(exports_of(&cli), [(e.name(), PathBuf::from("out"))]);
        }
    }

    #[test]
    fn an_unknown_format_or_a_missing_file_is_refused_naming_the_formats() {
        let err = parse_args(&["afterburner", "report", "--export", "pdf=x.pdf"]).unwrap_err();
        assert!(err.to_string().contains("csv, json, markdown"), "{err}");
        let err = parse_args(&["afterburner", "report", "--export-pdf", "x"]).unwrap_err();
        assert!(err.to_string().contains("--export-pdf"), "{err}");
        assert!(parse_args(&["afterburner", "report", "--export-csv"]).is_err());
        assert!(parse_args(&["afterburner", "report", "--export", "csv"]).is_err());
    }
}
