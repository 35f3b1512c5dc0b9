//! The steps of making one profile from training's files that several
//! kinds share: converting each perf recording for each binary (AutoFDO's
//! `create_llvm_prof`, BOLT's `perf2bolt`), and `llvm-profdata merge` into
//! one profile named after its content (clang's PGO, AutoFDO).

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context as _, Result};

use super::{find_files, no_profile_error, raw_dir, sampling, store_merged, weights, StageDirs};
use crate::process::{capture, quote_output};

/// Converts one recording (`recording`) for one binary into `out`, with or
/// without branch stacks; `Ok(None)` when the recording holds no sample of
/// that binary.
pub(super) type Convert = fn(&Path, &Path, &Path, bool) -> Result<Option<PathBuf>>;

/// A binary's converted profiles, one per recording that sampled it.
pub(super) struct Converted {
    /// The binary's file name.
    pub binary: String,
    pub profiles: Vec<PathBuf>,
    /// Whether the recordings hold branch stacks (LBR).
    pub branch_stack: bool,
}

/// Convert every training recording (`*.<raw_extension>` under
/// `raw/<workload>/`) for every binary into
/// `converted/<workload>/<i>-<binary>.<extension>` (the workload's weight
/// follows its path: [`super::weights`]). Binaries no
/// recording sampled are left out; when that is all of them, fails with
/// `hint` (why a recording may miss them).
pub(super) fn convert_recordings(
    dirs: &StageDirs,
    binaries: &[PathBuf],
    (raw_extension, extension): (&str, &str),
    convert: Convert,
    hint: &str,
) -> Result<Vec<Converted>> {
    let recordings = find_files(&raw_dir(dirs), raw_extension);
    if recordings.is_empty() {
        return Err(no_profile_error(&raw_dir(dirs), raw_extension));
    }
    let branch_stack = sampling::recorded_branch_stacks(dirs, &recordings);
    let converted = dirs.profile.join(weights::CONVERTED_DIR);
    let mut out = Vec::new();
    for binary in binaries {
        let name = binary
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mut profiles = Vec::new();
        for (i, recording) in recordings.iter().enumerate() {
            let dir = converted.join(weights::workload_of(dirs, recording).unwrap_or_default());
            fs_err::create_dir_all(&dir)?;
            let file = dir.join(format!("{i}-{name}.{extension}"));
            profiles.extend(convert(recording, binary, &file, branch_stack)?);
        }
        if !profiles.is_empty() {
            out.push(Converted {
                binary: name,
                profiles,
                branch_stack,
            });
        }
    }
    if out.is_empty() {
        bail!(
            "perf recorded {} training runs in {}, but none holds a sample of the binaries ({})\nhint: {hint}",
            recordings.len(),
            raw_dir(dirs).display(),
            binaries
                .iter()
                .map(|b| b.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    Ok(out)
}

/// `llvm-profdata merge <options> -o … <inputs>` into this round's profile
/// directory, each input weighted by its workload's weight
/// (`--weighted-input=W,FILE`), stored as `merged-<hash>.<extension>`;
/// returns that file. `tool` is the `llvm-profdata` of the compiler's
/// LLVM release.
pub(super) fn profdata_merge(
    tool: &str,
    dirs: &StageDirs,
    options: &[&str],
    inputs: &[PathBuf],
    extension: &str,
) -> Result<PathBuf> {
    let staging = dirs.profile.join("merging.tmp");
    let mut args: Vec<String> = std::iter::once("merge")
        .chain(options.iter().copied())
        .chain(["-o"])
        .map(str::to_owned)
        .collect();
    args.push(staging.to_string_lossy().into_owned());
    for (weight, input) in weights::each(dirs, inputs)? {
        args.push(if weight == 1 {
            input.to_string_lossy().into_owned()
        } else {
            format!("--weighted-input={weight},{}", input.display())
        });
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out =
        capture(tool, &args, Duration::from_mins(10)).with_context(|| format!("running {tool}"))?;
    if !out.success() {
        bail!(
            "`{tool} merge {}` failed on {} profiles:\n{}",
            options.join(" "),
            inputs.len(),
            quote_output(&out.stderr)
        );
    }
    store_merged(&dirs.profile, &staging, extension)
}
