//! AutoFDO: a sampled profile instead of an instrumented one. The profiled
//! build is the finished code plus line tables; training runs it under
//! `perf record` (branch stacks, `-b`, where the CPU has LBR);
//! `create_llvm_prof` turns each recording into a sample profile for each
//! binary; `llvm-profdata merge -sample` merges them across workloads and
//! binaries; the final build reads it with `-fprofile-sample-use=`.
//!
//! Sampling needs a PMU. Where perf has none (most VMs) the variant is
//! refused, saying so, unless it names a software event itself
//! (`sample_event = "cpu-clock"`): timer samples give a weaker profile with
//! no branch or call-target data, but exercise the whole path.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{bail, Context, Result};

use super::sampling::{self, Sampler, RAW_EXTENSION};
use super::{merged_profiles, require_merged, Compiler, Flags, Pgo, StageDirs};
use crate::process::{capture_command, quote_output};

/// Why `autofdo` is refused with gcc here.
pub const GCC_REFUSAL: &str = "AutoFDO with gcc needs a create_gcov that writes gcc's current profile format; Debian 12's autofdo 0.19 does not (gcc 12 rejects its profile's version, and crashes on one written with --gcov_version=2); use compiler = \"clang\" for autofdo, or `pgo` with gcc";

/// AutoFDO for clang.
pub struct AutoFdo;

/// The AutoFDO implementation of `compiler` (clang's; the others are
/// refused when the experiment is read).
pub fn for_compiler(_compiler: Compiler) -> &'static dyn Pgo {
    &AutoFdo
}

const MERGED_EXTENSION: &str = "afdo";

/// Line tables the profile is mapped back to source with, in the profiled
/// and the final build alike. DWARF 4, because `create_llvm_prof` 0.19 reads
/// no profile out of clang 14's default DWARF 5.
const DEBUG_FLAGS: &[&str] = &[
    "-gline-tables-only",
    "-gdwarf-4",
    "-fdebug-info-for-profiling",
];

const TIMEOUT: Duration = Duration::from_mins(10);

/// AutoFDO's part in the messages about sampling.
pub const SAMPLER: Sampler = Sampler {
    what: "AutoFDO",
    instead: "use optimize = [\"pgo\"] (instrumented: needs no PMU), or `bolt` (instrumented too)",
};

fn converter() -> Result<&'static str> {
    if super::tools::is_installed("create_llvm_prof") {
        Ok("create_llvm_prof")
    } else {
        bail!("create_llvm_prof is missing, so perf recordings cannot become a profile\nhint: install it with `apt-get install -y autofdo`")
    }
}

/// Convert one recording for one binary; `None` when it holds no sample of
/// that binary.
fn convert(
    recording: &Path,
    binary: &Path,
    out: &Path,
    branch_stack: bool,
) -> Result<Option<PathBuf>> {
    let mut command = Command::new(converter()?);
    command
        .arg(format!("--binary={}", binary.display()))
        .arg(format!("--profile={}", recording.display()))
        .arg(format!("--out={}", out.display()))
        .arg(format!("--use_lbr={branch_stack}"))
        // Text: create_llvm_prof 0.19's binary writer fails on some
        // daemons ("Truncated function name table"); llvm-profdata reads
        // the text form and merges it into the binary one.
        .arg("--format=text")
        // glog would otherwise leave log files in /tmp on every call.
        .arg("--logtostderr");
    let result = capture_command(&mut command, TIMEOUT).context("running create_llvm_prof")?;
    if !result.success() {
        bail!(
            "create_llvm_prof failed on {} for {}:\n{}",
            recording.display(),
            binary.display(),
            quote_output(&result.stderr)
        );
    }
    let text = fs_err::read(out)?;
    let (clean, dropped) = drop_garbled_callsites(&String::from_utf8_lossy(&text));
    if dropped > 0 {
        crate::progress::info(format_args!(
            "{}: left out {dropped} inlined call site(s) whose name create_llvm_prof garbled",
            out.display()
        ));
        fs_err::write(out, clean)?;
    }
    Ok(has_samples(out)?.then(|| out.to_path_buf()))
}

