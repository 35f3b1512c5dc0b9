//! A training round's profile, its whole life: where it comes from — one
//! [`ProfileSource`] per place, a file each: **trained** here (the
//! training workloads run the instrumented or sampled build), **attached**
//! (a sampled round whose services are recorded by attaching `perf record
//! -p` over each workload's window), **brought** (files collected
//! elsewhere, named by the variant's `profile =`), **stale** (trained on
//! another revision, `profile_from`) — chosen once, when the experiment
//! is resolved (`Variant::profile_origin`); and the check of the merged
//! profile against the round's binaries before a build trusts it
//! ([`check`]; how a round's functions are listed and matched is the
//! round's own, `Round::matched`).
//!
//! A first round trained once is shared by the stacks that instrument
//! alike ([`shared`]).
//!
//! To add a source: a file here with a type implementing
//! [`ProfileSource`], a variant of `ProfileOrigin` chosen in
//! `experiment/resolve/variants.rs`, and its arm in [`source`].

mod attached;
mod brought;
mod check;
mod from_revision;
mod life;
pub mod shared;
mod trained;
mod training;

use std::path::PathBuf;

use anyhow::Result;

pub use check::check;
pub use life::{first_stale_round, instrumented_key, make_current, stage_source_dir};

use crate::context::Context;
use crate::experiment::{ProfileOrigin, Variant};
use crate::toolchain::round::Round;
use crate::toolchain::StageDirs;

/// One place a round's profile comes from.
pub trait ProfileSource: Sync {
    /// How round `round`'s profile was made, named in messages and in
    /// `match.json`: `trained`, `attached` or `brought`.
    fn name(&self, round: &dyn Round) -> &'static str;
    /// What made the profile (the instrumented build's key, and the
    /// training workloads or the brought files), for the marker that says
    /// the round's profile is current.
    fn key(&self, cx: &Context, variant: &Variant, instrumented_key: &str) -> Result<String>;
    /// Make round `round`'s merged profile in its profile directory, from
    /// the round's instrumented build (built already); returns that
    /// build's binaries, which the profile is checked against.
    fn make(&self, cx: &Context, variant: &Variant, round: usize) -> Result<Vec<PathBuf>>;
    /// The source tree the rounds' instrumented builds are built from,
    /// where it is not the variant's own: another revision's, fetched.
    fn training_tree(&self, _cx: &Context, _variant: &Variant) -> Result<Option<PathBuf>> {
        Ok(None)
    }
    /// Whether making it runs the training workloads on this machine
    /// (and what sampling needs here applies).
    fn trains(&self) -> bool {
        true
    }
    /// What to do about a profile that is not this program's.
    fn foreign_hint(&self, _cx: &Context) -> String {
        "the training workloads must run this target's binaries ({bin.NAME})".to_owned()
    }
}

/// The source of `variant`'s profiles, as the experiment chose it.
pub fn source(variant: &Variant) -> &'static dyn ProfileSource {
    match variant.profile_origin {
        ProfileOrigin::Trained => &trained::Trained,
        ProfileOrigin::Attached => &attached::Attached,
        ProfileOrigin::Brought => &brought::Brought,
        ProfileOrigin::Stale { attach: false } => &from_revision::TRAINED,
        ProfileOrigin::Stale { attach: true } => &from_revision::ATTACHED,
    }
}

/// Whether any variant trains (needs training workloads).
pub fn any_trains(variants: &[&Variant]) -> bool {
    variants.iter().any(|v| source(v).trains())
}

/// The round's directories.
fn round_dirs(cx: &Context, variant: &Variant, round: usize) -> StageDirs {
    cx.workdir
        .variant_dirs(&variant.name)
        .round(variant.rounds()[round])
}
