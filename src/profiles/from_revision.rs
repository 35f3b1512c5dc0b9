//! Stale profiles (`profile_from`): trained on another revision of the
//! source and applied to this one. The round's instrumented builds are of
//! that revision, fetched beside the target's; what they trained is keyed
//! by the revision, so it is cached apart from the fresh profile. The
//! training itself is a fresh one's ([`super::training`]), services
//! attached to as the target says; the final build counts what the
//! compiler says of the mismatch.

use std::path::PathBuf;

use anyhow::{Context as _, Result};

use super::training::{self, train_round, training_key};
use super::ProfileSource;
use crate::context::Context;
use crate::experiment::Variant;
use crate::toolchain::round::Round;

/// Training on the revision `profile_from` names; `attach`: services of a
/// sampled round are attached to, as [`super::attached`] does.
pub struct FromRevision {
    pub attach: bool,
}

/// Training on the other revision.
pub static TRAINED: FromRevision = FromRevision { attach: false };
/// The same, services attached to over each workload's window.
pub static ATTACHED: FromRevision = FromRevision { attach: true };

impl ProfileSource for FromRevision {
    /// As the training that made it: the record's `profile_from` says
    /// which revision.
    fn name(&self, round: &dyn Round) -> &'static str {
        training::name(self.attach, round)
    }

    fn key(&self, cx: &Context, variant: &Variant, instrumented_key: &str) -> Result<String> {
        Ok(training_key(
            cx,
            variant,
            instrumented_key,
            &revision_part(cx, variant),
        ))
    }

    fn make(&self, cx: &Context, variant: &Variant, round: usize) -> Result<Vec<PathBuf>> {
        let samples = variant.rounds()[round].samples();
        train_round(cx, variant, round, self.attach && samples)
    }

    fn training_tree(&self, cx: &Context, variant: &Variant) -> Result<Option<PathBuf>> {
        let Some(from) = &variant.profile_from else {
            return Ok(None);
        };
        crate::source::fetch(&from.source, &cx.workdir.root)
            .with_context(|| {
                format!(
                    "fetching the source variant `{}` trains its profile on (profile_from in {})",
                    variant.name,
                    cx.experiment.file.display()
                )
            })
            .map(Some)
    }
}

/// What a stale variant's training key adds: the other revision's
/// description and, where known, its commit or version.
fn revision_part(cx: &Context, variant: &Variant) -> String {
    let Some(from) = &variant.profile_from else {
        return String::new();
    };
    let revision = crate::source::fetch(&from.source, &cx.workdir.root)
        .ok()
        .and_then(|dir| crate::source::revision(&from.source, &dir));
    format!("\nprofile_from={:?} revision={revision:?}", from.source)
}
