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

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};

use super::{find_tool, keep_relocations, merge_fdata, merged_path, optimize, FDATA, TIMEOUT};
use crate::process::{capture_command, quote_output};
use crate::toolchain::formats::brought::Format;
use crate::toolchain::formats::fdata::{has_samples, sum_no_lbr};
use crate::toolchain::matching::Counts;
use crate::toolchain::merge::convert_recordings;
use crate::toolchain::round::{Accepts, Round};
use crate::toolchain::sampling::{CallGraph, Sampler, RAW_EXTENSION};
use crate::toolchain::{weights, Flags, Phase, StageDirs};

/// BOLT from `perf record` of the finished build.
pub struct BoltPerf;

/// BOLT's part in the messages about sampling.
pub const SAMPLER: Sampler = Sampler {
    what: "BOLT from perf samples (bolt_profile = \"sampled\")",
    instead: "leave bolt_profile unset (instrumented BOLT needs no PMU)",
    default_event: None,
    call_graph: CallGraph::Never,
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

impl Round for BoltPerf {
    fn name(&self) -> &'static str {
        "bolt-perf"
    }

    fn sampler(&self) -> Option<&'static Sampler> {
        Some(&SAMPLER)
    }

    fn raw_extension(&self) -> &'static str {
        RAW_EXTENSION
    }

    fn merged_extension(&self) -> &'static str {
        FDATA
    }

    fn accepts(&self) -> Accepts {
        Accepts {
            formats: &[Format::PERF_DATA],
            said: "a perf recording",
        }
    }

    fn sampled_functions(&self, files: &[PathBuf]) -> Result<Option<Counts>> {
        super::sampled_functions(files).map(Some)
    }

    fn instruments_final_code(&self) -> bool {
        true
    }

    fn instrument(&self, flags: &mut Flags, _dirs: &StageDirs) {
        keep_relocations(flags);
    }

    fn merge(&self, dirs: &StageDirs, binaries: &[PathBuf]) -> Result<Vec<PathBuf>> {
        let hint = format!("the training workloads must run the profiled binaries ({{bin.NAME}}) long enough to be sampled; perf2bolt also finds none when the binaries changed after training (its message: \"{NOT_RECORDED}\")");
        let converted = convert_recordings(dirs, binaries, (RAW_EXTENSION, FDATA), convert, &hint)?;
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

    fn use_profile(&self, flags: &mut Flags, dirs: &StageDirs) {
        self.instrument(flags, dirs);
    }

    fn post_link(&self, phase: Phase, binaries: &[PathBuf], dirs: &StageDirs) -> Result<()> {
        match phase {
            // The profiled build runs as linked: perf needs no rewrite.
            Phase::Off | Phase::Instrument => Ok(()),
            Phase::Use => optimize(binaries, dirs),
        }
    }
}
