//! The work directory's layout, in one place:
//! `src/`, `variants/<name>/{build,profile/<round>/,logs}`, `runs/<id>/`,
//! `calibrations/<id>/` (`afterburner calibrate`'s A/A benches, apart from
//! the runs so that `report` and `bench --resume` never take one for the
//! latest run).

use std::path::PathBuf;

use crate::toolchain::{Stage, VariantDirs};

/// Paths under one experiment's work directory.
#[derive(Debug, Clone)]
pub struct Workdir {
    pub root: PathBuf,
    /// A process that writes one variant only (a cluster's build job)
    /// locks that variant's directory, not the whole work directory.
    pub scope: Option<String>,
}

impl Workdir {
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self {
            root: root.into(),
            scope: None,
        }
    }

    pub fn variant(&self, name: &str) -> PathBuf {
        self.root.join("variants").join(name)
    }

    /// Where a variant's build command runs, for every stage in turn.
    pub fn build_dir(&self, variant: &str) -> PathBuf {
        self.variant(variant).join("build")
    }

    /// cargo's target directory of one stage of a cargo target's variant:
    /// kept between builds (cargo rebuilds only what changed), apart per
    /// stage (an instrumented build and the final one never undo each
    /// other's crates).
    pub fn cargo_target_dir(&self, variant: &str, stage: Stage) -> PathBuf {
        self.variant(variant).join("cargo").join(stage.name())
    }

    /// The record of a finished build of that stage.
    pub fn build_record(&self, variant: &str, stage: Stage) -> PathBuf {
        self.variant(variant).join(format!("{}.json", stage.name()))
    }

    /// Where a variant's profiles live, one directory per training round.
    pub fn profile_dir(&self, variant: &str) -> PathBuf {
        self.variant(variant).join("profile")
    }

    /// A variant's build directory and profile root.
    pub fn variant_dirs(&self, variant: &str) -> VariantDirs {
        VariantDirs {
            build: self.build_dir(variant),
            profiles: self.profile_dir(variant),
        }
    }

    pub fn variant_logs(&self, variant: &str) -> PathBuf {
        self.variant(variant).join("logs")
    }

    pub fn runs(&self) -> PathBuf {
        self.root.join("runs")
    }

    pub fn run(&self, id: &str) -> PathBuf {
        self.runs().join(id)
    }

    /// Where `afterburner calibrate` keeps its A/A benches.
    pub fn calibrations(&self) -> PathBuf {
        self.root.join("calibrations")
    }

    /// Lock the work directory for a process that writes in it (build,
    /// train, bench); a second one refuses, naming the first.
    pub fn lock(&self, doing: &str) -> Result<crate::lockfile::Held, crate::lockfile::LockError> {
        let dir = self
            .scope
            .as_ref()
            .map_or_else(|| self.root.clone(), |variant| self.variant(variant));
        fs_err::create_dir_all(&dir).map_err(|source| crate::lockfile::LockError::Io {
            path: dir.clone(),
            source,
        })?;
        crate::lockfile::acquire(&dir.join(LOCK_FILE), doing)
    }

    /// The most recent run directory (run ids sort by time).
    pub fn latest_run(&self) -> Option<PathBuf> {
        let mut ids: Vec<PathBuf> = fs_err::read_dir(self.runs())
            .ok()?
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.join(RAW_FILE).exists() || p.join(CLUSTER_FILE).exists())
            .collect();
        ids.sort();
        ids.pop()
    }
}

/// Held by the process writing in the work directory (see `lockfile`).
pub const LOCK_FILE: &str = "lock";
/// One JSON line per finished run.
pub const RAW_FILE: &str = "raw.jsonl";
/// What a cluster run submitted (see `runs::blocks`).
pub const CLUSTER_FILE: &str = "cluster.json";
/// Bench metadata written before the first run.
pub const META_FILE: &str = "meta.json";
pub const RESULTS_FILE: &str = "results.json";
/// `afterburner calibrate`'s findings, in its A/A bench's run directory.
pub const CALIBRATION_FILE: &str = "calibration.json";
pub const REPORT_FILE: &str = "report.md";
pub const HTML_FILE: &str = "report.html";

pub use crate::process::{tail, tail_text};
