//! The experiment file as written: serde types that keep spans, so later
//! validation can name the line of a bad value.

use std::collections::BTreeMap;

use serde::Deserialize;
use toml::Spanned;

/// `afterburner.toml`, as parsed, before validation.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawExperiment {
    pub target: RawTarget,
    #[serde(default, rename = "variant")]
    pub variants: Vec<RawVariant>,
    /// `[[matrix]]`: variants as the product of axes.
    #[serde(default, rename = "matrix")]
    pub matrices: Vec<RawMatrix>,
    #[serde(default, rename = "workload")]
    pub workloads: Vec<RawWorkload>,
    #[serde(default)]
    pub bench: RawBench,
    /// Values for `{params.KEY}` placeholders.
    #[serde(default)]
    pub params: BTreeMap<String, Spanned<toml::Value>>,
    /// Overrides applied with `--quick`.
    #[serde(default)]
    pub quick: RawQuick,
    /// `[cluster]`: run builds and bench blocks as cluster jobs.
    pub cluster: Option<RawCluster>,
    /// `[report]`: how reports present a run.
    #[serde(default)]
    pub report: RawReport,
    /// `[race]`: how `afterburner race` races the variants.
    pub race: Option<RawRace>,
}

/// `[race]`, as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawRace {
    /// The time the race's rounds may take ("30m").
    pub budget: Option<Spanned<String>>,
    /// Rounds before the first look.
    pub min: Option<Spanned<u32>>,
    /// The most rounds.
    pub max: Option<Spanned<u32>>,
    /// The margin within which a candidate is the same as the leader, a
    /// fraction (0.02 = ±2%).
    pub equivalence: Option<Spanned<f64>>,
    /// `"instructions"`: a work screen before the first look.
    pub screen: Option<Spanned<String>>,
    /// The screen's margin: more than (1 + margin) × the fewest
    /// instructions is screened out.
    pub screen_margin: Option<Spanned<f64>>,
    /// The baseline runs every round, after it is dropped too.
    pub keep_baseline: Option<bool>,
    /// The candidates' names, as a matrix's (`{compiler}-{optimize}`).
    pub name: Option<Spanned<String>>,
    /// Axes, as a matrix's: each combination a candidate, those that
    /// cannot be built (a technique the compiler lacks) left out with the
    /// reason rather than refused.
    #[serde(default)]
    pub compiler: Vec<Spanned<String>>,
    #[serde(default)]
    pub optimize: Vec<Spanned<RawStack>>,
    #[serde(default)]
    pub params: BTreeMap<String, Spanned<Vec<Spanned<toml::Value>>>>,
    #[serde(default)]
    pub env: BTreeMap<String, Spanned<Vec<Spanned<String>>>>,
    pub cflags: Option<Spanned<String>>,
    pub ldflags: Option<Spanned<String>>,
    #[serde(default)]
    pub exclude: Vec<Spanned<toml::Table>>,
}

impl RawRace {
    /// Its axes as a matrix, when it has any.
    pub fn axes(&self) -> Option<RawMatrix> {
        let none = self.compiler.is_empty()
            && self.optimize.is_empty()
            && self.params.is_empty()
            && self.env.is_empty();
        (!none).then(|| RawMatrix {
            name: self.name.clone(),
            compiler: self.compiler.clone(),
            optimize: self.optimize.clone(),
            params: self.params.clone(),
            env: self.env.clone(),
            cflags: self.cflags.as_ref().map(|c| c.get_ref().clone()),
            ldflags: self.ldflags.as_ref().map(|l| l.get_ref().clone()),
            exclude: self.exclude.clone(),
        })
    }
}

/// One value of an `optimize` axis: a list of words (`["pgo", "lto"]`,
/// `[]` for none) or the words joined by `+` (`"pgo+lto"`, `"none"`).
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum RawStack {
    Joined(String),
    Words(Vec<String>),
}

impl RawStack {
    /// Its words, in the order written.
    pub fn words(&self) -> Vec<String> {
        match self {
            RawStack::Joined(s) if s.trim() == "none" || s.trim().is_empty() => Vec::new(),
            RawStack::Joined(s) => s.split('+').map(|w| w.trim().to_owned()).collect(),
            RawStack::Words(w) => w.clone(),
        }
    }

