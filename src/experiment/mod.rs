//! The experiment file: load `afterburner.toml`, validate it once, and hand
//! later phases a resolved [`Experiment`] they never need to re-check.

mod raw;
mod resolve;
pub mod template;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

pub use resolve::{load, load_str, report_settings};
pub use template::{Bindings, Template};

use crate::toolchain::{BoltProfile, Compiler, Optimization};

/// A bad experiment file: where, what, and what to do.
#[derive(Debug, thiserror::Error)]
pub enum ExperimentError {
    #[error("cannot read experiment file {path}: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: {message}")]
    Parse { path: PathBuf, message: String },
    #[error("{path}:{line}: {message}\nhint: {hint}")]
    Invalid {
        path: PathBuf,
        /// 1-based line of the offending value.
        line: usize,
        message: String,
        hint: String,
    },
}

/// A validated experiment.
#[derive(Debug, Clone, Serialize)]
pub struct Experiment {
    /// The experiment file.
    pub file: PathBuf,
    /// The directory that holds it; relative paths resolve against it.
    pub dir: PathBuf,
    pub target: Target,
    /// Variants in file order; the first is the baseline.
    pub variants: Vec<Variant>,
    pub workloads: Vec<Workload>,
    /// Query sets (`each`): the set's name → its workloads, in file order.
    pub workload_sets: BTreeMap<String, Vec<String>>,
    pub bench: Bench,
    /// Values for `{params.KEY}` (after `--quick` overrides).
    pub params: BTreeMap<String, String>,
    /// `[cluster]`: builds and bench blocks run as cluster jobs.
    pub cluster: Option<Cluster>,
    /// `[report]`: how reports present a run.
    pub report: ReportSettings,
    /// `[race]`: how `afterburner race` races the variants (its defaults
    /// when the file has none).
    pub race: Race,
}

/// `[race]`: rounds run only the candidates still in the race; after each
/// scheduled look, one decided slower than the leader is dropped
/// ([`crate::stats::race`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Race {
    /// The time the rounds may take, warmup included.
    pub budget: Duration,
    /// Rounds before the first look (at least 2).
    pub min: u32,
    /// The most rounds (by default the file's `repetitions`).
    pub max: u32,
    /// Same as the leader within this margin, a fraction.
    pub equivalence: f64,
    /// `screen = "instructions"`: before the first look, a candidate with
    /// more than (1 + margin) × the fewest instructions is screened out
    /// (`None`: no screen).
    pub screen: Option<crate::stats::race::Screen>,
    /// Combinations of its axes that cannot be built, with the reason (a
    /// race adds the candidates whose build or training fails).
    pub left_out: Vec<LeftOut>,
    /// The baseline runs every round, after it is dropped too: each
    /// survivor's comparison against it then pairs every round (by
    /// default it stops when dropped, as every candidate does).
    pub keep_baseline: bool,
}

/// A combination of `[race]`'s axes left out of the race, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LeftOut {
    pub candidate: String,
    /// What the experiment's validation said of it.
    pub reason: String,
    /// What to do about it.
    pub hint: String,
    /// The line of the experiment file the reason points at; none for a
    /// candidate left out when it was built or trained.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
}

impl Race {
    /// `[race]`'s defaults in a file of `repetitions` counted rounds: at
    /// most those rounds (at least `min`), so a race never costs more
    /// rounds than the full design it stands in for unless the file asks.
    #[must_use]
    pub fn defaults(repetitions: u32) -> Self {
        Race {
            budget: Duration::from_mins(30),
            min: 2,
            max: repetitions.max(2),
            equivalence: 0.02,
            left_out: Vec::new(),
            screen: None,
            keep_baseline: false,
        }
    }
}

/// `[report]`: how reports present a run. `afterburner report` reads it
/// again from the run's experiment file ([`report_settings`]), so a run
/// benched before the table was written gets what it asks for.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ReportSettings {
    /// `gain_reference`: the variant (never the baseline) whose gain over
    /// the baseline every other variant's gain is measured against, in the
    /// report's "Share of R's gain".
    pub gain_reference: Option<String>,
}

