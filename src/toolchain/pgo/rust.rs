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
use crate::toolchain::{
    find_files, merged_profiles, no_profile_error, raw_dir, rustc, Flags, StageDirs,
};

/// rustc's instrumented PGO round (`optimize = ["pgo"]` on a cargo
/// target).
pub struct RustPgo;

const RAW_EXTENSION: &str = "profraw";
const MERGED_EXTENSION: &str = "profdata";

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
        let pattern = raw_dir(dirs).join(format!("%p-%m.{RAW_EXTENSION}"));
        vec![(
            "LLVM_PROFILE_FILE".to_owned(),
            pattern.to_string_lossy().into_owned(),
        )]
    }

    fn merge(&self, dirs: &StageDirs, _binaries: &[PathBuf]) -> Result<Vec<PathBuf>> {
        let raw = find_files(&raw_dir(dirs), RAW_EXTENSION);
        if raw.is_empty() {
            return Err(no_profile_error(&raw_dir(dirs), RAW_EXTENSION));
        }
        Ok(vec![crate::toolchain::merge::profdata_merge(
            &profdata()?,
            dirs,
            &[],
            &raw,
            MERGED_EXTENSION,
        )?])
    }

    fn use_profile(&self, flags: &mut Flags, dirs: &StageDirs) {
        // Training checked that the profile exists; name a missing one so
        // rustc's own error says what it looked for.
        let merged = merged_profiles(&dirs.profile, MERGED_EXTENSION)
            .into_iter()
            .next()
            .unwrap_or_else(|| {
                dirs.profile
                    .join(format!("merged-missing.{MERGED_EXTENSION}"))
            });
        flags
            .rustflags
            .push(format!("-Cprofile-use={}", merged.display()));
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
