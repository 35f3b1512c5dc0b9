//! A profile trained once and shared. Which variant shares whose first
//! round is decided when the experiment is resolved
//! (`Variant::profile_donor`: the same instrumented build, trained by the
//! same runs); here it is checked on this machine — the same build inputs
//! with each variant's own directory set aside
//! ([`crate::build::share_key`]), and a profile that does not name the
//! donor's build directory — and copied. The copy records whose it is
//! (`match.json`'s `shared_from`), and the donor's check stands for it:
//! the binaries it was checked against are the same build. gcc checksums
//! a function's source path into its counters too, so a gcc sharer's
//! final build is told that source locations moved (they did, by the
//! directory) rather than failing on it; the moved functions keep their
//! profile and are counted in its `profile_mismatch`.

use std::path::Path;

use anyhow::Result;

use super::round_dirs;
use crate::context::Context;
use crate::experiment::Variant;
use crate::toolchain::{matching, Stage, RAW_DIR};

/// Why `variant` cannot share the first round's profile of `donor` on
/// this machine, if it cannot: their instrumented builds' inputs differ
/// after all, or the donor's profile names its own build directory
/// (clang names a static function by its source's path as compiled: a
/// build that compiles by absolute path, as `CMake` does, would find none
/// of them in another directory).
pub fn refused(
    cx: &Context,
    donor: (&Variant, &Path),
    variant: (&Variant, &Path),
) -> Result<Option<String>> {
    let key = |(v, tree): (&Variant, &Path)| {
        crate::build::share_key(&cx.experiment, v, Stage::Instrumented(0), tree, &cx.workdir)
    };
    if key(donor)? != key(variant)? {
        return Ok(Some(
            "its instrumented build's inputs differ from the donor's".to_owned(),
        ));
    }
    let (donor, _) = donor;
    let round = donor.rounds()[0];
    let dirs = round_dirs(cx, donor, 0);
    // As written and as the compiler's getcwd() sees it (symlinks, `..`).
    let own = cx.workdir.variant(&donor.name);
    let mut paths = vec![own.to_string_lossy().into_owned()];
    if let Ok(real) = fs_err::canonicalize(&own) {
        paths.push(real.to_string_lossy().into_owned());
    }
    for file in round.profile_files(&dirs.profile)? {
        let bytes = fs_err::read(&file)?;
        let names = |p: &String| bytes.windows(p.len()).any(|w| w == p.as_bytes());
        if paths.iter().any(names) {
            return Ok(Some(format!(
                "{} names {}'s build directory (sources compiled by absolute path)",
                file.display(),
                donor.name
            )));
        }
    }
    Ok(None)
}

/// Give `variant` round `round`'s profile of `donor`: its merged files and
/// its check, not its raw per-workload files or its markers.
pub fn share(cx: &Context, donor: &Variant, variant: &Variant, round: usize) -> Result<()> {
    let from = round_dirs(cx, donor, round).profile;
    let to = round_dirs(cx, variant, round).profile;
    if to.exists() {
        fs_err::remove_dir_all(&to)?;
    }
    copy(&from, &to, true)?;
    if let Some(mut figures) = matching::read(&to) {
        // A donor that shares names the variant that trained.
        figures.shared_from = Some(figures.shared_from.unwrap_or_else(|| donor.name.clone()));
        matching::record(&to, &figures)?;
    }
    Ok(())
}

fn copy(from: &Path, to: &Path, top: bool) -> Result<()> {
    fs_err::create_dir_all(to)?;
    for entry in fs_err::read_dir(from)? {
        let entry = entry?;
        let name = entry.file_name();
        let text = name.to_string_lossy();
        if top && (text == RAW_DIR || text.starts_with(".afterburner")) {
            continue;
        }
        let path = entry.path();
        if entry.file_type()?.is_dir() {
            copy(&path, &to.join(&name), false)?;
        } else {
            fs_err::copy(&path, to.join(&name))?;
        }
    }
    Ok(())
}
