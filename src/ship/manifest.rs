//! `manifest.json`, the description an exported package carries: what was
//! built, how, from which source, with which profiles, and how it fared.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::stats::Verdict;
use crate::toolchain::Optimization;

/// Version of `manifest.json`; bumped on any incompatible change.
pub const MANIFEST_VERSION: u32 = 1;

/// The file name of the manifest at the package's top.
pub const MANIFEST_FILE: &str = "manifest.json";

/// Everything an exported package says about itself.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// Version of this format ([`MANIFEST_VERSION`]).
    pub schema_version: u32,
    /// The experiment's target name.
    pub target: String,
    /// The exported variant's name.
    pub variant: String,
    /// The variant's optimizations, in the order they were applied.
    pub optimize: Vec<Optimization>,
    /// Environment the variant's runs had (e.g. `LD_PRELOAD`), to set where
    /// the binaries are installed too; empty for most variants.
    pub env: BTreeMap<String, String>,
    /// The compiler the final build used.
    pub compiler: CompilerInfo,
    /// Compile flags of the final build, as the build command got them.
    pub cflags: String,
    /// Link flags of the final build.
    pub ldflags: String,
    /// Go build flags of the final build; empty for C and C++.
    pub goflags: String,
    /// A cargo target's RUSTFLAGS and release-profile settings of the final
    /// build; absent otherwise.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub rustflags: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub cargo: String,
    /// Revision of the target's source (git commit, package version,
    /// tarball checksum), when known.
    pub revision: Option<String>,
    /// The shipped binaries, by name.
    pub binaries: Vec<ShippedBinary>,
    /// The merged profiles the final build applied, one folder per round.
    pub profiles: Vec<ShippedFile>,
    /// The latest bench run's verdicts on this variant, when a run exists.
    pub bench: Option<BenchSummary>,
    /// The machine the verdicts were measured on (the bench run's), or
    /// the exporting machine when there is no run.
    pub machine: Machine,
    /// The afterburner version that exported the package.
    pub afterburner_version: String,
}

/// The compiler of a build.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompilerInfo {
    /// The toolchain: `gcc`, `clang` or `go`.
    pub name: String,
    /// The C compiler command (`gcc`, `clang`, `go`).
    pub cc: String,
    /// First line of `CC --version` (`go version` for Go).
    pub version: String,
}

/// One binary in the package.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShippedBinary {
    /// The binary's name in the experiment (`binaries = { NAME = … }`).
    pub name: String,
    /// Its path in the package, relative to the top folder (`bin/NAME`).
    pub path: PathBuf,
    /// SHA-256 of the binary as built (hex), before stripping.
    pub built_sha256: String,
    /// SHA-256 of the shipped file (hex), after stripping.
    pub sha256: String,
    /// Its size as built, in bytes.
    pub built_bytes: u64,
    /// The shipped file's size, in bytes.
    pub bytes: u64,
    /// The split debug information (`debug/NAME.debug`), named by the
    /// binary's `.gnu_debuglink`; `None` when it could not be split.
    pub debug: Option<ShippedFile>,
    /// Why the binary is shipped as built, when it is (objcopy refused it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// A file in the package and its checksum.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShippedFile {
    /// Path relative to the package's top folder.
    pub path: PathBuf,
    /// SHA-256 of the file (hex).
    pub sha256: String,
}

/// A bench run's verdicts on the exported variant.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BenchSummary {
    /// The run's id (`runs/<id>/`).
    pub run_id: String,
    /// The variant the verdicts compare against.
    pub baseline: String,
    /// Confidence level of the intervals, e.g. 0.95.
    pub confidence: f64,
    /// Whether the run benchmarked this very build: same compiler
    /// version and flags as the exported build's record.
    pub same_build: bool,
    /// One verdict per workload and metric.
    pub verdicts: Vec<VerdictEntry>,
}

/// The variant against the baseline on one workload and metric.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VerdictEntry {
    pub workload: String,
    /// Metric name (`wall`, `instructions`, …).
    pub metric: String,
    /// mean(variant) / mean(baseline), unitless.
    pub ratio: f64,
    /// Lower bound of the ratio's confidence interval (unitless).
    pub ci_low: f64,
    /// Upper bound of the ratio's confidence interval (unitless).
    pub ci_high: f64,
    pub verdict: Verdict,
}

/// A summary of the machine and software capture.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Machine {
    /// When the capture was taken (RFC 3339 UTC).
    pub captured_at: String,
    pub hostname: Option<String>,
    pub cpu_model: Option<String>,
    /// Logical CPUs online.
    pub logical_cpus: usize,
    /// Kernel release (`uname -r`).
    pub kernel: Option<String>,
    /// `PRETTY_NAME` from os-release.
    pub distro: Option<String>,
}

impl From<&crate::env::Environment> for Machine {
    fn from(env: &crate::env::Environment) -> Self {
        Self {
            captured_at: env.captured_at.clone(),
            hostname: env.hostname.clone(),
            cpu_model: env.cpu_model.clone(),
            logical_cpus: env.logical_cpus,
            kernel: env.kernel.clone(),
            distro: env.distro.clone(),
        }
    }
}