    /// How a name shows it: as written when joined, else the words joined
    /// by `+` (`base` for none).
    pub fn label(&self) -> String {
        match self {
            RawStack::Joined(s) => s.trim().to_owned(),
            RawStack::Words(w) if w.is_empty() => "base".to_owned(),
            RawStack::Words(w) => w.join("+"),
        }
    }
}

/// `[report]`, as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawReport {
    /// The variant whose gain over the baseline the others' gains are
    /// measured against.
    pub gain_reference: Option<Spanned<String>>,
    /// `[[report.gain]]`: shares measured against a base and reference of
    /// their own (each compiler's `-O2` and PGO).
    #[serde(default)]
    pub gain: Vec<Spanned<RawGain>>,
}

/// `[[report.gain]]`, as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawGain {
    /// The variant the gains are measured from.
    pub base: Spanned<String>,
    /// The variant whose gain over `base` the others' are shares of.
    pub reference: Spanned<String>,
    /// The variants measured (a variant with `recordings` by its own name).
    pub variants: Vec<Spanned<String>>,
}

/// The `[report]` table of an experiment file alone, the rest unread:
/// what `afterburner report` reads again from a run's experiment file.
#[derive(Debug, Deserialize)]
pub struct RawReportOnly {
    #[serde(default)]
    pub report: RawReport,
}

/// `[cluster]`, as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawCluster {
    pub engine: Spanned<String>,
    pub partition: Option<String>,
    /// Bench blocks: the tasks of the job array, a node each.
    pub nodes: Option<Spanned<u32>>,
    /// Slurm's time limit per job ("30", "1:00:00", "1-00:00:00").
    pub time: Option<Spanned<String>>,
    pub account: Option<String>,
    /// Extra sbatch options, passed as they are.
    #[serde(default)]
    pub sbatch: Vec<String>,
    /// The afterburner binary the jobs run (default: this one).
    pub afterburner: Option<String>,
    /// Whether each job takes its nodes whole (default true).
    pub exclusive: Option<bool>,
    /// Skip the check that the work directory is on shared storage.
    pub shared: Option<bool>,
    /// Where each block's load runs: "same" (default) or "separate".
    pub load: Option<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawTarget {
    pub name: Spanned<String>,
    pub source: Spanned<RawSource>,
    /// The build command; a cargo target has none (afterburner runs cargo).
    pub build: Option<Spanned<String>>,
    pub binaries: Option<Spanned<BTreeMap<String, Spanned<String>>>>,
    /// A cargo package, built by afterburner with cargo.
    pub cargo: Option<Spanned<RawCargo>>,
    pub compiler: Option<Spanned<String>>,
    pub cflags: Option<String>,
    pub ldflags: Option<String>,
    pub build_timeout: Option<Spanned<String>>,
    /// Debian packages the build needs.
    #[serde(default)]
    pub packages: Vec<String>,
    /// Servers started around every run, in order, stopped in reverse.
    #[serde(default, rename = "service")]
    pub services: Vec<RawService>,
}

/// `[target] cargo = { … }`: which package of a cargo project, which of
/// its binaries, with which features.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawCargo {
    /// A workspace member, by name (`cargo build -p`).
    pub package: Option<String>,
    /// Its binaries afterburner runs (`cargo build --bin`).
    #[serde(default)]
    pub bins: Vec<String>,
    #[serde(default)]
    pub features: Vec<String>,
}

