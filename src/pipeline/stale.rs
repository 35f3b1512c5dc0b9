//! Stale profiles (`profile_from`): a variant's instrumented builds are of
//! another revision of the source, fetched beside the target's, and what
//! they trained is keyed by that revision so it is cached apart from the
//! fresh profile.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};

use super::Context;
use crate::experiment::Variant;
use crate::toolchain::Stage;

/// The source directory `stage` of `variant` is built from: the
/// `profile_from` revision's for a stale variant's instrumented stages,
/// the variant's own `source` for a variant built from another revision,
/// else `source_dir` (the target's).
pub(super) fn stage_source_dir(
    cx: &Context,
    variant: &Variant,
    stage: Stage,
    source_dir: &Path,
) -> Result<PathBuf> {
    match (&variant.profile_from, stage) {
        (Some(from), Stage::Instrumented(_)) => {
            crate::source::fetch(&from.source, &cx.workdir.root).with_context(|| {
                format!(
                    "fetching the source variant `{}` trains its profile on (profile_from in {})",
                    variant.name,
                    cx.experiment.file.display()
                )
            })
        }
        _ => match &variant.source {
            Some(own) => crate::source::fetch(&own.source, &cx.workdir.root).with_context(|| {
                format!(
                    "fetching the source variant `{}` is built from (source in {})",
                    variant.name,
                    cx.experiment.file.display()
                )
            }),
            None => Ok(source_dir.to_path_buf()),
        },
    }
}
