//! BOLT, instrumented (needs no PMU): link with `--emit-relocs`, rewrite each
//! binary with `llvm-bolt -instrument`, train, merge the per-process
//! profiles with `merge-fdata`, then rewrite the freshly built binary with
//! `llvm-bolt -data=…`.
//!
//! Debian's `/usr/bin/llvm-bolt-16` is a symlink, and BOLT looks for its
//! instrumentation runtime relative to the path it was started by
//! (`/usr/lib/libbolt_rt_instr.a`, which the package does not ship). Running
//! the symlink's target, `/usr/lib/llvm-16/bin/llvm-bolt`, makes it look in
//! `/usr/lib/llvm-16/lib`, where the runtime is, without touching the system.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{bail, Context, Result};

use super::{
    find_files, no_profile_error, raw_dir, require_merged, tools, Flags, Pgo, Phase, StageDirs,
};
use crate::process::{capture_command, quote_output};

/// `llvm-bolt` from an instrumented training run.
pub struct Bolt;

const FDATA: &str = "fdata";
const MERGED_PREFIX: &str = "merged-";
const TIMEOUT: Duration = Duration::from_mins(30);

/// Layout choices, from the BOLT README's recommended optimization flags for
/// LLVM 16: ext-tsp block order (best i-cache/branch behaviour), hfsort+
/// function order (cdsort arrived in LLVM 17), hot/cold splitting, and
/// identical code folding; dyno-stats reports what changed.
const OPTIMIZE_FLAGS: &[&str] = &[
    "-reorder-blocks=ext-tsp",
    "-reorder-functions=hfsort+",
    "-split-functions",
    "-split-all-cold",
    "-split-eh",
    "-icf=1",
    "-dyno-stats",
];

fn merged_path(profile_dir: &Path, binary: &str) -> PathBuf {
    profile_dir.join(format!("{MERGED_PREFIX}{binary}.{FDATA}"))
}

/// A BOLT tool, resolved through symlinks (see the module comment).
pub fn find_tool(name: &str) -> Result<PathBuf> {
    let found = [format!("{name}-16"), format!("{name}-17"), format!("{name}-18"), name.to_owned()]
        .into_iter()
        .find(|c| tools::is_installed(c))
        .with_context(|| format!("{name} is missing, so BOLT cannot run\nhint: install it with `apt-get install -y bolt-16`"))?;
    let on_path = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .map(|d| d.join(&found))
        .find(|p| p.is_file())
        .unwrap_or_else(|| PathBuf::from(&found));
    Ok(fs_err::canonicalize(&on_path).unwrap_or(on_path))
}

fn run(tool: &Path, args: &[String], what: &str) -> Result<()> {
    let mut command = Command::new(tool);
    command.args(args);
    let out = capture_command(&mut command, TIMEOUT)
        .with_context(|| format!("running {}", tool.display()))?;
    if !out.success() {
        bail!("{what} failed:\n{}\nhint: BOLT needs binaries linked with relocations (-Wl,--emit-relocs), which afterburner adds to LDFLAGS; check that the build honours LDFLAGS", quote_output(&format!("{}\n{}", out.stdout, out.stderr)));
    }
    Ok(())
}

fn file_name(binary: &Path) -> String {
    binary
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

impl Pgo for Bolt {
    fn name(&self) -> &'static str {
        "bolt"
    }

    fn raw_extension(&self) -> &'static str {
        FDATA
    }

    fn instruments_final_code(&self) -> bool {
        true
    }

    fn instrument(&self, flags: &mut Flags, _dirs: &StageDirs) {
        flags.ldflags.push("-Wl,--emit-relocs".to_owned());
    }

    fn training_env(&self, _dirs: &StageDirs) -> Vec<(String, String)> {
        Vec::new()
    }

    fn merge(&self, dirs: &StageDirs, _binaries: &[PathBuf]) -> Result<Vec<PathBuf>> {
        // Instrumented binaries write `raw/<binary>.<pid>.fdata`.
        let mut by_binary: BTreeMap<String, Vec<PathBuf>> = BTreeMap::new();
        for file in find_files(&raw_dir(dirs), FDATA) {
            let name = file
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let stem = name.trim_end_matches(&format!(".{FDATA}"));
            let binary = stem.rsplit_once('.').map_or(stem, |(b, _pid)| b).to_owned();
            by_binary.entry(binary).or_default().push(file);
        }
        if by_binary.is_empty() {
            return Err(no_profile_error(&raw_dir(dirs), FDATA));
        }
        let tool = find_tool("merge-fdata")?;
        let mut merged = Vec::new();
        for (binary, files) in by_binary {
            let mut command = Command::new(&tool);
            command.args(&files);
            let out = capture_command(&mut command, TIMEOUT).context("running merge-fdata")?;
            if !out.success() {
                bail!(
                    "merge-fdata failed on {} profiles of {binary}:\n{}",
                    files.len(),
                    quote_output(&out.stderr)
                );
            }
            let path = merged_path(&dirs.profile, &binary);
            fs_err::write(&path, out.stdout)?;
            merged.push(path);
        }
        Ok(merged)
    }

    fn profile_files(&self, profile_dir: &Path) -> Result<Vec<PathBuf>> {
        require_merged(profile_dir, FDATA)
    }

    fn use_profile(&self, flags: &mut Flags, dirs: &StageDirs) {
        self.instrument(flags, dirs);
    }

    fn post_link(&self, phase: Phase, binaries: &[PathBuf], dirs: &StageDirs) -> Result<()> {
        if phase == Phase::Off {
            return Ok(());
        }
        let bolt = find_tool("llvm-bolt")?;
        fs_err::create_dir_all(raw_dir(dirs))?;
        for binary in binaries {
            let name = file_name(binary);
            let rewritten = binary.with_extension("bolt-tmp");
            let mut args = vec![
                binary.to_string_lossy().into_owned(),
                "-o".to_owned(),
                rewritten.to_string_lossy().into_owned(),
            ];
            match phase {
                Phase::Off => {}
                Phase::Instrument => {
                    args.push("-instrument".to_owned());
                    args.push(format!(
                        "--instrumentation-file={}",
                        raw_dir(dirs).join(&name).display()
                    ));
                    // One profile per process, so concurrent runs never clobber.
                    args.push("--instrumentation-file-append-pid".to_owned());
                }
                Phase::Use => {
                    let profile = merged_path(&dirs.profile, &name);
                    if !profile.is_file() {
                        return Err(no_profile_error(&dirs.profile, FDATA)
                            .context(format!("no BOLT profile for binary `{name}`")));
                    }
                    args.push(format!("-data={}", profile.display()));
                    args.extend(OPTIMIZE_FLAGS.iter().map(|f| (*f).to_owned()));
                }
            }
            run(
                &bolt,
                &args,
                &format!("llvm-bolt ({phase:?}) on {}", binary.display()),
            )?;
            fs_err::rename(&rewritten, binary)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relocations_are_kept_at_both_stages() {
        let dirs = StageDirs {
            build: "/b".into(),
            profile: "/p".into(),
        };
        let mut flags = Flags::default();
        Bolt.instrument(&mut flags, &dirs);
        assert_eq!(flags.ldflags, vec!["-Wl,--emit-relocs"]);
        assert_eq!(
            merged_path(Path::new("/p"), "app"),
            PathBuf::from("/p/merged-app.fdata")
        );
    }
}
