//! gcc's instrumented PGO: `-fprofile-generate`, training, `-fprofile-use`.
//! gcc's runtime merges counters into the `.gcda` files of `-fprofile-dir`
//! as each trained process exits; after each training workload afterburner
//! moves them to `raw/<workload>/`, and after the last it merges the
//! workloads with `gcov-tool merge` back where `-fprofile-use` reads them.
//! `-fprofile-prefix-path` keeps the file names short and relative to the
//! build directory.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{bail, Context, Result};

use crate::process::{capture_command, quote_output};
use crate::toolchain::formats::brought::Format;
use crate::toolchain::matching::Matched;
use crate::toolchain::round::{Accepts, Round};
use crate::toolchain::{find_files, no_profile_error, raw_dir, weights, Flags, StageDirs, RAW_DIR};

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

/// The `.gcda` files of `dir`, relative to it, leaving out `raw/`.
fn profile_files_in(dir: &Path) -> Vec<PathBuf> {
    let raw = dir.join(RAW_DIR);
    find_files(dir, GCDA_EXTENSION)
        .into_iter()
        .filter(|p| !p.starts_with(&raw))
        .filter_map(|p| p.strip_prefix(dir).ok().map(Path::to_path_buf))
        .collect()
}

fn copy_relative(from: &Path, to: &Path, relative: &Path) -> Result<()> {
    let target = to.join(relative);
    if let Some(parent) = target.parent() {
        fs_err::create_dir_all(parent)?;
    }
    fs_err::copy(from.join(relative), target)?;
    Ok(())
}

/// `gcov-tool merge a b -o out`. gcov-tool 12 copies files found only in
/// `b` but crashes (in `write_topn_counters`) on files found only in `a`,
/// so those are copied by hand and only the shared ones go through it.
pub fn merge_two(a: &Path, b: &Path, out: &Path, scratch: &Path) -> Result<()> {
    let in_b = profile_files_in(b);
    let shared = scratch.join("shared");
    for dir in [&shared, &out.to_path_buf()] {
        if dir.exists() {
            fs_err::remove_dir_all(dir)?;
        }
    }
    fs_err::create_dir_all(&shared)?;
    let mut only_in_a = Vec::new();
    for relative in profile_files_in(a) {
        if in_b.contains(&relative) {
            copy_relative(a, &shared, &relative)?;
        } else {
            only_in_a.push(relative);
        }
    }
    let mut command = Command::new("gcov-tool");
    command.arg("merge").arg(&shared).arg(b).arg("-o").arg(out);
    let result = capture_command(&mut command, Duration::from_mins(10))
        .context("running gcov-tool (it comes with gcc)")?;
    if !result.success() {
        bail!(
            "`gcov-tool merge` failed on {} and {}:\n{}",
            a.display(),
            b.display(),
            quote_output(&format!("{}{}", result.stdout, result.stderr))
        );
    }
    for relative in only_in_a {
        copy_relative(a, out, &relative)?;
    }
    Ok(())
}

/// Each workload's directory of counters as many times as its weight,
/// so that adding them weights them. Repeated, not scaled: gcc 12's
/// `gcov-tool` dies on indirect-call counters in `rewrite -s` and in
/// `merge -w` ("internal compiler error: in `__gcov_topn_counter_op`"), and
/// adds them correctly in an unweighted merge.
fn repeated(dirs: &StageDirs, workloads: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut out = Vec::with_capacity(workloads.len());
    for dir in workloads {
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let weight = weights::of_workload(dirs, &name)?;
        out.extend(std::iter::repeat_n(dir.clone(), weight as usize));
    }
    Ok(out)
}

impl Round for GccPgo {
    fn name(&self) -> &'static str {
        "gcc-pgo"
    }

    fn instrumentation_symbols(&self) -> &'static [&'static str] {
        // libgcov, linked by -fprofile-generate.
        &["__gcov_"]
    }

    fn instrument(&self, flags: &mut Flags, dirs: &StageDirs) {
        flags.cflags.push("-fprofile-generate".to_owned());
        // Threaded targets would otherwise race on counters and corrupt them.
        flags.cflags.push("-fprofile-update=atomic".to_owned());
        common(flags, dirs);
        flags.ldflags.push("-fprofile-generate".to_owned());
        // gcc's runtime links __gcov_dump and __gcov_reset only when asked:
        // with them, `afterburner profile --dump` (and train_stop = "dump")
        // can have the running program write its counters.
        flags
            .ldflags
            .extend(["-Wl,-u,__gcov_dump", "-Wl,-u,__gcov_reset"].map(str::to_owned));
    }

    fn raw_extension(&self) -> &'static str {
        GCDA_EXTENSION
    }

    fn merged_extension(&self) -> &'static str {
        GCDA_EXTENSION
    }

    fn dumps_counters(&self) -> bool {
        true
    }

    fn accepts(&self) -> Accepts {
        Accepts {
            formats: &[Format::GCDA, Format::GCDA_ARCHIVE],
            said: "a .gcda tree or a tar archive of one",
        }
    }

    fn matched(&self, files: &[PathBuf], binaries: &[PathBuf]) -> Result<Option<Matched>> {
        super::gcc_match::matched(files, binaries).map(Some)
    }

    fn collect(&self, dirs: &StageDirs, workload: &str) -> Result<()> {
        let target = raw_dir(dirs).join(workload);
        for relative in profile_files_in(&dirs.profile) {
            let to = target.join(&relative);
            if let Some(parent) = to.parent() {
                fs_err::create_dir_all(parent)?;
            }
            fs_err::rename(dirs.profile.join(&relative), to)?;
        }
        Ok(())
    }

    fn merge(&self, dirs: &StageDirs, _binaries: &[PathBuf]) -> Result<Vec<PathBuf>> {
        let mut workloads: Vec<PathBuf> = fs_err::read_dir(raw_dir(dirs))
            .map(|entries| entries.flatten().map(|e| e.path()).collect())
            .unwrap_or_default();
        workloads.retain(|w| !profile_files_in(w).is_empty());
        workloads.sort();
        let scratch = dirs.profile.join("merging.tmp");
        let workloads = repeated(dirs, &workloads)?;
        let Some((first, rest)) = workloads.split_first() else {
            return Err(no_profile_error(&dirs.profile, GCDA_EXTENSION));
        };
        let mut merged = first.clone();
        for (i, next) in rest.iter().enumerate() {
            let out = scratch.join(format!("step-{i}"));
            merge_two(&merged, next, &out, &scratch)?;
            merged = out;
        }
        for relative in profile_files_in(&merged) {
            copy_relative(&merged, &dirs.profile, &relative)?;
        }
        if scratch.exists() {
            fs_err::remove_dir_all(&scratch)?;
        }
        self.profile_files(&dirs.profile)
    }

    fn profile_files(&self, profile_dir: &Path) -> Result<Vec<PathBuf>> {
        let found: Vec<PathBuf> = profile_files_in(profile_dir)
            .into_iter()
            .map(|p| profile_dir.join(p))
            .collect();
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
