//! The check of a round's merged profile against the binaries it is
//! applied to, before a build trusts it: the round matches its profile's
//! functions ([`Round::matched`]), the figures are kept beside the profile
//! (`match.json`, [`matching`]), a profile of another program is refused
//! and one that matches poorly warned about.

use std::path::PathBuf;

use anyhow::{bail, Result};

use super::{round_dirs, ProfileSource};
use crate::context::Context;
use crate::experiment::Variant;
use crate::progress;
use crate::toolchain::matching::{self, ProfileMatch, FOREIGN_BELOW, WARN_BELOW};
use crate::toolchain::round::Round;

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
    let pgo: &dyn Round = variant.rounds()[round];
    let dirs = round_dirs(cx, variant, round);
    let files = pgo.profile_files(&dirs.profile)?;
    let how = source.name(pgo);
    let figures = match pgo.matched(&files, binaries)? {
        Some(matched) => matching::figures(pgo.name(), how, &matched),
        None => matching::unchecked(pgo.name(), how),
    };
    matching::record(&dirs.profile, &figures)?;
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
            "the {how} profile of variant `{}` is not for this program: {}; missing hot functions: {}\nhint: {}",
            variant.name,
            figures.describe(),
            figures.missing_hot.join(", "),
            source.foreign_hint(cx)
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
