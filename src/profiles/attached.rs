//! Profiles sampled from running services: a sampled round (AutoFDO,
//! sampled BOLT, Go PGO from perf) whose services are recorded by
//! attaching `perf record -p` to their processes from after they are ready
//! and warmed up to the end of each training workload's window, as seed
//! 000 records `NebulaGraph`'s daemons. The training workloads drive them;
//! commands without services run under `perf record` as when trained, and
//! a round that does not sample (an instrumented one before it) trains as
//! [`super::trained`] does.

use std::path::PathBuf;

use anyhow::Result;

use super::training::{self, train_round, training_key};
use super::ProfileSource;
use crate::context::Context;
use crate::experiment::Variant;
use crate::toolchain::round::Round;

/// Services sampled over each training workload's window.
pub struct Attached;

impl ProfileSource for Attached {
    fn name(&self, round: &dyn Round) -> &'static str {
        training::name(true, round)
    }

    fn key(&self, cx: &Context, variant: &Variant, instrumented_key: &str) -> Result<String> {
        Ok(training_key(cx, variant, instrumented_key, ""))
    }

    fn make(&self, cx: &Context, variant: &Variant, round: usize) -> Result<Vec<PathBuf>> {
        let samples = variant.rounds()[round].samples();
        train_round(cx, variant, round, samples)
    }
}
