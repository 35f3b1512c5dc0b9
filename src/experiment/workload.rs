//! `[[workload]]`: what a variant is run on, a command or a load, and the
//! figures it prints.

use std::path::Path;
use std::time::Duration;

use serde::Serialize;

use super::{serde_regex_text, serialize_option_template, serialize_template, Template};

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
