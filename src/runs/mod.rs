//! The run directory `runs/<id>/`, owned here alone: `meta.json` (what the
//! bench planned), `raw.jsonl` (one line per finished run), `profiles/`
//! (the callgrind files of counted runs), the files beside each run's logs
//! (a load's outcome and series, the CPU sampled: `side_files.rs`), a
//! calibration's findings (`calibration.rs`) and the
//! work directory's lock while a bench writes them. The bench writes through
//! [`Writer`]; report and compare read through [`read`], which checks every
//! record against the plan.

mod blocks;
mod calibration;
mod callgrind;
mod race;
mod reader;
mod sequential;
mod side_files;
mod writer;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};
use serde::{Deserialize, Serialize};

pub use crate::measure::{RunKind, RunRecord};
pub use blocks::{
    block_dir, block_seed, block_states, is_cluster, read_cluster, set_aside, write_cluster, Block,
    ClusterRun, Job, BLOCKS_DIR, CLUSTER_FILE, JOB_LOGS_DIR,
};
pub use calibration::{
    read_calibration, write_calibration, Calibration, RoundsFor, TrialCounts, WorkloadCalibration,
    CALIBRATION_VERSION,
};
pub use callgrind::{
    profile_dir, profile_files, simulation_dir, simulation_files, PROFILES_DIR, SIMULATED_DIR,
};
pub use race::RaceMeta;
pub use reader::{read, read_records, Checked, Recorded};
pub use sequential::{SequentialMeta, SequentialStop, StopReason};
pub use side_files::{
    copy_stem, last_counted_run, read_cpu, read_instances, read_load, write_cpu, write_load,
    SavedLoad,
};
pub use writer::{Resumed, Writer};

use crate::env::Environment;
use crate::measure::{InstructionCounter, Metric};
use crate::toolchain::Optimization;
use crate::workdir::META_FILE;

/// Version of `meta.json`, `raw.jsonl` and `results.json`; bumped on any
/// incompatible change (see `docs/results-schema.md`).
/// 2: verdicts `same` (within `equivalence`) and `undecided` (with
/// `resolution_pct`) replace `no significant difference`.
/// 3: the headline comparisons are corrected for their number too (Holm),
/// the secondaries gated by them; a file of 2 was not corrected so.
/// 4: a comparison's `ratio`, `ci_low`, `ci_high` are the estimate that
/// decided (`estimate` names it; the paired t below 6 rounds, Welch unpaired),
/// the ratio of means in `mean_ratio`; the headlines by truncated Holm.
pub const SCHEMA_VERSION: u32 = 4;

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
    /// Equivalence margin, a fraction (0.01 = ±1%).
    #[serde(default = "default_equivalence")]
    pub equivalence: f64,
    /// Whether runs had address-space randomization (`[bench] aslr`).
    #[serde(default = "default_aslr")]
    pub aslr: bool,
    /// Where services and workloads ran, when the bench pinned them
    /// (`[bench] pin`, on by default with services and two CPUs or more).
    #[serde(default)]
    pub pinning: Option<crate::pinning::Pinning>,
    pub instruction_counter: InstructionCounter,
    pub metrics: Vec<Metric>,
    /// Variants in experiment order; the first is the baseline.
    pub variants: Vec<VariantInfo>,
    /// Benchmark workloads, in order.
    pub workloads: Vec<String>,
    /// Workloads that trained the profiles (role train or both).
    #[serde(default)]
    pub training_workloads: Vec<String>,
    /// Query sets (`each`): the set's name → its workloads, in file order.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub workload_sets: BTreeMap<String, Vec<String>>,
    pub environment: Environment,
    /// Revision of the target's source (git commit, package version), when known.
    #[serde(default)]
    pub revision: Option<String>,
    /// `repetitions = "auto"`: the sequential plan (`repetitions` is then
    /// its most rounds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sequential: Option<SequentialMeta>,
    /// Why a sequential bench or a race stopped; written when it does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<SequentialStop>,
    /// `afterburner race`: the race's plan (`repetitions` is then its most
    /// rounds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub race: Option<RaceMeta>,
    /// Per bench workload, how it is judged (absent in runs before it was
    /// recorded: the report then picks the headline by metric name).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub judging: BTreeMap<String, Judging>,
    /// A cluster block whose load ran on a node of its own (`[cluster]
    /// load = "separate"`): both nodes and their addresses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_path: Option<LoadPath>,
}

