//! Profiles trained here: the training workloads run each round's
//! instrumented (or sampled) build ([`super::training`]).

use std::path::PathBuf;

use anyhow::Result;

use super::training::{self, train_round, training_key};
use super::ProfileSource;
use crate::context::Context;
use crate::experiment::Variant;
use crate::toolchain::round::Round;

/// Training workloads run on the instrumented build.
pub struct Trained;

impl ProfileSource for Trained {
    fn name(&self, round: &dyn Round) -> &'static str {
        training::name(false, round)
    }

    fn key(&self, cx: &Context, variant: &Variant, instrumented_key: &str) -> Result<String> {
        Ok(training_key(cx, variant, instrumented_key, ""))
    }

    fn make(&self, cx: &Context, variant: &Variant, round: usize) -> Result<Vec<PathBuf>> {
        train_round(cx, variant, round, false)
    }
}
