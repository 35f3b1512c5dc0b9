//! A profile's life, decided here once: whether a round's profile is
//! current (made for the instrumented build the current inputs would make,
//! by what its source says now), the first that is not, and making one
//! current — up to date, shared from the variant's donor, or made from its
//! source on the round's instrumented build — and marking it so. The
//! pipeline asks; nothing else reads the markers.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};

use super::{round_dirs, shared, source};
use crate::build;
use crate::context::Context;
use crate::experiment::Variant;
use crate::progress;
use crate::toolchain::Stage;

/// Marker: the instrumented build's key the profile was trained with.
const TRAINED_MARKER: &str = ".afterburner-trained";

/// Whether round `round`'s profile was trained on the instrumented build
/// that the current inputs (earlier rounds' profiles included) would
/// produce, by the current training workloads.
pub fn is_current(
    cx: &Context,
    variant: &Variant,
    round: usize,
    source_dir: &Path,
) -> Result<bool> {
    let key = instrumented_key(cx, variant, round, source_dir)?;
    let marker = round_dirs(cx, variant, round).profile.join(TRAINED_MARKER);
    let source = source(variant);
    Ok(fs_err::read_to_string(marker)
        .is_ok_and(|k| source.key(cx, variant, &key).is_ok_and(|s| s == k)))
}

/// The key round `round`'s instrumented build would be built with now.
pub fn instrumented_key(
    cx: &Context,
    variant: &Variant,
    round: usize,
    source_dir: &Path,
) -> Result<String> {
    let stage = Stage::Instrumented(round);
    let tree = stage_source_dir(cx, variant, stage, source_dir)?;
    build::stage_key(&cx.experiment, variant, stage, &tree, &cx.workdir)
}

/// Mark round `round`'s profile current: made for the instrumented build
/// of key `instrumented_key`, by what its source says.
fn mark_current(
    cx: &Context,
    variant: &Variant,
    round: usize,
    instrumented_key: &str,
) -> Result<()> {
    let source = source(variant);
    let marker = round_dirs(cx, variant, round).profile.join(TRAINED_MARKER);
    fs_err::write(marker, source.key(cx, variant, instrumented_key)?)?;
    Ok(())
}

/// The first training round whose profile is not current, if any.
pub fn first_stale_round(
    cx: &Context,
    variant: &Variant,
    source_dir: &Path,
) -> Result<Option<usize>> {
    for round in 0..variant.rounds().len() {
        if !is_current(cx, variant, round, source_dir)? {
            return Ok(Some(round));
        }
    }
    Ok(None)
}

/// The source directory `stage` of `variant` is built from: where its
/// profile source trains for an instrumented stage (a stale profile's
/// other revision), else the variant's own `source` for a variant built
/// from another revision, else `source_dir` (the target's).
pub fn stage_source_dir(
    cx: &Context,
    variant: &Variant,
    stage: Stage,
    source_dir: &Path,
) -> Result<PathBuf> {
    if let Stage::Instrumented(_) = stage {
        if let Some(tree) = source(variant).training_tree(cx, variant)? {
            return Ok(tree);
        }
    }
    match &variant.source {
        Some(own) => crate::source::fetch(&own.source, &cx.workdir.root).with_context(|| {
            format!(
                "fetching the source variant `{}` is built from (source in {})",
                variant.name,
                cx.experiment.file.display()
            )
        }),
        None => Ok(source_dir.to_path_buf()),
    }
}

/// Make round `round`'s profile from its source (trained, attached or
/// brought), check it against the round's binaries, and mark it current.
fn make_profile(cx: &Context, variant: &Variant, round: usize) -> Result<()> {
    let stage = Stage::Instrumented(round);
    let key = build::current(&cx.workdir, &variant.name, stage)
        .map(|r| r.key)
        .unwrap_or_default();
    let source = source(variant);
    let binaries = source.make(cx, variant, round)?;
    super::check(cx, variant, round, source, &binaries)?;
    mark_current(cx, variant, round, &key)
}

/// Give `variant` its donor's first-round profile (`profile_donor`), if it
/// has one whose profile is current and the share holds here; whether it
/// did.
fn share_profile(cx: &Context, variant: &Variant, source_dir: &Path) -> Result<bool> {
    let Some(donor) = variant
        .profile_donor
        .as_ref()
        .and_then(|d| cx.experiment.variants.iter().find(|v| &v.name == d))
    else {
        return Ok(false);
    };
    let round = variant.rounds()[0].name();
    if !is_current(cx, donor, 0, source_dir)? {
        return Ok(false);
    }
    let stage = Stage::Instrumented(0);
    let trees = (
        stage_source_dir(cx, donor, stage, source_dir)?,
        stage_source_dir(cx, variant, stage, source_dir)?,
    );
    if let Some(why) = shared::refused(cx, (donor, &trees.0), (variant, &trees.1))? {
        progress::info(format_args!(
            "training {} ({round}): its own profile, not {}'s: {why}",
            variant.name, donor.name
        ));
        return Ok(false);
    }
    shared::share(cx, donor, variant, 0)?;
    // Made without building the round: current for the build it stands for.
    let key = instrumented_key(cx, variant, 0, source_dir)?;
    mark_current(cx, variant, 0, &key)?;
    progress::info(format_args!(
        "training {} ({round}): {}'s profile, shared (the same instrumented build, trained by the same runs)",
        variant.name, donor.name
    ));
    Ok(true)
}

/// Make round `round`'s profile current: nothing where it is; its donor's
/// where the variant shares round 0's; else `build_instrumented` (the
/// round's instrumented build back in the build directory), then the
/// profile made from its source, checked and marked.
pub fn make_current(
    cx: &Context,
    variant: &Variant,
    round: usize,
    source_dir: &Path,
    build_instrumented: &dyn Fn() -> Result<()>,
) -> Result<()> {
    if is_current(cx, variant, round, source_dir)? {
        progress::info(format_args!(
            "training {} ({}): profile up to date",
            variant.name,
            variant.rounds()[round].name()
        ));
        return Ok(());
    }
    if round == 0 && share_profile(cx, variant, source_dir)? {
        return Ok(());
    }
    build_instrumented()?;
    make_profile(cx, variant, round)
}
