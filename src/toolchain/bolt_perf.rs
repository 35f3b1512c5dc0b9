//! BOLT from perf samples instead of instrumentation: the profiled build is
//! the finished code linked with `--emit-relocs`, training runs it under
//! `perf record` (`-b`, branch stacks, where the CPU has LBR: BOLT's
//! preferred input), `perf2bolt` (`llvm-bolt -aggregate-only`) turns each
//! recording into a profile of each binary, the profiles are merged per
//! binary, and the final build is rewritten by `llvm-bolt -data=…` as with
//! instrumentation.
//!
//! Without LBR, samples carry only the interrupted address (`perf2bolt
//! -nl`): BOLT learns which blocks are hot, not which branches are taken,
//! a weaker profile. `merge-fdata` 16 cannot read that format, so those
//! profiles are summed here (`no_lbr EVENT:` then `<kind> <symbol>
//! <offset> <count>` per line).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};

use super::bolt::{self, find_tool, merge_fdata, merged_path, FDATA, TIMEOUT};
use super::sampling::{self, Sampler, RAW_EXTENSION};
use super::{require_merged, weights, Flags, Pgo, Phase, StageDirs};
use crate::process::{capture_command, quote_output};

/// BOLT from `perf record` of the finished build.
pub struct BoltPerf;

/// BOLT's part in the messages about sampling.
pub const SAMPLER: Sampler = Sampler {
    what: "BOLT from perf samples (bolt_profile = \"sampled\")",
    instead: "leave bolt_profile unset (instrumented BOLT needs no PMU)",
    default_event: None,
    call_graph: false,
};

/// What perf2bolt says when a recording holds no sample of the binary.
const NOT_RECORDED: &str = "failed to match build-id";

/// Convert one recording for one binary; `None` when it holds no sample
/// of that binary.
fn convert(
    recording: &Path,
    binary: &Path,
    out: &Path,
    branch_stack: bool,
) -> Result<Option<PathBuf>> {
    let tool = find_tool("llvm-bolt")?;
    let mut command = Command::new(&tool);
    command
        .arg(binary)
        .arg("-aggregate-only")
        .arg(format!("-p={}", recording.display()))
        .arg(format!("-o={}", out.display()));
    if !branch_stack {
        command.arg("-nl");
    }
    let result = capture_command(&mut command, TIMEOUT).context("running perf2bolt")?;
    let said = format!("{}\n{}", result.stdout, result.stderr);
    if said.contains(NOT_RECORDED) {
        return Ok(None);
    }
    if !result.success() || !out.is_file() {
        bail!(
            "perf2bolt (llvm-bolt -aggregate-only) failed on {} for {}:\n{}",
            recording.display(),
            binary.display(),
            quote_output(&said)
        );
    }
    let text = fs_err::read_to_string(out)?;
    Ok(has_samples(&text).then(|| out.to_path_buf()))
}

/// Whether a BOLT profile has at least one counted location.
fn has_samples(fdata: &str) -> bool {
    fdata.lines().any(|l| {
        !l.trim().is_empty() && !l.starts_with("no_lbr") && !l.starts_with("boltedcollection")
    })
}

/// Sum `perf2bolt -nl` profiles: the same header, each location's count
/// added up.
fn sum_no_lbr(profiles: &[String]) -> Result<String, String> {
    let mut header: Option<&str> = None;
    let mut counts: BTreeMap<&str, u64> = BTreeMap::new();
    for (i, text) in profiles.iter().enumerate() {
        let mut lines = text.lines();
        let first = lines.next().unwrap_or_default();
        if !first.starts_with("no_lbr") {
            return Err(format!(
                "profile {i} is not a no-LBR profile (it starts `{first}`)"
            ));
        }
        match header {
            Some(h) if h != first => {
                return Err(format!(
                    "profiles sampled different events: `{h}` and `{first}`"
                ))
            }
            _ => header = Some(first),
        }
        for line in lines.filter(|l| !l.trim().is_empty()) {
            let (location, count) = line
                .rsplit_once(' ')
                .and_then(|(l, c)| Some((l, c.parse::<u64>().ok()?)))
                .ok_or_else(|| format!("profile {i}: unreadable line `{line}`"))?;
            *counts.entry(location).or_default() += count;
        }
    }
    let mut out = format!("{}\n", header.unwrap_or("no_lbr"));
    for (location, count) in counts {
        let _ = writeln!(out, "{location} {count}");
    }
    Ok(out)
}