/// `[cluster]`: where and how the jobs of a cluster run are submitted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cluster {
    /// The scheduler; Slurm is the one there is.
    pub engine: ClusterEngine,
    pub partition: Option<String>,
    /// Bench blocks: the tasks of the job array, a node each.
    pub nodes: u32,
    /// Slurm's time limit per job, as Slurm writes it.
    pub time: Option<String>,
    pub account: Option<String>,
    /// Extra sbatch options, passed as they are.
    pub sbatch: Vec<String>,
    /// The afterburner binary the jobs run (default: this one).
    pub afterburner: Option<PathBuf>,
    /// Whether each job takes its nodes whole.
    pub exclusive: bool,
    /// Skip the check that the work directory is on shared storage.
    pub shared: bool,
    /// Where each block's load runs: beside its services, or on a node of
    /// its own (`load = "separate"`).
    pub load: LoadPlacement,
}

/// Where a cluster block's load generator runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LoadPlacement {
    /// On the block's node, beside the services (the default).
    #[default]
    Same,
    /// On a second node of the block's allocation: the services bind the
    /// service node's address (`{host}`), and each run's load is a job step
    /// (`srun`) on the other node, sending over the cluster's network.
    Separate,
}

impl Cluster {
    /// `--slurm` without a `[cluster]` section: two blocks on the default
    /// partition, each job on whole nodes.
    pub fn slurm_defaults() -> Self {
        Self {
            engine: ClusterEngine::Slurm,
            partition: None,
            nodes: 2,
            time: None,
            account: None,
            sbatch: Vec::new(),
            afterburner: None,
            exclusive: true,
            shared: false,
            load: LoadPlacement::Same,
        }
    }
}

/// A cluster scheduler.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ClusterEngine {
    Slurm,
}

/// What is built, from where, how.
#[derive(Debug, Clone, Serialize)]
pub struct Target {
    pub name: String,
    pub source: Source,
    /// Gitignore-style patterns (`source = { path = ".", exclude = [...] }`)
    /// whose files a `path` source's fingerprint leaves out.
    pub exclude: Vec<String>,
    /// Shell command run in the variant's build directory.
    pub build: String,
    /// Binary name → path relative to the build directory.
    pub binaries: BTreeMap<String, PathBuf>,
    pub compiler: Compiler,
    /// The project's own compile flags (default `-O2`), before any variant's.
    pub cflags: String,
    /// The project's own link flags (default empty).
    pub ldflags: String,
    /// Upper bound for one build command.
    pub build_timeout: Duration,
    /// Debian packages the build needs; installed as root when missing.
    pub packages: Vec<String>,
    /// Servers started (in order) around every training and bench run.
    pub services: Vec<Service>,
}

/// A server the workloads talk to, started for each run with the variant's
/// binaries and a free port, and stopped after it.
#[derive(Debug, Clone, Serialize)]
pub struct Service {
    pub name: String,
    /// Command line; `{port}` is this service's port.
    #[serde(serialize_with = "serialize_template")]
    pub start: Template,
    /// Run once per variant before its first start, in its fresh state
    /// directory (`{state}`); untimed.
    #[serde(serialize_with = "serialize_option_template")]
    pub setup: Option<Template>,
    /// The user its setup and start run as; its state directory is theirs.
    pub user: Option<RunAs>,
    pub ready: Ready,
    pub ready_timeout: Duration,
    /// Signal number sent to stop it, and its name.
    pub stop_signal: (i32, String),
    /// After the stop signal, how long before SIGKILL.
    pub stop_timeout: Duration,
    /// Where it runs, when the experiment says (`cwd`); otherwise a
    /// directory of its own per run, beside the run's logs, so the files
    /// it writes (a database dump) stay out of the experiment's directory.
    pub cwd: Option<PathBuf>,
    /// CPUs the service runs on; `None`: the bench's default split.
    pub cpus: Option<crate::pinning::CpuSet>,
    pub env: BTreeMap<String, String>,
    /// What sampled training (`autofdo`, BOLT from perf) records of it.
    pub record: Recorded,
}