/// `[[target.service]]`: a server the workloads talk to.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawService {
    pub name: Spanned<String>,
    /// Command line; `{port}` is this service's free port, `{state}` its
    /// state directory.
    pub start: Spanned<String>,
    /// Run once per variant before the service first starts, in its fresh
    /// state directory (`initdb -D {state}`, a data load); untimed.
    pub setup: Option<Spanned<String>>,
    /// The user its setup and start run as (databases refuse root).
    pub user: Option<Spanned<String>>,
    /// `tcp` (default), `log:REGEX`, `command:CMD`, or a driver's own check
    /// (`load::drivers::ready_forms`: `redis`, `http:/PATH`, …).
    pub ready: Option<Spanned<String>>,
    pub ready_timeout: Option<Spanned<String>>,
    /// `TERM` (default), `INT`, `QUIT`, `HUP`, `KILL`.
    pub stop_signal: Option<Spanned<String>>,
    /// Grace period after the stop signal, then SIGKILL.
    pub stop_timeout: Option<Spanned<String>>,
    pub cwd: Option<String>,
    /// CPUs the service runs on (`"1"`, `"2-3"`).
    pub cpus: Option<Spanned<String>>,
    /// What sampled training records of it: `window` (default: each
    /// workload's window, attached once the service is ready and warmed
    /// up) or `life` (start to stop, start-up included).
    pub record: Option<Spanned<String>>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
}

/// `[workload.load]`: requests sent by afterburner's own load generator.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawLoad {
    pub driver: Spanned<String>,
    /// `host:port`; default `{host}:{port}` (the first service; `{host}` is 127.0.0.1 unless the load runs on a node of its own).
    pub address: Option<Spanned<String>>,
    /// One request, or a list of them drawn by `mix`.
    pub request: Option<Spanned<RawRequest>>,
    /// The weights of a list of requests, in its order (default: equal).
    pub mix: Option<Spanned<Vec<i64>>>,
    #[serde(default)]
    pub vars: BTreeMap<String, Spanned<String>>,
    /// `iterations`, `closed` (default), `rate`, `sla`.
    pub model: Option<Spanned<String>>,
    pub clients: Option<Spanned<usize>>,
    pub requests: Option<Spanned<u64>>,
    pub duration: Option<Spanned<String>>,
    pub rate: Option<Spanned<f64>>,
    /// `pXX<BOUND`, e.g. `p99<5ms`, for the sla model.
    pub sla: Option<Spanned<String>>,
    pub probe: Option<Spanned<String>>,
    pub start_rate: Option<Spanned<f64>>,
    pub warmup: Option<Spanned<String>>,
    pub timeout: Option<Spanned<String>>,
    pub pipeline: Option<Spanned<usize>>,
    pub threads: Option<Spanned<usize>>,
    pub interval: Option<Spanned<String>>,
    /// Copies of the services and the load, run in parallel.
    pub instances: Option<Spanned<usize>>,
}

/// `request = "GET k"` or `request = ["get k{k}", "set k{k} v"]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum RawRequest {
    One(String),
    Many(Vec<String>),
}

impl RawRequest {
    /// The requests, in order.
    pub fn texts(&self) -> Vec<String> {
        match self {
            RawRequest::One(text) => vec![text.clone()],
            RawRequest::Many(list) => list.clone(),
        }
    }

    /// The same requests, each rewritten by `f`.
    #[must_use]
    pub fn map(&self, f: impl Fn(&str) -> String) -> Self {
        match self {
            RawRequest::One(text) => RawRequest::One(f(text)),
            RawRequest::Many(list) => RawRequest::Many(list.iter().map(|t| f(t)).collect()),
        }
    }
}

