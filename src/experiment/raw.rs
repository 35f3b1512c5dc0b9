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
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawTarget {
    pub name: Spanned<String>,
    pub source: Spanned<RawSource>,
    pub build: Spanned<String>,
    pub binaries: Spanned<BTreeMap<String, Spanned<String>>>,
    pub compiler: Option<Spanned<String>>,
    pub cflags: Option<String>,
    pub ldflags: Option<String>,
    pub build_timeout: Option<Spanned<String>>,
    /// Debian packages the build needs.
    #[serde(default)]
    pub packages: Vec<String>,
}

/// Exactly one of `path`, `apt`, `git` (+ `rev`), `url` (+ `sha256`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawSource {
    pub path: Option<String>,
    pub apt: Option<String>,
    pub git: Option<String>,
    pub rev: Option<String>,
    pub url: Option<String>,
    pub sha256: Option<String>,
}

#[derive(Debug, Deserialize)]
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
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawWorkload {
    pub name: Spanned<String>,
    pub role: Option<Spanned<String>>,
    pub run: Spanned<String>,
    pub train_run: Option<Spanned<String>>,
    pub timeout: Option<Spanned<String>>,
    #[serde(default)]
    pub figures: Vec<RawFigure>,
}

/// A figure a batch workload prints itself, read with a regex.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawFigure {
    pub name: Spanned<String>,
    pub regex: Spanned<String>,
    pub unit: Option<String>,
    pub better: Option<Spanned<String>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawBench {
    pub repetitions: Option<Spanned<u32>>,
    pub warmup: Option<u32>,
    pub metrics: Option<Vec<Spanned<String>>>,
    pub confidence: Option<Spanned<f64>>,
    pub seed: Option<u64>,
    pub instruction_repetitions: Option<Spanned<u32>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawQuick {
    pub repetitions: Option<Spanned<u32>>,
    pub warmup: Option<u32>,
    pub instruction_repetitions: Option<Spanned<u32>>,
    /// Only these variants run with `--quick`.
    pub variants: Option<Vec<Spanned<String>>>,
    #[serde(default)]
    pub params: BTreeMap<String, Spanned<toml::Value>>,
}
