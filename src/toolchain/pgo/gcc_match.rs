//! gcc's instrumented profiles against the binaries they are applied to:
//! `.gcda` files carry no function names, only checksums, one file per
//! translation unit; a file matches when the instrumented binaries would
//! write a `.gcda` of that name, and its functions (and counts) with it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context as _, Result};

use crate::process::capture;
use crate::toolchain::matching::{Counts, Matched};

/// Match the `.gcda` files `files` against `binaries`.
pub(super) fn matched(files: &[PathBuf], binaries: &[PathBuf]) -> Result<Matched> {
    let (counts, unit_of) = gcda_counts(files)?;
    let written = gcda_names(binaries)?;
    let found = counts
        .keys()
        .filter(|f| unit_of.get(*f).is_some_and(|u| written.contains(u)))
        .cloned()
        .collect();
    Ok(Matched {
        method: "translation-units",
        counts,
        found,
    })
}

/// The functions of `.gcda` files, each named `<file>#<ident>` with the
/// sum of its arc counters (`gcov-dump -l`), and the file each is in.
fn gcda_counts(files: &[PathBuf]) -> Result<(Counts, BTreeMap<String, String>)> {
    let mut counts = Counts::new();
    let mut unit_of = BTreeMap::new();
    for file in files {
        let unit = file
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let path = file.to_string_lossy();
        let out = capture("gcov-dump", &["-l", &path], Duration::from_mins(2))
            .context("running gcov-dump (it comes with gcc)")?;
        let mut current: Option<String> = None;
        let mut arcs = false;
        for line in out.stdout.lines() {
            let line = line.split_once(':').map_or(line, |(_, rest)| rest).trim();
            if let Some(rest) = line.split("FUNCTION ident=").nth(1) {
                let ident = rest.split(',').next().unwrap_or_default();
                let name = format!("{unit}#{ident}");
                unit_of.insert(name.clone(), unit.clone());
                counts.entry(name.clone()).or_default();
                current = Some(name);
            } else if line.contains("COUNTERS") {
                arcs = line.contains("COUNTERS arcs");
            } else if let (Some(name), true) = (&current, arcs) {
                if let Some((_, values)) = line.split_once(": ") {
                    let sum: u64 = values
                        .split_whitespace()
                        .filter_map(|v| v.parse::<u64>().ok())
                        .sum();
                    *counts.entry(name.clone()).or_default() += sum;
                }
            }
        }
    }
    Ok((counts, unit_of))
}

/// The file names of the `.gcda` files gcc's instrumented binaries write
/// (each names its own, as a string, in its data).
fn gcda_names(binaries: &[PathBuf]) -> Result<BTreeSet<String>> {
    let mut names = BTreeSet::new();
    for binary in binaries {
        let bytes = fs_err::read(binary)?;
        for piece in bytes.split(|b| *b == 0) {
            if piece.ends_with(b".gcda") {
                let text = String::from_utf8_lossy(piece);
                let name = text.rsplit('/').next().unwrap_or(&text);
                names.insert(name.to_owned());
            }
        }
    }
    Ok(names)
}