/// Where a cluster block's services and its load ran, when the load had a
/// node of its own (`[cluster] load = "separate"`): the services bound the
/// service node's address and every request crossed the cluster's network
/// from the load node to it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LoadPath {
    /// The node the services ran on (the block's own node, its host name).
    pub service_node: String,
    /// The address the services bound there (`{host}`), an IP address.
    pub service_address: String,
    /// The node the load generator ran on (its host name).
    pub load_node: String,
    /// The load node's address on the cluster network, an IP address.
    pub load_address: String,
}

impl LoadPath {
    /// "load on node2 → service on node1 over 198.18.1.12 → 198.18.1.11".
    pub fn describe(&self) -> String {
        format!(
            "load on {} → service on {} over {} → {}",
            self.load_node, self.service_node, self.load_address, self.service_address
        )
    }
}

/// How a bench workload is judged, decided from the experiment when the
/// bench starts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Judging {
    /// The headline metric, tested at the stated level: time (wall, or the
    /// declared primary figure; a load's throughput, p99 or SLA rate), or
    /// the instruction count where `[bench] primary = "instructions"`.
    /// Every other metric of the report is secondary, corrected for their
    /// number.
    pub primary: String,
    /// Whether a run lasts a fixed time rather than doing a fixed amount of
    /// work (a load with a duration, or a command whose primary figure is a
    /// rate): cumulative counters (a service's CPU seconds, context
    /// switches) are then judged per unit of work, their totals shown
    /// unjudged.
    #[serde(default)]
    pub fixed_duration: bool,
}

/// How a variant was built.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct VariantInfo {
    pub name: String,
    pub optimize: Vec<Optimization>,
    pub compiler_version: String,
    pub cflags: String,
    pub ldflags: String,
    /// Go build flags (`GOFLAGS`); empty for C and C++.
    #[serde(default)]
    pub goflags: String,
    /// A cargo target's `RUSTFLAGS` and release-profile settings
    /// (`CARGO_PROFILE_RELEASE_LTO=fat`); absent otherwise.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub rustflags: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub cargo: String,
    pub env: BTreeMap<String, String>,
    /// Binary name → path.
    pub binaries: BTreeMap<String, PathBuf>,
    /// The final build's log (absent in runs recorded before it was added).
    #[serde(default)]
    pub build_log: PathBuf,
    /// The axis values of a variant a `[[matrix]]` made (axis → value).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub axes: BTreeMap<String, String>,
    /// Which of a variant's independent recordings this one is
    /// (`recordings = N`); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recording: Option<crate::experiment::Recording>,
    /// System settings its runs happened under (`thp` → `never`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub system: BTreeMap<String, String>,
    /// The other revision a stale profile was trained on (`profile_from`):
    /// its source and, where known, commit or package version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile_from: Option<String>,
    /// What the compiler said about the profile in the final build's log
    /// (functions whose profile no longer matches, functions without
    /// one); absent for a variant built without a gcc or clang profile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile_mismatch: Option<crate::toolchain::mismatch::ProfileMismatch>,
    /// Each profile the final build used, with how much of it matched the
    /// binaries it was checked against (one per training round).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub profiles: Vec<crate::toolchain::matching::ProfileMatch>,
    /// The earlier variant whose final build this is, where it is the very
    /// same build (it differs only in how it runs): its binaries are run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build_shared_from: Option<String>,
    /// What was verified of its final build before it was measured: the
    /// compiler its binaries name, each switch its words add with the
    /// recorded units (objects' command lines, or compile units) that show
    /// it and those that do not; `not_verified` says why where it was not
    /// (prebuilt binaries). Absent in runs recorded before it was added.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verified: Option<crate::toolchain::recorded::Verification>,
}

