//! Where a counted run's callgrind files are kept, for `explain`:
//! `runs/<id>/profiles/<workload>/<variant>/r<round>/counter.<pid>`, one
//! file per process the run started.

use std::path::{Path, PathBuf};

use anyhow::Result;

/// The folder of kept callgrind files in a run directory.
pub const PROFILES_DIR: &str = "profiles";

/// Where the callgrind files of the counted run of `workload` on `variant`
/// in `round` (from 0, warmup included) are kept.
pub fn profile_dir(run_dir: &Path, workload: &str, variant: &str, round: u32) -> PathBuf {
    run_dir
        .join(PROFILES_DIR)
        .join(workload)
        .join(variant)
        .join(format!("r{round:03}"))
}

/// The kept callgrind files of one counted run, sorted; empty when the run
/// kept none (a run recorded before files were kept, or with perf).
pub fn profile_files(
    run_dir: &Path,
    workload: &str,
    variant: &str,
    round: u32,
) -> Result<Vec<PathBuf>> {
    let dir = profile_dir(run_dir, workload, variant, round);
    if !dir.is_dir() {
        return Ok(Vec::new());
    }
    let mut files: Vec<PathBuf> = fs_err::read_dir(&dir)?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    Ok(files)
}
