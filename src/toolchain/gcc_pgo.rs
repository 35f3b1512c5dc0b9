//! gcc's instrumented PGO: `-fprofile-generate`, training, `-fprofile-use`.
//! gcc merges counters into its `.gcda` files as each trained process exits,
//! so there is no separate merge step; `-fprofile-prefix-path` keeps the
//! file names short and relative to the build directory.

use std::path::{Path, PathBuf};

use anyhow::Result;

use super::{find_files, no_profile_error, Flags, Pgo, StageDirs};

/// Extension of gcc's profile data files.
pub const GCDA_EXTENSION: &str = "gcda";

/// gcc's `-fprofile-generate` / `-fprofile-use`.
pub struct GccPgo;

fn common(flags: &mut Flags, dirs: &StageDirs) {
    flags
        .cflags
        .push(format!("-fprofile-dir={}", dirs.profile.display()));
    flags
        .cflags
        .push(format!("-fprofile-prefix-path={}", dirs.build.display()));
}

impl Pgo for GccPgo {
    fn instrument(&self, flags: &mut Flags, dirs: &StageDirs) {
        flags.cflags.push("-fprofile-generate".to_owned());
        // Threaded targets would otherwise race on counters and corrupt them.
        flags.cflags.push("-fprofile-update=atomic".to_owned());
        common(flags, dirs);
        flags.ldflags.push("-fprofile-generate".to_owned());
    }

    fn training_env(&self, _dirs: &StageDirs) -> Vec<(String, String)> {
        Vec::new()
    }

    fn merge(&self, dirs: &StageDirs) -> Result<Vec<PathBuf>> {
        self.profile_files(&dirs.profile)
    }

    fn profile_files(&self, profile_dir: &Path) -> Result<Vec<PathBuf>> {
        let found = find_files(profile_dir, GCDA_EXTENSION);
        if found.is_empty() {
            return Err(no_profile_error(profile_dir, GCDA_EXTENSION));
        }
        Ok(found)
    }

    fn use_profile(&self, flags: &mut Flags, dirs: &StageDirs) {
        flags.cflags.push("-fprofile-use".to_owned());
        // Counters of threaded or signal-killed runs can be slightly
        // inconsistent; correct them instead of failing the build.
        flags.cflags.push("-fprofile-correction".to_owned());
        common(flags, dirs);
        // Objects that no training run reached have no profile; expected.
        flags.cflags.push("-Wno-missing-profile".to_owned());
        flags.ldflags.push("-fprofile-use".to_owned());
    }
}
