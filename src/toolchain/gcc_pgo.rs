//! gcc's instrumented PGO: `-fprofile-generate`, training, `-fprofile-use`.
//!
//! The instrumented and final builds run in different directories, yet gcc
//! names each `.gcda` after the object's absolute path. `-fprofile-prefix-path`
//! (gcc ≥ 12) strips the build directory from that name, so both stages agree
//! on the file names inside the shared `-fprofile-dir`.

use std::path::{Path, PathBuf};

use super::{Flags, StageDirs};

/// Extension of gcc's profile data files.
pub const GCDA_EXTENSION: &str = "gcda";

fn common(flags: &mut Flags, dirs: &StageDirs) {
    flags
        .cflags
        .push(format!("-fprofile-dir={}", dirs.profile.display()));
    flags
        .cflags
        .push(format!("-fprofile-prefix-path={}", dirs.build.display()));
}

pub(super) fn instrument_flags(flags: &mut Flags, dirs: &StageDirs) {
    flags.cflags.push("-fprofile-generate".to_owned());
    // Threaded targets would otherwise race on counters and corrupt them.
    flags.cflags.push("-fprofile-update=atomic".to_owned());
    common(flags, dirs);
    flags.ldflags.push("-fprofile-generate".to_owned());
}

pub(super) fn use_flags(flags: &mut Flags, dirs: &StageDirs) {
    flags.cflags.push("-fprofile-use".to_owned());
    // Counters of threaded or signal-killed runs can be slightly inconsistent;
    // correct them instead of failing the build.
    flags.cflags.push("-fprofile-correction".to_owned());
    common(flags, dirs);
    // Objects that no training run reached have no profile; that is expected.
    flags.cflags.push("-Wno-missing-profile".to_owned());
    flags.ldflags.push("-fprofile-use".to_owned());
}

/// All `.gcda` files under `dir`, sorted.
pub fn find_gcda_files(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = fs_err::read_dir(&d) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == GCDA_EXTENSION) {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}
