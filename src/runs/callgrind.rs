//! Where a counted run's callgrind files are kept, for `explain`:
//! `runs/<id>/profiles/<workload>/<variant>/r<round>/counter.<pid>`, one
//! file per process the run started; and those of `explain --simulate`'s
//! runs under callgrind's cache and branch simulation,
//! `runs/<id>/simulated/<workload>/<variant>/counter.<pid>`.

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
    files_in(&profile_dir(run_dir, workload, variant, round))
}

/// The folder of `explain --simulate`'s callgrind files in a run directory.
pub const SIMULATED_DIR: &str = "simulated";

/// Where the callgrind files of the simulated run of `workload` on
/// `variant` are kept.
pub fn simulation_dir(run_dir: &Path, workload: &str, variant: &str) -> PathBuf {
    run_dir.join(SIMULATED_DIR).join(workload).join(variant)
}

/// The kept callgrind files of the simulated run of `workload` on
/// `variant`, sorted; empty when there was none.
pub fn simulation_files(run_dir: &Path, workload: &str, variant: &str) -> Result<Vec<PathBuf>> {
    files_in(&simulation_dir(run_dir, workload, variant))
}

/// The files in `dir`, sorted; none when it does not exist.
fn files_in(dir: &Path) -> Result<Vec<PathBuf>> {
    if !dir.is_dir() {
        return Ok(Vec::new());
    }
    let mut files: Vec<PathBuf> = fs_err::read_dir(dir)?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    Ok(files)
}
