//! Profiles brought from elsewhere (`profile =` on a variant): the files
//! are laid out where training would have left its own — each under
//! `raw/brought-<i>/` with its weight — and merged by the round's own
//! merge, so a brought profile is read exactly as a trained one. An
//! archive unpacks through [`crate::toolchain::formats::untrusted_tar`] only; a
//! file its reader cannot read is named and left out, and only when none
//! is left is that an error.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Result};

use super::{round_dirs, ProfileSource};
use crate::context::Context;
use crate::experiment::Variant;
use crate::progress;
use crate::toolchain::formats::brought::{self, BroughtFile, Format};
use crate::toolchain::round::Round;
use crate::toolchain::{self, Stage};

/// Files named by the variant's `profile`.
pub struct Brought;

impl ProfileSource for Brought {
    fn name(&self, _round: &dyn Round) -> &'static str {
        "brought"
    }

    fn trains(&self) -> bool {
        false
    }

    fn foreign_hint(&self, cx: &Context) -> String {
        format!("bring a profile collected from this program's binaries (the files named by `profile` in {}), or drop `profile` to train it here", cx.experiment.file.display())
    }

    fn key(&self, _cx: &Context, variant: &Variant, instrumented_key: &str) -> Result<String> {
        use sha2::{Digest, Sha256};
        let mut hasher = Sha256::new();
        hasher.update(instrumented_key.as_bytes());
        hasher.update(b"\nbrought\n");
        hasher.update(brought::digest(&variant.brought)?.as_bytes());
        Ok(crate::digest::hex(&hasher.finalize()))
    }

    fn make(&self, cx: &Context, variant: &Variant, round: usize) -> Result<Vec<PathBuf>> {
        let pgo = variant.rounds()[round];
        let dirs = round_dirs(cx, variant, round);
        if dirs.profile.exists() {
            fs_err::remove_dir_all(&dirs.profile)?;
        }
        let raw = toolchain::raw_dir(&dirs);
        fs_err::create_dir_all(&raw)?;
        let mut usable = 0;
        for (i, file) in variant.brought.iter().enumerate() {
            let workload = format!("brought-{i}");
            let into = raw.join(&workload);
            usable += lay_out(file, &into, pgo.raw_extension())?;
            toolchain::weights::record(&dirs, &workload, file.weight)?;
        }
        if usable == 0 {
            bail!(
                "no usable profile among the files variant `{}` brings ({})\nhint: the warnings above say why each was left out; bring files this machine's tools can read (clang {}, gcc {})",
                variant.name,
                variant.brought.iter().map(|f| f.path.display().to_string()).collect::<Vec<_>>().join(", "),
                "of the same LLVM version or older",
                "of the same major version"
            );
        }
        let bindings = cx.bindings(variant, Stage::Instrumented(round))?;
        let binaries: Vec<PathBuf> = bindings.binaries.values().cloned().collect();
        let files = pgo.merge(&dirs, &binaries)?.len();
        progress::info(format_args!(
            "profile of {}: {usable} brought file(s) merged into {files} in {}",
            variant.name,
            dirs.profile.display()
        ));
        for file in variant
            .brought
            .iter()
            .filter(|f| f.format == Format::PERF_DATA)
        {
            warn_on_other_builds(file, &binaries);
        }
        Ok(binaries)
    }
}

/// A perf recording holds samples by address: of another build of a
/// binary (same name, another build-id) they land on whatever this build
/// has there. Warn, naming both build-ids; nothing to say when either is
/// unknown.
fn warn_on_other_builds(file: &BroughtFile, binaries: &[PathBuf]) {
    let recorded = recorded_build_ids(&file.path);
    for binary in binaries {
        let Some(name) = binary.file_name().map(|n| n.to_string_lossy().into_owned()) else {
            continue;
        };
        let Some(this) = build_id(binary) else {
            continue;
        };
        for (id, path) in &recorded {
            if Path::new(path)
                .file_name()
                .is_some_and(|n| n.to_string_lossy() == name)
                && *id != this
            {
                progress::warn(format_args!(
                    "brought recording {} sampled another build of `{name}` (build-id {id}, this build's is {this}): its samples are placed by address in this build's code, where other code may be\nhint: bring a recording of the binary this experiment builds, or its converted profile (a gcc .afdo) made where it ran",
                    file.path.display()
                ));
            }
        }
    }
}

/// The build-ids a perf recording names (`perf buildid-list`): (id, path).
fn recorded_build_ids(recording: &Path) -> Vec<(String, String)> {
    let text = recording.to_string_lossy();
    let Ok(out) = crate::process::capture(
        "perf",
        &["buildid-list", "-i", &text],
        Duration::from_mins(1),
    ) else {
        return Vec::new();
    };
    out.stdout
        .lines()
        .filter_map(|l| l.split_once(' '))
        .map(|(id, path)| (id.to_owned(), path.trim().to_owned()))
        .collect()
}

/// A binary's GNU build-id (`readelf -n`), `None` when it has none.
fn build_id(binary: &Path) -> Option<String> {
    let text = binary.to_string_lossy();
    let out = crate::process::capture("readelf", &["-n", &text], Duration::from_mins(1)).ok()?;
    out.stdout
        .lines()
        .find_map(|l| l.trim().strip_prefix("Build ID: "))
        .map(|id| id.trim().to_owned())
}

/// Copy (or unpack) one brought entry into `into`, each usable file where
/// its format lays it out; returns how many are usable.
fn lay_out(file: &BroughtFile, into: &Path, extension: &str) -> Result<usize> {
    fs_err::create_dir_all(into)?;
    let scratch = into.join("unpacked.tmp");
    let parts = file.format.parts(&file.path, &scratch)?;
    let mut usable = 0;
    for (j, part) in parts.files.iter().enumerate() {
        let Some(format) = file.format.part_format(part) else {
            continue;
        };
        if let Err(why) = readable(format, part) {
            progress::warn(format_args!(
                "brought profile {} is left out: {why}",
                part.display()
            ));
            continue;
        }
        let target = format.target(into, parts.tree.as_deref(), part, j, extension);
        if let Some(parent) = target.parent() {
            fs_err::create_dir_all(parent)?;
        }
        fs_err::copy(part, &target)?;
        usable += 1;
    }
    if scratch.exists() {
        fs_err::remove_dir_all(&scratch)?;
    }
    Ok(usable)
}

/// Whether the tool that will read `path` can: `Err` says why not.
fn readable(format: Format, path: &Path) -> Result<(), String> {
    let size = fs_err::metadata(path).map_err(|e| e.to_string())?.len();
    if size > brought::MAX_FILE_BYTES {
        return Err(format!(
            "{size} bytes, more than {}",
            brought::MAX_FILE_BYTES
        ));
    }
    format.readable(path, size)
}