/// Exactly one of `path`, `apt`, `git` (+ `rev`), `url` (+ `sha256`),
/// `crate` (+ `version`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawSource {
    pub path: Option<String>,
    pub apt: Option<String>,
    pub git: Option<String>,
    pub rev: Option<String>,
    pub url: Option<String>,
    pub sha256: Option<String>,
    /// A crates.io package (`crate` is a Rust keyword).
    #[serde(rename = "crate")]
    pub krate: Option<String>,
    pub version: Option<String>,
    /// Gitignore-style patterns a `path` source's fingerprint leaves out.
    #[serde(default)]
    pub exclude: Vec<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawVariant {
    pub name: Spanned<String>,
    /// Overrides the target's compiler for this variant.
    pub compiler: Option<Spanned<String>>,
    #[serde(default)]
    pub optimize: Vec<Spanned<String>>,
    pub cflags: Option<String>,
    pub ldflags: Option<String>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Binaries that exist already (e.g. the distro's `/usr/bin/redis-server`):
    /// the variant is not built.
    pub prebuilt: Option<Spanned<BTreeMap<String, String>>>,
    /// This variant's values of `{params.KEY}` (server arguments, a config file).
    #[serde(default)]
    pub params: BTreeMap<String, Spanned<toml::Value>>,
    /// gcc PGO: optimize what training never ran as if there were no
    /// profile, instead of for size (`-fprofile-partial-training`).
    pub partial_training: Option<Spanned<bool>>,
    pub sample_event: Option<Spanned<String>>,
    /// AutoFDO without branch stacks: record call chains too, "fp" (`-g`)
    /// or "dwarf" (`--call-graph dwarf`), so calls through pointers get
    /// their targets; "none", the default, records none.
    pub call_chains: Option<Spanned<String>>,
    /// How an instrumented variant's training takes its services' counters:
    /// "stop" (written as each service exits) or "dump" (dumped by the
    /// preloaded shim before the service is stopped).
    pub train_stop: Option<Spanned<String>>,
    /// BOLT's profile: "instrumented", "sampled" (perf) or "auto".
    pub bolt_profile: Option<Spanned<String>>,
    /// Go PGO's profile: "perf" (sampled) or "cpuprofile" (written by the
    /// program where `{profile}` points); by default "cpuprofile" where a
    /// training workload passes `{profile}`, else "perf".
    pub pgo_source: Option<Spanned<String>>,
    /// The `-march` of `optimize = ["march"]`: "native" (default) or a
    /// level such as "x86-64-v3".
    pub march: Option<Spanned<String>>,
    /// System settings its runs happen under (`thp`, `vm.swappiness`):
    /// written before each run, put back after; root only.
    #[serde(default)]
    pub system: BTreeMap<String, Spanned<toml::Value>>,
    /// Train the profile on another revision of the source (a stale
    /// profile): `profile_from = { source = { git = "…", rev = "…" } }`.
    pub profile_from: Option<Spanned<RawProfileFrom>>,
    /// Build the whole variant from another source or revision (a build
    /// to compare against): `source = { git = "…", rev = "…" }`, or
    /// anything a target's `source` takes.
    pub source: Option<Spanned<RawSource>>,
    /// A profile brought from elsewhere instead of training: a file, a
    /// directory of them, or a list (each a path or `{ path, weight }`).
    pub profile: Option<Spanned<RawProfile>>,
    /// Train this many independent profiles (recordings), each its own
    /// variant `NAME.1` … `NAME.N`, so the report gives the spread a
    /// profile's recording adds.
    pub recordings: Option<Spanned<i64>>,
    /// Which recording of which variant this one is, when `recordings`
    /// made it; never written in the file.
    #[serde(skip)]
    pub recording: Option<crate::experiment::Recording>,
    /// The axis values of a variant a `[[matrix]]` made (axis → value);
    /// never written in the file.
    #[serde(skip)]
    pub axes: BTreeMap<String, String>,
}

/// `profile_from = { source = { … } }`, as written: the source takes what
/// a target's `source` takes.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawProfileFrom {
    pub source: Spanned<RawSource>,
}

