//! rustc's instrumented PGO, as cargo-pgo runs it: `-Cprofile-generate=`
//! in RUSTFLAGS (LLVM's IR instrumentation, the same runtime clang's
//! `-fprofile-generate` links), training with `LLVM_PROFILE_FILE` naming
//! one raw profile per process and binary, `llvm-profdata merge` of
//! rustc's own LLVM release ([`crate::toolchain::rustc`]) into
//! `merged-<hash>.profdata`, then `-Cprofile-use=` that file.

use std::path::PathBuf;

use anyhow::Result;

use crate::toolchain::formats::brought::Format;
use crate::toolchain::matching::Matched;
use crate::toolchain::round::{Accepts, Round};
use crate::toolchain::{raw_dir, rustc, Flags, StageDirs};

use super::clang::{
    merged_or_missing, raw_profile_env, raw_profiles, MERGED_EXTENSION, RAW_EXTENSION,
};

/// rustc's instrumented PGO round (`optimize = ["pgo"]` on a cargo
/// target).
pub struct RustPgo;

/// The `llvm-profdata` of rustc's LLVM release, as a command.
fn profdata() -> Result<String> {
    Ok(rustc::llvm_profdata()?.path.to_string_lossy().into_owned())
}

impl Round for RustPgo {
    fn name(&self) -> &'static str {
        "rust-pgo"
    }

    fn instrumentation_symbols(&self) -> &'static [&'static str] {
        // LLVM's profile runtime, which rustc links for -Cprofile-generate.
        &["__llvm_profile_"]
    }

    fn instrument(&self, flags: &mut Flags, dirs: &StageDirs) {
        flags
            .rustflags
            .push(format!("-Cprofile-generate={}", raw_dir(dirs).display()));
    }

    fn raw_extension(&self) -> &'static str {
        RAW_EXTENSION
    }

    fn merged_extension(&self) -> &'static str {
        MERGED_EXTENSION
    }

    fn accepts(&self) -> Accepts {
        Accepts {
            formats: &[Format::PROFRAW, Format::PROFDATA],
            said: ".profraw or .profdata files of rustc's LLVM release",
        }
    }

    fn matched(&self, files: &[PathBuf], binaries: &[PathBuf]) -> Result<Option<Matched>> {
        super::clang_match::matched(&profdata()?, files, binaries, true).map(Some)
    }

    fn training_env(&self, dirs: &StageDirs) -> Vec<(String, String)> {
        raw_profile_env(dirs)
    }

    fn merge(&self, dirs: &StageDirs, _binaries: &[PathBuf]) -> Result<Vec<PathBuf>> {
        let raw = raw_profiles(dirs)?;
        Ok(vec![crate::toolchain::merge::profdata_merge(
            &profdata()?,
            dirs,
            &[],
            &raw,
            MERGED_EXTENSION,
        )?])
    }

    fn use_profile(&self, flags: &mut Flags, dirs: &StageDirs) {
        flags.rustflags.push(format!(
            "-Cprofile-use={}",
            merged_or_missing(dirs).display()
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instruments_and_uses_through_rustflags_only() {
        let dirs = StageDirs {
            build: "/b".into(),
            profile: "/p".into(),
        };
        let mut flags = Flags::default();
        RustPgo.instrument(&mut flags, &dirs);
        RustPgo.use_profile(&mut flags, &dirs);
        assert_eq!(flags.rustflags[0], "-Cprofile-generate=/p/raw");
        assert!(flags.rustflags[1].starts_with("-Cprofile-use=/p/merged-"));
        assert!(flags.cflags.is_empty() && flags.ldflags.is_empty());
    }
}