impl BenchMeta {
    /// A plan for tests: `variants` (the first the baseline) × `workloads`,
    /// `repetitions` rounds and no warmup, measuring `metrics`.
    #[cfg(test)]
    pub fn for_tests(
        variants: &[&str],
        workloads: &[&str],
        repetitions: u32,
        metrics: Vec<Metric>,
    ) -> Self {
        let variant = |name: &str| VariantInfo {
            name: name.to_owned(),
            optimize: Vec::new(),
            compiler_version: String::new(),
            cflags: String::new(),
            ldflags: String::new(),
            goflags: String::new(),
            rustflags: String::new(),
            cargo: String::new(),
            env: std::collections::BTreeMap::new(),
            binaries: std::collections::BTreeMap::new(),
            build_log: std::path::PathBuf::new(),
            axes: std::collections::BTreeMap::new(),
            recording: None,
            system: std::collections::BTreeMap::new(),
            profile_from: None,
            profile_mismatch: None,
            profiles: Vec::new(),
            build_shared_from: None,
            verified: None,
        };
        BenchMeta {
            schema_version: SCHEMA_VERSION,
            run_id: "20261125-020000".to_owned(),
            experiment: std::path::PathBuf::from("e.toml"),
            target: "t".to_owned(),
            seed: 1,
            repetitions,
            warmup: 0,
            instruction_repetitions: 0,
            confidence: 0.95,
            equivalence: 0.01,
            aslr: true,
            pinning: None,
            instruction_counter: InstructionCounter::Callgrind,
            metrics,
            variants: variants.iter().map(|v| variant(v)).collect(),
            workloads: workloads.iter().map(|w| (*w).to_owned()).collect(),
            training_workloads: Vec::new(),
            workload_sets: std::collections::BTreeMap::new(),
            // Captured once per process: it runs a dozen probes, and the
            // conformance suite builds a meta per trial.
            environment: {
                static ONCE: std::sync::OnceLock<crate::env::Environment> =
                    std::sync::OnceLock::new();
                ONCE.get_or_init(crate::env::capture).clone()
            },
            revision: None,
            sequential: None,
            stopped: None,
            race: None,
            judging: std::collections::BTreeMap::new(),
            load_path: None,
        }
    }

    /// Rounds in the plan, warmup included: for a sequential plan that
    /// stopped, the rounds it ran; before it stops, its most rounds.
    pub fn rounds(&self) -> u32 {
        self.warmup + self.stopped.as_ref().map_or(self.repetitions, |s| s.rounds)
    }
}

/// Read a run directory's `meta.json`.
pub fn read_meta(run_dir: &Path) -> Result<BenchMeta> {
    let path = run_dir.join(META_FILE);
    serde_json::from_slice(&fs_err::read(&path)?).with_context(|| {
        format!(
            "{} is not a bench run's metadata\nhint: meta.json is written by `afterburner bench`; was it edited?",
            path.display()
        )
    })
}

fn default_aslr() -> bool {
    true
}

fn default_equivalence() -> f64 {
    crate::stats::DEFAULT_EQUIVALENCE
}

/// How far a run got: rounds in which every workload ran on every variant
/// (a failed run counts as run), against the rounds planned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    pub complete_rounds: u32,
    pub planned_rounds: u32,
}

impl Progress {
    pub fn of(meta: &BenchMeta, runs: &[RunRecord]) -> Self {
        let complete_rounds = (0..meta.rounds())
            .filter(|&round| {
                meta.workloads.iter().all(|w| {
                    meta.variants.iter().all(|v| {
                        runs.iter().any(|r| {
                            r.round == round
                                && r.kind == RunKind::Timing
                                && &r.workload == w
                                && r.variant == v.name
                        })
                    })
                })
            })
            .count();
        Self {
            complete_rounds: u32::try_from(complete_rounds).unwrap_or(u32::MAX),
            planned_rounds: meta.rounds(),
        }
    }

    pub fn is_partial(self) -> bool {
        self.complete_rounds < self.planned_rounds
    }
}