/// What sampled training records of a service.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Recorded {
    /// Each workload's window: `perf record -p` attached to its processes
    /// once it is ready and the load's warmup is done, stopped when the
    /// workload ends, so start-up and warmup stay out of the profile.
    #[default]
    Window,
    /// Its whole life: started under `perf record`, start-up included.
    Life,
}

/// A user a service runs as. It is looked up when the service is set up
/// or started, not when the experiment loads: validating a recipe needs no
/// such user here (installing mariadb-server creates `mysql`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RunAs {
    pub name: String,
    /// The experiment file and 1-based line that name the user, for the
    /// error when it is missing.
    pub file: PathBuf,
    pub line: usize,
}

impl RunAs {
    /// The user's uid and gid, looked up now; an error naming the
    /// experiment's file and line when there is no such user, or when
    /// afterburner (not root) cannot start a process as them.
    pub fn ids(&self) -> Result<(u32, u32), ExperimentError> {
        let name = &self.name;
        let invalid = |message: String, hint: &str| ExperimentError::Invalid {
            path: self.file.clone(),
            line: self.line,
            message,
            hint: hint.to_owned(),
        };
        let Some((uid, gid)) = crate::process::lookup_user(name) else {
            return Err(invalid(
                format!("no user `{name}` on this machine"),
                &format!("create it (`useradd --system {name}`), install the package that does (postgresql creates `postgres`, mariadb-server `mysql`), or remove user"),
            ));
        };
        // SAFETY: geteuid has no preconditions and cannot fail.
        let me = unsafe { libc::geteuid() };
        if me != 0 && me != uid {
            return Err(invalid(
                format!("user = \"{name}\" needs afterburner to run as root (it runs as uid {me})"),
                "run afterburner as root (sudo), or remove user and run it as that user",
            ));
        }
        Ok((uid, gid))
    }
}

/// How to tell a service is ready.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Ready {
    /// Its port accepts a TCP connection.
    Tcp,
    /// Its output (stdout or stderr) has a line matching the regex.
    Log(#[serde(with = "serde_regex_text")] regex::Regex),
    /// The command (templated) exits 0.
    Command(#[serde(serialize_with = "serialize_template")] Template),
    /// One request of this driver (redis PING, memcached `version`, HTTP GET path) is answered.
    Ping {
        driver: crate::load::Driver,
        request: String,
    },
}

/// A workload whose requests afterburner sends itself.
#[derive(Debug, Clone, Serialize)]
pub struct Load {
    pub driver: crate::load::Driver,
    /// `host:port`, templated (`{port}`, `{port.NAME}`).
    #[serde(serialize_with = "serialize_template")]
    pub address: Template,
    /// The request, or a mix of them (`request = [A, B]`, `mix = [9, 1]`).
    pub request: crate::load::RequestMix,
    /// How its requests are paced (`model = "…"`, one of the load's `models!`).
    pub model: crate::load::Model,
    pub warmup: Duration,
    pub timeout: Duration,
    pub pipeline: usize,
    pub threads: usize,
    pub interval: Duration,
    /// Copies of the services and of this load run side by side; their
    /// rates add up, their latency percentiles are averaged.
    pub instances: usize,
}

impl Load {
    /// The run's plan against `address`.
    pub fn spec(&self, address: String, seed: u64, cwd: &Path) -> crate::load::LoadSpec {
        crate::load::LoadSpec {
            driver: self.driver,
            address: Some(address),
            requests: self.request.clone(),
            model: self.model.clone(),
            warmup: self.warmup,
            timeout: self.timeout,
            depth: self.pipeline,
            threads: self.threads,
            interval: self.interval,
            seed,
            cwd: Some(cwd.to_path_buf()),
        }
    }
}

/// Where the source comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    /// A directory on disk (absolute).
    Path(PathBuf),
    /// A Debian source package, fetched with `apt-get source`.
    Apt(String),
    /// A git repository at a revision.
    Git { url: String, rev: Option<String> },
    /// A tarball checked against its SHA-256.
    Url { url: String, sha256: String },
}