impl Pgo for BoltPerf {
    fn name(&self) -> &'static str {
        "bolt-perf"
    }

    fn raw_extension(&self) -> &'static str {
        RAW_EXTENSION
    }

    fn instruments_final_code(&self) -> bool {
        true
    }

    fn instrument(&self, flags: &mut Flags, _dirs: &StageDirs) {
        flags.ldflags.push("-Wl,--emit-relocs".to_owned());
    }

    fn training_env(&self, _dirs: &StageDirs) -> Vec<(String, String)> {
        Vec::new()
    }

    fn training_prefix(&self, dirs: &StageDirs, event: Option<&str>) -> Result<Vec<String>> {
        sampling::start(dirs, event, &SAMPLER)
    }

    fn samples(&self) -> bool {
        true
    }

    fn merge(&self, dirs: &StageDirs, binaries: &[PathBuf]) -> Result<Vec<PathBuf>> {
        let hint = format!("the training workloads must run the profiled binaries ({{bin.NAME}}) long enough to be sampled; perf2bolt also finds none when the binaries changed after training (its message: \"{NOT_RECORDED}\")");
        let converted = super::merge::convert_recordings(
            dirs,
            binaries,
            (RAW_EXTENSION, FDATA),
            convert,
            &hint,
        )?;
        let mut merged = Vec::new();
        for c in converted {
            let path = merged_path(&dirs.profile, &c.binary);
            if c.branch_stack {
                merge_fdata(&weights::repeated(dirs, &c.profiles)?, &path, &c.binary)?;
            } else {
                let texts = weights::repeated(dirs, &c.profiles)?
                    .iter()
                    .map(fs_err::read_to_string)
                    .collect::<Result<Vec<_>, _>>()?;
                let sum = sum_no_lbr(&texts).map_err(|why| {
                    anyhow::anyhow!("merging the BOLT profiles of `{}`: {why}", c.binary)
                })?;
                fs_err::write(&path, sum)?;
            }
            merged.push(path);
        }
        Ok(merged)
    }

    fn profile_files(&self, profile_dir: &Path) -> Result<Vec<PathBuf>> {
        require_merged(profile_dir, FDATA)
    }

    fn use_profile(&self, flags: &mut Flags, dirs: &StageDirs) {
        self.instrument(flags, dirs);
    }

    fn post_link(&self, phase: Phase, binaries: &[PathBuf], dirs: &StageDirs) -> Result<()> {
        match phase {
            // The profiled build runs as linked: perf needs no rewrite.
            Phase::Off | Phase::Instrument => Ok(()),
            Phase::Use => bolt::optimize(binaries, dirs),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_lbr_profiles_sum_per_location() {
        let a = "no_lbr cpu-clock:\n1 main 45 3\n1 rare/1 1d 2\n".to_owned();
        let b = "no_lbr cpu-clock:\n1 main 45 4\n1 main 38 1\n".to_owned();
        let sum = sum_no_lbr(&[a.clone(), b]).unwrap();
        assert_eq!(
            sum,
            "no_lbr cpu-clock:\n1 main 38 1\n1 main 45 7\n1 rare/1 1d 2\n"
        );
        let other = "no_lbr cycles:u:\n1 main 45 1\n".to_owned();
        assert!(sum_no_lbr(&[a.clone(), other])
            .unwrap_err()
            .contains("different events"));
        assert!(sum_no_lbr(&["1 main 0 1 main 4 0 9\n".to_owned()]).is_err());
        assert!(has_samples(&a));
        assert!(!has_samples("no_lbr cpu-clock:\n"));
    }
}
