//! Profiles sampled from running services: a sampled round (AutoFDO,
//! sampled BOLT, Go PGO from perf) whose services are recorded by
//! attaching `perf record -p` to their processes from after they are ready
//! and warmed up to the end of each training workload's window, as seed
//! 000 records `NebulaGraph`'s daemons. The training workloads drive them;
//! commands without services run under `perf record` as when trained.

use std::path::PathBuf;

use anyhow::Result;

use super::trained::{train_round, training_key};
use super::ProfileSource;
use crate::context::Context;
use crate::experiment::Variant;

/// Services sampled over each training workload's window.
pub struct Attached;

impl ProfileSource for Attached {
    fn name(&self) -> &'static str {
        "attached"
    }

    fn key(&self, cx: &Context, variant: &Variant, instrumented_key: &str) -> Result<String> {
        Ok(training_key(cx, variant, instrumented_key))
    }

    fn make(&self, cx: &Context, variant: &Variant, round: usize) -> Result<Vec<PathBuf>> {
        train_round(cx, variant, round, true)
    }
}