/// One way to build or run the target.
#[derive(Debug, Clone, Serialize)]
pub struct Variant {
    /// Unique; also the directory name under `variants/`.
    pub name: String,
    /// The compiler this variant builds with (the target's unless it says).
    pub compiler: Compiler,
    /// Optimizations applied in order.
    pub optimize: Vec<Optimization>,
    /// Extra compile flags, appended after the optimizations'.
    pub cflags: String,
    /// Extra link flags.
    pub ldflags: String,
    /// Environment for the variant's runs (e.g. `LD_PRELOAD`).
    pub env: BTreeMap<String, String>,
    /// Binaries used as they are, not built (absolute paths).
    pub prebuilt: Option<BTreeMap<String, PathBuf>>,
    /// Overrides of `{params.KEY}` for this variant's runs.
    pub params: BTreeMap<String, String>,
    /// gcc PGO with `-fprofile-partial-training` in the final build.
    pub partial_training: bool,
    /// The perf event AutoFDO or sampled BOLT samples, when the variant
    /// names one.
    pub sample_event: Option<String>,
    /// Where BOLT's profile comes from.
    pub bolt_profile: BoltProfile,
    /// Where a Go variant's PGO profile comes from (`pgo_source`; by
    /// default `perf` when no training workload passes `{profile}`).
    pub go_pgo: crate::toolchain::GoPgoSource,
    /// The `-march` level when `optimize` has `march`: `native`, or the
    /// level the variant names (`x86-64-v3`); `None` without `march`.
    pub march: Option<String>,
    /// How training takes its services' counters (`train_stop`).
    #[serde(skip_serializing_if = "TrainStop::is_stop")]
    pub train_stop: TrainStop,
    /// System settings written before each of its runs and put back after.
    pub system: Vec<crate::system::Setting>,
    /// A profile brought from elsewhere (`profile =`): its files, which
    /// stand in for training; empty when the variant trains.
    pub brought: Vec<crate::toolchain::formats::brought::BroughtFile>,
    /// The axis values of a variant a `[[matrix]]` made (`compiler`,
    /// `optimize`, `params.KEY`, `env.KEY` → value); empty otherwise.
    pub axes: BTreeMap<String, String>,
    /// Where its profile is trained when not on the target's source: a
    /// stale profile, from another revision (`profile_from`).
    pub profile_from: Option<ProfileFrom>,
    /// The whole variant built from another source or revision (`source`
    /// on a variant; `check --rev` adds such variants): its every stage,
    /// where a stale variant's `profile_from` is its training's only.
    pub source: Option<ProfileFrom>,
    /// Where its training rounds' profiles come from, chosen once here
    /// (a source of `profiles/` makes them).
    #[serde(skip)]
    pub profile_origin: ProfileOrigin,
    /// The earlier variant whose first training round's profile this one
    /// shares: the same instrumented build, trained by the same runs
    /// (`pgo+lto` shares `pgo`'s); chosen once here, checked when training.
    pub profile_donor: Option<String>,
}

/// Where a variant's profiles come from, chosen when the experiment is
/// resolved: each is one source in `profiles/`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProfileOrigin {
    /// Trained here: the training workloads run each round's build.
    Trained,
    /// Trained here, and the target's services are recorded by attaching
    /// to them over each training workload's window where a round samples.
    Attached,
    /// Files brought from elsewhere (`profile =`) stand in for training.
    Brought,
    /// Trained on another revision (`profile_from`) and applied to this
    /// one; `attach` as for [`ProfileOrigin::Attached`].
    Stale { attach: bool },
}

/// `profile_from`: the other revision a stale profile is trained on, with
/// the same training workloads and toolchain options as this revision's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProfileFrom {
    pub source: Source,
    /// Gitignore-style patterns a `path` source's fingerprint leaves out.
    pub exclude: Vec<String>,
}

impl Variant {
    /// Whether building this variant needs a training profile.
    pub fn needs_profile(&self) -> bool {
        self.optimize.iter().any(|o| o.needs_profile())
    }

