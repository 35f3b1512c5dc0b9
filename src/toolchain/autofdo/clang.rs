//! AutoFDO for clang: each recording becomes a sample profile of each
//! binary (with branch stacks through `create_llvm_prof`, without through
//! afterburner's own conversion, [`super::from_ip`]); `llvm-profdata merge
//! -sample` merges them across workloads and binaries and the final build
//! reads it with `-fprofile-sample-use=`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context as _, Result};

use super::from_ip::Dialect;
use super::{create_llvm_prof, use_merged, NO_SAMPLES_HINT, SAMPLER};
use crate::process::{capture, quote_output};
use crate::toolchain::formats::brought::Format;
use crate::toolchain::formats::gcov_afdo;
use crate::toolchain::matching::Counts;
use crate::toolchain::merge::{self, Convert};
use crate::toolchain::round::{Accepts, Round};
use crate::toolchain::sampling::{Sampler, RAW_EXTENSION};
use crate::toolchain::{llvm, Flags, StageDirs};

/// AutoFDO for clang.
pub struct AutoFdo;

const MERGED_EXTENSION: &str = "afdo";

/// Line tables the profile is mapped back to source with, in the profiled
/// and the final build alike. DWARF 4, because `create_llvm_prof` 0.19 reads
/// no profile out of clang 14's default DWARF 5; `-fdebug-info-for-profiling`
/// for the discriminators the final build keys samples by, and the
/// functions' first lines (`DW_AT_decl_line`) that `-gline-tables-only`
/// alone leaves out.
const DEBUG_FLAGS: &[&str] = &[
    "-gline-tables-only",
    "-gdwarf-4",
    "-fdebug-info-for-profiling",
];

/// clang's round: recordings with branch stacks through `create_llvm_prof`
/// (which reads LBR ranges), the others through afterburner's own
/// conversion ([`super::from_ip`], keyed for LLVM): Debian 13's
/// `create_llvm_prof` is built without LLVM support and converts nothing.
fn convert_for_clang(
    recording: &Path,
    binary: &Path,
    out: &Path,
    branch_stack: bool,
) -> Result<Option<PathBuf>> {
    let with_lbr = branch_stack.then_some(create_llvm_prof::convert as Convert);
    super::either(recording, binary, out, with_lbr, Dialect::Llvm)
}

impl Round for AutoFdo {
    fn name(&self) -> &'static str {
        "autofdo"
    }

    fn instrument(&self, flags: &mut Flags, _dirs: &StageDirs) {
        flags
            .cflags
            .extend(DEBUG_FLAGS.iter().map(|f| (*f).to_owned()));
    }

    fn sampler(&self) -> Option<&'static Sampler> {
        Some(&SAMPLER)
    }

    fn raw_extension(&self) -> &'static str {
        RAW_EXTENSION
    }

    fn merged_extension(&self) -> &'static str {
        MERGED_EXTENSION
    }

    fn accepts(&self) -> Accepts {
        Accepts {
            formats: &[Format::PERF_DATA],
            said: "perf recordings (perf.data)",
        }
    }

    fn sampled_functions(&self, files: &[PathBuf]) -> Result<Option<Counts>> {
        let mut counts = Counts::new();
        for file in files {
            clang_sample_counts(file, &mut counts)?;
        }
        Ok(Some(counts))
    }

    fn instruments_final_code(&self) -> bool {
        true
    }

    fn merge(&self, dirs: &StageDirs, binaries: &[PathBuf]) -> Result<Vec<PathBuf>> {
        let converted = merge::convert_recordings(
            dirs,
            binaries,
            (RAW_EXTENSION, MERGED_EXTENSION),
            convert_for_clang,
            NO_SAMPLES_HINT,
        )?;
        let profiles: Vec<PathBuf> = converted.into_iter().flat_map(|c| c.profiles).collect();
        Ok(vec![merge::profdata_merge(
            &llvm::find_llvm_profdata()?,
            dirs,
            &["-sample"],
            &profiles,
            MERGED_EXTENSION,
        )?])
    }

    fn use_profile(&self, flags: &mut Flags, dirs: &StageDirs) {
        use_merged(
            flags,
            dirs,
            DEBUG_FLAGS,
            (MERGED_EXTENSION, "-fprofile-sample-use"),
        );
    }
}

/// The functions of a merged sample profile, read back as text
/// (`llvm-profdata merge --sample --text`), each with its samples.
fn clang_sample_counts(file: &Path, counts: &mut Counts) -> Result<()> {
    let tool = llvm::find_llvm_profdata()?;
    let path = file.to_string_lossy();
    let out = capture(
        &tool,
        &["merge", "--sample", "--text", &path, "-o", "-"],
        Duration::from_mins(5),
    )
    .with_context(|| format!("running {tool}"))?;
    if !out.success() {
        bail!(
            "`{tool} merge --sample --text` cannot read {}:\n{}",
            file.display(),
            quote_output(&out.stderr)
        );
    }
    let functions = gcov_afdo::parse_llvm_text(&out.stdout)
        .with_context(|| format!("reading {} as text", file.display()))?;
    super::add_instances(functions, counts);
    Ok(())
}
