//! Go's PGO: Go's own CPU profiler needs no instrumented build and no PMU.
//! Training runs write pprof CPU profiles where `{profile}` points them;
//! `go tool pprof -proto` merges them into `merged-<hash>.pprof`; the final
//! build gets `-pgo=` that file through `GOFLAGS`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{bail, Context, Result};

use super::{
    find_files, merged_profiles, no_profile_error, raw_dir, require_merged, store_merged, Flags,
    Pgo, StageDirs,
};
use crate::process::{capture_command, quote_output};

/// `go build -pgo=FILE` from merged CPU profiles.
pub struct GoPgo;

const RAW_EXTENSION: &str = "pprof";

/// The file `{profile}` names in a training run of `workload` (its directory
/// exists).
pub fn profile_path(dirs: &StageDirs, workload: &str) -> PathBuf {
    let dir = raw_dir(dirs);
    let _ = fs_err::create_dir_all(&dir);
    dir.join(format!("{workload}.{RAW_EXTENSION}"))
}

impl Pgo for GoPgo {
    fn name(&self) -> &'static str {
        "go-pgo"
    }

    fn raw_extension(&self) -> &'static str {
        RAW_EXTENSION
    }

    fn instrument(&self, _flags: &mut Flags, _dirs: &StageDirs) {}

    fn training_env(&self, _dirs: &StageDirs) -> Vec<(String, String)> {
        Vec::new()
    }

    fn merge(&self, dirs: &StageDirs, _binaries: &[PathBuf]) -> Result<Vec<PathBuf>> {
        let raw = find_files(&raw_dir(dirs), RAW_EXTENSION);
        if raw.is_empty() {
            return Err(no_profile_error(&raw_dir(dirs), RAW_EXTENSION)
                .context("Go programs write CPU profiles only when asked: pass {profile} to the program's profiling flag in train_run (e.g. -cpuprofile {profile})"));
        }
        let staging = dirs.profile.join("merging.tmp");
        let mut command = Command::new(
            super::go_find::find_pgo_go().map_or_else(|| PathBuf::from("go"), |g| g.path),
        );
        command
            .args(["tool", "pprof", "-proto", "-output"])
            .arg(&staging)
            .args(super::weights::repeated(dirs, &raw)?);
        let out = capture_command(&mut command, Duration::from_mins(10))
            .context("running go tool pprof")?;
        if !out.success() {
            bail!(
                "`go tool pprof -proto` failed on {} profiles:\n{}",
                raw.len(),
                quote_output(&out.stderr)
            );
        }
        Ok(vec![store_merged(&dirs.profile, &staging, RAW_EXTENSION)?])
    }

    fn profile_files(&self, profile_dir: &Path) -> Result<Vec<PathBuf>> {
        require_merged(profile_dir, RAW_EXTENSION)
    }

    fn use_profile(&self, flags: &mut Flags, dirs: &StageDirs) {
        if let Some(profile) = merged_profiles(&dirs.profile, RAW_EXTENSION).first() {
            flags.goflags.push(format!("-pgo={}", profile.display()));
        }
    }
}
