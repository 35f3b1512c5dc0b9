//! Go's PGO: Go's own CPU profiler needs no instrumented build and no PMU.
//! Training runs write pprof CPU profiles where `{profile}` points them;
//! `go tool pprof -proto` merges them into `merged-<hash>.pprof`; the final
//! build gets `-pgo=` that file through `GOFLAGS`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{bail, Context, Result};

use super::{find_files, no_profile_error, Flags, Pgo, StageDirs};
use crate::process::{capture_command, quote_output};
use crate::source::sha256_file;

/// `go build -pgo=FILE` from merged CPU profiles.
pub struct GoPgo;

const RAW_EXTENSION: &str = "pprof";
const MERGED_PREFIX: &str = "merged-";

/// Where training runs' `{profile}` files go.
fn raw_dir(dirs: &StageDirs) -> PathBuf {
    dirs.profile.join("raw")
}

/// The file `{profile}` names in a training run of `workload` (its directory
/// exists).
pub fn profile_path(dirs: &StageDirs, workload: &str) -> PathBuf {
    let dir = raw_dir(dirs);
    let _ = fs_err::create_dir_all(&dir);
    dir.join(format!("{workload}.{RAW_EXTENSION}"))
}

fn merged(profile_dir: &Path) -> Vec<PathBuf> {
    find_files(profile_dir, RAW_EXTENSION)
        .into_iter()
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with(MERGED_PREFIX))
        })
        .collect()
}

impl Pgo for GoPgo {
    fn instrument(&self, _flags: &mut Flags, _dirs: &StageDirs) {}

    fn training_env(&self, _dirs: &StageDirs) -> Vec<(String, String)> {
        Vec::new()
    }

    fn merge(&self, dirs: &StageDirs) -> Result<Vec<PathBuf>> {
        let raw = find_files(&raw_dir(dirs), RAW_EXTENSION);
        if raw.is_empty() {
            return Err(no_profile_error(&raw_dir(dirs), RAW_EXTENSION)
                .context("Go programs write CPU profiles only when asked: pass {profile} to the program's profiling flag in train_run (e.g. -cpuprofile {profile})"));
        }
        let staging = dirs.profile.join("merging.tmp");
        let mut command = Command::new("go");
        command
            .args(["tool", "pprof", "-proto", "-output"])
            .arg(&staging)
            .args(&raw);
        let out = capture_command(&mut command, Duration::from_mins(10))
            .context("running go tool pprof")?;
        if !out.success() {
            bail!(
                "`go tool pprof -proto` failed on {} profiles:\n{}",
                raw.len(),
                quote_output(&out.stderr)
            );
        }
        for old in merged(&dirs.profile) {
            fs_err::remove_file(old)?;
        }
        let hash = sha256_file(&staging)?;
        let target = dirs
            .profile
            .join(format!("{MERGED_PREFIX}{}.{RAW_EXTENSION}", &hash[..16]));
        fs_err::rename(&staging, &target)?;
        Ok(vec![target])
    }

    fn profile_files(&self, profile_dir: &Path) -> Result<Vec<PathBuf>> {
        let found = merged(profile_dir);
        if found.is_empty() {
            return Err(no_profile_error(profile_dir, RAW_EXTENSION));
        }
        Ok(found)
    }

    fn use_profile(&self, flags: &mut Flags, dirs: &StageDirs) {
        if let Some(profile) = merged(&dirs.profile).first() {
            flags.goflags.push(format!("-pgo={}", profile.display()));
        }
    }
}
