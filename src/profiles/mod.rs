//! Where a training round's profile comes from — one [`ProfileSource`]
//! per place, a file each: **trained** here (the training workloads run
//! the instrumented or sampled build), **attached** (a sampled round whose
//! services are recorded by attaching `perf record -p` over each
//! workload's window), **brought** (files collected elsewhere, named by
//! the variant's `profile =`). Whatever the source, the merged profile is
//! checked against the round's binaries before a build trusts it
//! ([`crate::toolchain::profile_match`]).

mod attached;
mod brought;
mod trained;

use std::path::PathBuf;

use anyhow::{bail, Result};

use crate::context::Context;
use crate::experiment::Recorded;
use crate::experiment::{Experiment, Variant};
use crate::progress;
use crate::toolchain::profile_match::{self, ProfileMatch, FOREIGN_BELOW, WARN_BELOW};
use crate::toolchain::{Pgo, StageDirs};

/// One place a round's profile comes from.
pub trait ProfileSource: Sync {
    /// `trained`, `attached` or `brought`: named in messages and reports.
    fn name(&self) -> &'static str;
    /// What made the profile (the instrumented build's key, and the
    /// training workloads or the brought files), for the marker that says
    /// the round's profile is current.
    fn key(&self, cx: &Context, variant: &Variant, instrumented_key: &str) -> Result<String>;
    /// Make round `round`'s merged profile in its profile directory, from
    /// the round's instrumented build (built already); returns that
    /// build's binaries, which the profile is checked against.
    fn make(&self, cx: &Context, variant: &Variant, round: usize) -> Result<Vec<PathBuf>>;
}

/// The source of `variant`'s round `round`.
pub fn source_for(e: &Experiment, variant: &Variant, round: usize) -> &'static dyn ProfileSource {
    if !variant.brought.is_empty() {
        return &brought::Brought;
    }
    let samples = variant.rounds().get(round).is_some_and(|p| p.samples());
    if samples
        && e.target
            .services
            .iter()
            .any(|s| s.record == Recorded::Window)
    {
        &attached::Attached
    } else {
        &trained::Trained
    }
}

/// Whether any variant trains (needs training workloads).
pub fn any_trains(variants: &[&Variant]) -> bool {
    variants.iter().any(|v| v.brought.is_empty())
}

/// The round's directories.
fn round_dirs(cx: &Context, variant: &Variant, round: usize) -> StageDirs {
    cx.workdir
        .variant_dirs(&variant.name)
        .round(variant.rounds()[round])
}

/// Check the round's merged profile against `binaries`, keep the figures
/// beside it, and refuse a profile of another program; a warning names
/// the hot functions missing when many are.
pub fn check(
    cx: &Context,
    variant: &Variant,
    round: usize,
    source: &dyn ProfileSource,
    binaries: &[PathBuf],
) -> Result<ProfileMatch> {
    let pgo: &dyn Pgo = variant.rounds()[round];
    let dirs = round_dirs(cx, variant, round);
    let files = pgo.profile_files(&dirs.profile)?;
    let figures = profile_match::check(pgo.name(), source.name(), &files, binaries)?;
    profile_match::record(&dirs.profile, &figures)?;
    if figures.method == "unchecked" {
        return Ok(figures);
    }
    progress::info(format_args!(
        "profile of {}: {}",
        variant.name,
        figures.describe()
    ));
    let share = figures.hot_share();
    if share < FOREIGN_BELOW {
        // The marker stays unwritten: the round is made again next time.
        bail!(
            "the {} profile of variant `{}` is not for this program: {}; missing hot functions: {}\nhint: {}",
            source.name(),
            variant.name,
            figures.describe(),
            figures.missing_hot.join(", "),
            if source.name() == "brought" {
                format!("bring a profile collected from this program's binaries (the files named by `profile` in {}), or drop `profile` to train it here", cx.experiment.file.display())
            } else {
                "the training workloads must run this target's binaries ({bin.NAME})".to_owned()
            }
        );
    }
    if share < WARN_BELOW {
        progress::warn(format_args!(
            "the profile of variant `{}` matches poorly ({}); the hottest functions it names that this build lacks: {}",
            variant.name,
            figures.describe(),
            figures.missing_hot.join(", ")
        ));
    }
    Ok(figures)
}
