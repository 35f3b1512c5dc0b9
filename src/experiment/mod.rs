//! The experiment file: load `afterburner.toml`, validate it once, and hand
//! later phases a resolved [`Experiment`] they never need to re-check.

mod bench;
mod cluster;
mod raw;
mod report;
mod resolve;
mod target;
pub mod template;
mod variant;
mod workload;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

pub use bench::{Bench, GateStop, LeftOut, Race, Sequential};
pub use cluster::{Cluster, ClusterEngine, LoadPlacement};
pub use report::{GainGroup, ReportSettings};
pub use resolve::{load, load_str, report_settings};
pub use target::{Cargo, Ready, Recorded, RunAs, Service, Source, Target};
pub use template::{Bindings, Template};
pub use variant::{ProfileFrom, ProfileOrigin, Recording, TrainStop, Variant};
pub use workload::{Figure, Load, Role, Workload};

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

mod serde_regex_text {
    pub fn serialize<S: serde::Serializer>(re: &regex::Regex, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(re.as_str())
    }
}