    /// The variant's training rounds, in order.
    pub fn rounds(&self) -> Vec<&'static dyn crate::toolchain::Round> {
        crate::toolchain::rounds(&self.optimize, self.compiler, self.profile_sources())
    }

    /// Where its profiles come from, where an optimization offers a choice.
    pub fn profile_sources(&self) -> crate::toolchain::ProfileSources {
        crate::toolchain::ProfileSources {
            bolt: self.bolt_profile,
            go: self.go_pgo,
        }
    }

    /// The source `stage` is built from, and the patterns its fingerprint
    /// leaves out: a stale variant's instrumented builds are of its
    /// `profile_from` source, a variant with a `source` of its own is built
    /// from it, everything else from the target's.
    pub fn stage_source<'a>(
        &'a self,
        target: &'a Target,
        stage: crate::toolchain::Stage,
    ) -> (&'a Source, &'a [String]) {
        match (&self.profile_from, stage) {
            (Some(from), crate::toolchain::Stage::Instrumented(_)) => (&from.source, &from.exclude),
            _ => match &self.source {
                Some(own) => (&own.source, &own.exclude),
                None => (&target.source, &target.exclude),
            },
        }
    }

    /// Whether the variant uses binaries that exist already.
    pub fn is_prebuilt(&self) -> bool {
        self.prebuilt.is_some()
    }
}

/// Which phases a workload serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Train,
    Bench,
    Both,
}

impl Role {
    pub fn trains(self) -> bool {
        matches!(self, Role::Train | Role::Both)
    }
    pub fn benches(self) -> bool {
        matches!(self, Role::Bench | Role::Both)
    }
}

/// A command whose runs are measured (a batch workload).
#[derive(Debug, Clone, Serialize)]
pub struct Workload {
    pub name: String,
    pub role: Role,
    /// The command; `None` when the workload is a `load`.
    #[serde(serialize_with = "serialize_option_template")]
    pub run: Option<Template>,
    /// Requests sent by afterburner itself, instead of a command.
    pub load: Option<Load>,
    /// Command for training runs; `run` when absent.
    #[serde(serialize_with = "serialize_option_template")]
    pub train_run: Option<Template>,
    /// Run before each run (after its services start), outside the measurement.
    #[serde(serialize_with = "serialize_option_template")]
    pub before: Option<Template>,
    /// Run after each run (before its services stop), outside the measurement.
    #[serde(serialize_with = "serialize_option_template")]
    pub after: Option<Template>,
    /// Upper bound for one run.
    pub timeout: Duration,
    /// Figures read from the workload's own output.
    pub figures: Vec<Figure>,
    /// CPUs this workload (or its load client) runs on; `None`: the bench's
    /// default split.
    pub cpus: Option<crate::pinning::CpuSet>,
    /// How much the profile of its training counts in the merged profile
    /// (1 to [`crate::toolchain::weights::MAX`]; 1 by default).
    pub weight: u32,
}

fn serialize_template<S: serde::Serializer>(t: &Template, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&t.text)
}

#[allow(clippy::ref_option)] // serde's `serialize_with` passes `&Option<T>`
fn serialize_option_template<S: serde::Serializer>(
    t: &Option<Template>,
    s: S,
) -> Result<S::Ok, S::Error> {
    match t {
        Some(t) => s.serialize_some(&t.text),
        None => s.serialize_none(),
    }
}

/// A number a workload prints, captured by the regex's first group.
#[derive(Debug, Clone, Serialize)]
pub struct Figure {
    pub name: String,
    #[serde(with = "serde_regex_text")]
    pub regex: regex::Regex,
    /// Unit shown in reports.
    pub unit: String,
    pub higher_is_better: bool,
    /// The workload's headline metric (`primary = true`): a sysbench run's
    /// TPS rather than its fixed wall time.
    pub primary: bool,
}

mod serde_regex_text {
    pub fn serialize<S: serde::Serializer>(re: &regex::Regex, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(re.as_str())
    }
}