/// `create_llvm_prof` 0.19 sometimes writes an inlined call site's name
/// as bytes from nowhere (`3: P\u{fffd}D\u{fffd}U  P\u{fffd}A:0`, seen
/// on a forking daemon recorded over its whole life), which
/// `llvm-profdata` then refuses. Such a call site, and everything nested
/// under it, is left out; the count of those left out is returned.
/// In the text format a body line is `OFFSET: COUNT [TARGET:COUNT]*` and
/// a call site `OFFSET: NAME:TOTAL`, each nested one space deeper.
fn drop_garbled_callsites(text: &str) -> (String, usize) {
    let mut out = String::with_capacity(text.len());
    let mut dropped = 0;
    let mut skip_deeper_than: Option<usize> = None;
    for line in text.lines() {
        let depth = line.len() - line.trim_start_matches(' ').len();
        if let Some(limit) = skip_deeper_than {
            if depth > limit {
                continue;
            }
            skip_deeper_than = None;
        }
        if depth > 0 && is_garbled_callsite(line.trim_start()) {
            dropped += 1;
            skip_deeper_than = Some(depth);
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    (out, dropped)
}

/// Whether `line` (indentation removed) is a call site whose name is not
/// a symbol: a symbol is printable ASCII without spaces.
fn is_garbled_callsite(line: &str) -> bool {
    let Some((_, rest)) = line.split_once(": ") else {
        return false;
    };
    if rest
        .split_whitespace()
        .next()
        .is_some_and(|w| w.parse::<u64>().is_ok())
    {
        return false; // a body line: a count first
    }
    let name = rest.rsplit_once(':').map_or(rest, |(name, _)| name);
    name.is_empty() || !name.chars().all(|c| c.is_ascii_graphic())
}

/// Whether a sample profile names at least one function with samples.
fn has_samples(profile: &Path) -> Result<bool> {
    if !profile.is_file() {
        return Ok(false);
    }
    let tool = super::find_llvm_profdata()?;
    let mut command = Command::new(tool);
    command.args(["show", "--sample"]).arg(profile);
    let result = capture_command(&mut command, TIMEOUT).context("running llvm-profdata show")?;
    Ok(result.success() && result.stdout.contains("Function: "))
}

impl Pgo for AutoFdo {
    fn name(&self) -> &'static str {
        "autofdo"
    }

    fn instrument(&self, flags: &mut Flags, _dirs: &StageDirs) {
        flags
            .cflags
            .extend(DEBUG_FLAGS.iter().map(|f| (*f).to_owned()));
    }

    fn training_env(&self, _dirs: &StageDirs) -> Vec<(String, String)> {
        Vec::new()
    }

    fn training_prefix(&self, dirs: &StageDirs, event: Option<&str>) -> Result<Vec<String>> {
        sampling::start(dirs, event, &SAMPLER)
    }

    fn raw_extension(&self) -> &'static str {
        RAW_EXTENSION
    }

    fn instruments_final_code(&self) -> bool {
        true
    }

    fn merge(&self, dirs: &StageDirs, binaries: &[PathBuf]) -> Result<Vec<PathBuf>> {
        let converted = super::merge::convert_recordings(
            dirs,
            binaries,
            (RAW_EXTENSION, MERGED_EXTENSION),
            convert,
            "the training workloads must run the profiled binaries ({bin.NAME}) long enough to be sampled (perf samples about 4000 times a second)",
        )?;
        let profiles: Vec<PathBuf> = converted.into_iter().flat_map(|c| c.profiles).collect();
        Ok(vec![super::merge::profdata_merge(
            dirs,
            &["-sample"],
            &profiles,
            MERGED_EXTENSION,
        )?])
    }

    fn profile_files(&self, profile_dir: &Path) -> Result<Vec<PathBuf>> {
        require_merged(profile_dir, MERGED_EXTENSION)
    }

    fn use_profile(&self, flags: &mut Flags, dirs: &StageDirs) {
        flags
            .cflags
            .extend(DEBUG_FLAGS.iter().map(|f| (*f).to_owned()));
        let merged = merged_profiles(&dirs.profile, MERGED_EXTENSION)
            .into_iter()
            .next()
            .unwrap_or_else(|| {
                dirs.profile
                    .join(format!("merged-missing.{MERGED_EXTENSION}"))
            });
        let option = format!("-fprofile-sample-use={}", merged.display());
        flags.cflags.push(option.clone());
        flags.ldflags.push(option);
    }
}

#[cfg(test)]
mod tests {
    /// The recording of a forking daemon's whole life that
    /// `create_llvm_prof` 0.19 wrote with a garbled inlined name.
    #[test]
    fn a_garbled_inlined_call_site_is_left_out_with_what_it_nests() {
        let text = "startup_burn:1965:0\n 1: 0\n 5.3: 1657\n 3: P\u{fffd}D\u{fffd}U  P\u{fffd}A:0\n  3: 0\n  4: 0\n 6: 303\n 7: helper:40\n  1: 40\nmain:10:1\n 1: 1\n";
        let (clean, dropped) = super::drop_garbled_callsites(text);
        assert_eq!(dropped, 1);
        assert_eq!(
            clean,
            "startup_burn:1965:0\n 1: 0\n 5.3: 1657\n 6: 303\n 7: helper:40\n  1: 40\nmain:10:1\n 1: 1\n"
        );
    }
}
