//! Go's PGO: Go's own CPU profiler needs no instrumented build and no PMU.
//! Training runs write pprof CPU profiles where `{profile}` points them;
//! `go tool pprof -proto` merges them into `merged-<hash>.pprof`; the final
//! build gets `-pgo=` that file through `GOFLAGS`.

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use anyhow::{bail, Context, Result};

use crate::process::{capture_command, quote_output};
use crate::toolchain::formats::brought::Format;
use crate::toolchain::matching::Counts;
use crate::toolchain::round::{Accepts, Round};
use crate::toolchain::{
    find_files, no_profile_error, raw_dir, store_merged, weights, Flags, StageDirs,
};

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

impl Round for GoPgo {
    fn name(&self) -> &'static str {
        "go-pgo"
    }

    fn raw_extension(&self) -> &'static str {
        RAW_EXTENSION
    }

    fn merged_extension(&self) -> &'static str {
        super::MERGED_EXTENSION
    }

    fn accepts(&self) -> Accepts {
        Accepts {
            formats: &[Format::PPROF],
            said: "a Go CPU profile (.pprof)",
        }
    }

    fn sampled_functions(&self, files: &[PathBuf]) -> Result<Option<Counts>> {
        super::sampled_functions(files).map(Some)
    }

    fn compared_name<'a>(&self, name: &'a str) -> &'a str {
        super::go_name(name)
    }

    fn merge(&self, dirs: &StageDirs, _binaries: &[PathBuf]) -> Result<Vec<PathBuf>> {
        let raw = find_files(&raw_dir(dirs), RAW_EXTENSION);
        if raw.is_empty() {
            return Err(no_profile_error(&raw_dir(dirs), RAW_EXTENSION)
                .context("Go programs write CPU profiles only when asked: pass {profile} to the program's profiling flag in train_run (e.g. -cpuprofile {profile})"));
        }
        let staging = dirs.profile.join("merging.tmp");
        let mut command =
            Command::new(super::find_pgo_go().map_or_else(|| PathBuf::from("go"), |g| g.path));
        command
            .args(["tool", "pprof", "-proto", "-output"])
            .arg(&staging)
            .args(weights::repeated(dirs, &raw)?);
        let out = capture_command(&mut command, Duration::from_mins(10))
            .context("running go tool pprof")?;
        if !out.success() {
            bail!(
                "`go tool pprof -proto` failed on {} profiles:\n{}",
                raw.len(),
                quote_output(&out.stderr)
            );
        }
        Ok(vec![store_merged(
            &dirs.profile,
            &staging,
            super::MERGED_EXTENSION,
        )?])
    }

    fn use_profile(&self, flags: &mut Flags, dirs: &StageDirs) {
        super::use_merged(flags, dirs);
    }
}