/// How the bench phase repeats and judges.
#[derive(Debug, Clone, Serialize)]
pub struct Bench {
    /// Counted repetitions per variant and workload; with a sequential
    /// plan, the most rounds.
    pub repetitions: u32,
    /// `repetitions = "auto"`: rounds go on until every primary comparison
    /// is decided or the budget ends.
    pub sequential: Option<Sequential>,
    /// Uncounted (but recorded) runs per variant and workload, before the counted ones.
    pub warmup: u32,
    /// The built-in metrics asked for.
    pub metrics: Vec<crate::metric::Builtin>,
    /// Confidence level of intervals and tests, e.g. 0.95.
    pub confidence: f64,
    /// Equivalence margin, a fraction (0.01 = ±1%): an interval of the
    /// ratio wholly inside 1 ± margin is "same".
    pub equivalence: f64,
    /// Pin services and workloads to disjoint CPUs.
    pub pin: bool,
    /// Address-space randomization for runs; false runs them with
    /// `ADDR_NO_RANDOMIZE`.
    pub aslr: bool,
    /// Seed of the round order shuffle and the bootstrap; recorded in results.
    pub seed: Option<u64>,
    /// How many of the repetitions also count instructions under callgrind
    /// (slow but exact, so few suffice).
    pub instruction_repetitions: u32,
    /// `primary = "instructions"`: the instruction count heads the report
    /// (its verdict tested at the stated level, time then secondary).
    pub primary_instructions: bool,
    /// `afterburner race`: rounds race the variants by `[race]` instead of
    /// running every one for `repetitions` (then the race's most rounds);
    /// the fixed design's repetitions it stands in for.
    pub race: Option<u32>,
}

/// A sequential plan's limits (`repetitions = "auto"`).
#[derive(Debug, Clone, Serialize)]
pub struct Sequential {
    /// The time the rounds may take, warmup included.
    pub budget: Duration,
    /// Rounds before the first look.
    pub min: u32,
    /// The most rounds.
    pub max: u32,
    /// `check --rev --budget`: stop when every pair's gate is decided
    /// rather than every verdict.
    pub gate: Option<GateStop>,
}

/// The paired gate a sequential plan waits for.
#[derive(Debug, Clone, Serialize)]
pub struct GateStop {
    /// (variant, the same variant built from the baseline revision).
    pub pairs: Vec<(String, String)>,
    /// The regression that fails, in percent; `None`: the default for
    /// the metric's precision.
    pub threshold_pct: Option<f64>,
}

impl Experiment {
    /// This experiment raced (`afterburner race`): its rounds run the
    /// candidates still in the race, up to `[race] max`, with no
    /// sequential plan of `[bench]`.
    #[must_use]
    pub fn racing(mut self) -> Self {
        let full = self.bench.repetitions;
        self.bench.race = Some(full);
        self.bench.repetitions = self.race.max;
        self.bench.sequential = None;
        self.bench.instruction_repetitions = self.bench.instruction_repetitions.min(self.race.max);
        self
    }

    /// The baseline variant: the first one.
    pub fn baseline(&self) -> &Variant {
        self.variants
            .first()
            .expect("invariant: validation guarantees at least one variant")
    }

    pub fn variant(&self, name: &str) -> Option<&Variant> {
        self.variants.iter().find(|v| v.name == name)
    }

    /// The default work directory: `.afterburner/` beside the file.
    pub fn default_workdir(&self) -> PathBuf {
        self.dir.join(".afterburner")
    }
}

/// Resolve `path` against `dir` unless absolute.
pub(crate) fn resolve_path(dir: &Path, path: &str) -> PathBuf {
    let p = Path::new(path);
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        dir.join(p)
    }
}

/// How an instrumented variant's training takes the counters of the
/// services it started (`train_stop` on the variant).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TrainStop {
    /// Each service writes its counters as it exits, when it is stopped.
    #[default]
    Stop,
    /// Each service is preloaded with the dump shim, and dumps its counters
    /// while it runs at the end of each training workload; it is then
    /// stopped (what it counts after the dump adds to them).
    Dump,
}

impl TrainStop {
    pub fn is_stop(&self) -> bool {
        *self == TrainStop::Stop
    }
}