/// `[[matrix]]`: one variant per combination of the axes' values (the
/// first axis varies slowest), less the combinations `exclude` names.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawMatrix {
    /// The variants' name, with `{compiler}`, `{optimize}`,
    /// `{params.KEY}` and `{env.KEY}` for the axis values; by default the
    /// values joined with `-`.
    pub name: Option<Spanned<String>>,
    #[serde(default)]
    pub compiler: Vec<Spanned<String>>,
    /// Each value an `optimize` list (`[]` for none) or its words joined
    /// by `+` (`"pgo+lto"`, `"none"`).
    #[serde(default)]
    pub optimize: Vec<Spanned<RawStack>>,
    /// `params.KEY = [values]`: an axis per key.
    #[serde(default)]
    pub params: BTreeMap<String, Spanned<Vec<Spanned<toml::Value>>>>,
    /// `env.KEY = [values]`: an axis per variable.
    #[serde(default)]
    pub env: BTreeMap<String, Spanned<Vec<Spanned<String>>>>,
    /// Added to every variant of the matrix.
    pub cflags: Option<String>,
    pub ldflags: Option<String>,
    /// Combinations left out: each a table of axis values, e.g.
    /// `{ compiler = "clang", params = { threads = 4 } }`.
    #[serde(default)]
    pub exclude: Vec<Spanned<toml::Table>>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawWorkload {
    pub name: Spanned<String>,
    /// A query set: one workload per file, `"queries/*.sql"` (a wildcard
    /// in the file name) or a list of files; `{each}` is the file's stem,
    /// `{each.path}` its path and `{each.text}` its content.
    pub each: Option<Spanned<RawEach>>,
    pub role: Option<Spanned<String>>,
    /// A command to run; or `load` instead.
    pub run: Option<Spanned<String>>,
    pub load: Option<Spanned<RawLoad>>,
    pub train_run: Option<Spanned<String>>,
    /// Run before each run, after its services started, outside the
    /// measurement (`pgbench -i`, a cache flush).
    pub before: Option<Spanned<String>>,
    /// Run after each run, before its services stop, outside the measurement.
    pub after: Option<Spanned<String>>,
    pub timeout: Option<Spanned<String>>,
    /// CPUs the workload (or load client) runs on.
    pub cpus: Option<Spanned<String>>,
    /// How much a training workload counts in the merged profile.
    pub weight: Option<Spanned<i64>>,
    #[serde(default)]
    pub figures: Vec<RawFigure>,
}

/// `each = "dir/*.sql"` or `each = ["a.sql", "b.sql"]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum RawEach {
    Pattern(String),
    Files(Vec<String>),
}

/// A figure a batch workload prints itself, read with a regex.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawFigure {
    pub name: Spanned<String>,
    pub regex: Spanned<String>,
    pub unit: Option<String>,
    pub better: Option<Spanned<String>>,
    /// The figure that answers "is it faster?" for its workload.
    pub primary: Option<bool>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawBench {
    pub repetitions: Option<Spanned<RawRepetitions>>,
    /// With `repetitions = "auto"`: the time the rounds may take ("15m").
    pub budget: Option<Spanned<String>>,
    /// With `repetitions = "auto"`: rounds before the first look.
    pub min: Option<Spanned<u32>>,
    /// With `repetitions = "auto"`: the most rounds.
    pub max: Option<Spanned<u32>>,
    pub warmup: Option<u32>,
    pub metrics: Option<Vec<Spanned<String>>>,
    pub confidence: Option<Spanned<f64>>,
    /// Equivalence margin, a fraction (0.01 = ±1%).
    pub equivalence: Option<Spanned<f64>>,
    /// Pin services and workloads to disjoint CPUs (default true).
    pub pin: Option<bool>,
    /// Address-space randomization for runs (default true).
    pub aslr: Option<bool>,
    pub seed: Option<u64>,
    pub instruction_repetitions: Option<Spanned<u32>>,
    /// `"instructions"`: the instruction count heads the report, not time.
    pub primary: Option<Spanned<String>>,
}

/// `repetitions = 10` or `repetitions = "auto"`.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum RawRepetitions {
    Count(u32),
    Word(String),
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawQuick {
    pub repetitions: Option<Spanned<u32>>,
    pub warmup: Option<u32>,
    pub instruction_repetitions: Option<Spanned<u32>>,
    /// Only these variants run with `--quick`.
    pub variants: Option<Vec<Spanned<String>>>,
    /// Only these workloads run with `--quick`.
    pub workloads: Option<Vec<Spanned<String>>>,
    #[serde(default)]
    pub params: BTreeMap<String, Spanned<toml::Value>>,
}

/// `profile = "a.profdata"` or `profile = [{ path = "a", weight = 3 }, "b"]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum RawProfile {
    One(String),
    Many(Vec<RawProfileFile>),
}

/// One entry of a `profile` list.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum RawProfileFile {
    Path(String),
    Weighted { path: String, weight: i64 },
}
