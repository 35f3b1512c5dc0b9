//! BOLT, instrumented (needs no PMU): link with `--emit-relocs`, rewrite each
//! binary with `llvm-bolt -instrument`, train, merge the per-process
//! profiles with `merge-fdata`, then rewrite the freshly built binary with
//! `llvm-bolt -data=…`.
//!
//! Debian's `/usr/bin/llvm-bolt-N` is a symlink, and BOLT looks for its
//! instrumentation runtime relative to the path it was started by
//! (`/usr/lib/libbolt_rt_instr.a`, which the package does not ship). Running
//! the release's own `/usr/lib/llvm-N/bin/llvm-bolt` makes it look in
//! `/usr/lib/llvm-N/lib`, where the runtime of the same release is, without
//! touching the system. Which release is found, not listed ([`super::llvm`]).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{bail, Context, Result};

use super::{find_files, no_profile_error, raw_dir, require_merged, Flags, Pgo, Phase, StageDirs};
use crate::process::{capture_command, quote_output};

/// `llvm-bolt` from an instrumented training run.
pub struct Bolt;

pub(super) const FDATA: &str = "fdata";
const MERGED_PREFIX: &str = "merged-";
pub(super) const TIMEOUT: Duration = Duration::from_mins(30);

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

pub(super) fn merged_path(profile_dir: &Path, binary: &str) -> PathBuf {
    profile_dir.join(format!("{MERGED_PREFIX}{binary}.{FDATA}"))
}

/// The oldest BOLT whose options the layout uses (`-reorder-blocks=ext-tsp`,
/// `-split-all-cold`, the instrumentation runtime beside the tool).
pub const MINIMUM: u32 = 16;

/// The LLVM release of the clang here (or apt's), whose BOLT is preferred.
fn clang_release() -> Option<u32> {
    super::clang_major_installed_or_candidate()
}

/// A BOLT tool from `/usr/lib/llvm-N/bin` (see the module comment): the
/// installed clang's release where it has BOLT, else the newest release
/// of at least [`MINIMUM`], else an unversioned tool on the PATH.
pub fn find_tool(name: &str) -> Result<PathBuf> {
    let Some(found) = found(name) else {
        bail!(
            "{name} is missing, so BOLT cannot run\nhint: {}",
            install_hint()
        );
    };
    Ok(fs_err::canonicalize(&found.path).unwrap_or(found.path))
}

/// How BOLT is installed here: the `bolt-N` package apt offers.
pub fn install_hint() -> String {
    match package() {
        Some(p) => format!("install it with `apt-get install -y {p}`"),
        None => format!("apt offers no bolt-N package here (BOLT {MINIMUM} or newer is needed): install LLVM's BOLT from apt.llvm.org or build it"),
    }
}

/// The `bolt-N` package apt would install: clang's release where apt
/// offers it, else the newest of at least [`MINIMUM`].
pub fn package() -> Option<String> {
    super::llvm::package_to_install("bolt-", clang_release()).filter(|p| {
        p.trim_start_matches("bolt-")
            .parse::<u32>()
            .is_ok_and(|m| m >= MINIMUM)
    })
}

/// Which BOLT runs, and why, for `doctor`.
pub fn chosen() -> Option<super::llvm::Chosen> {
    found("llvm-bolt")
}

/// BOLT tool `name` as [`find_tool`] chooses it (see there).
fn found(name: &str) -> Option<super::llvm::Chosen> {
    super::llvm::find(name, clang_release()).filter(|c| c.major.is_none_or(|m| m >= MINIMUM))
}

/// Run a BOLT tool; its output (stdout, then stderr) when it succeeds.
pub(super) fn run(tool: &Path, args: &[String], what: &str) -> Result<String> {
    let mut command = Command::new(tool);
    command.args(args);
    let out = capture_command(&mut command, TIMEOUT)
        .with_context(|| format!("running {}", tool.display()))?;
    if !out.success() {
        bail!("{what} failed:\n{}\nhint: BOLT needs binaries linked with relocations (-Wl,--emit-relocs), which afterburner adds to LDFLAGS; check that the build honours LDFLAGS", quote_output(&format!("{}\n{}", out.stdout, out.stderr)));
    }
    Ok(format!("{}{}", out.stdout, out.stderr))
}

/// Where the layout's `llvm-bolt` output is kept: beside the binary, so
/// `explain` can show BOLT's own statistics.
pub fn log_path(binary: &Path) -> PathBuf {
    let mut name = binary.as_os_str().to_owned();
    name.push(".bolt.log");
    PathBuf::from(name)
}

pub(super) fn file_name(binary: &Path) -> String {
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
        let mut merged = Vec::new();
        for (binary, files) in by_binary {
            let path = merged_path(&dirs.profile, &binary);
            merge_fdata(&super::weights::repeated(dirs, &files)?, &path, &binary)?;
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
        match phase {
            Phase::Off => Ok(()),
            Phase::Instrument => {
                let bolt = find_tool("llvm-bolt")?;
                fs_err::create_dir_all(raw_dir(dirs))?;
                for binary in binaries {
                    let output = raw_dir(dirs).join(file_name(binary));
                    let args = [
                        "-instrument".to_owned(),
                        format!("--instrumentation-file={}", output.display()),
                        // One profile per process, so concurrent runs never clobber.
                        "--instrumentation-file-append-pid".to_owned(),
                    ];
                    let _ = rewrite(&bolt, binary, &args, "-instrument")?;
                }
                Ok(())
            }
            Phase::Use => optimize(binaries, dirs),
        }
    }
}

/// Merge BOLT profiles of one binary with `merge-fdata` into `out`.
pub(super) fn merge_fdata(files: &[PathBuf], out: &Path, binary: &str) -> Result<()> {
    let tool = find_tool("merge-fdata")?;
    let mut command = Command::new(&tool);
    command.args(files);
    let result = capture_command(&mut command, TIMEOUT).context("running merge-fdata")?;
    if !result.success() {
        bail!(
            "merge-fdata failed on {} profiles of {binary}:\n{}",
            files.len(),
            quote_output(&result.stderr)
        );
    }
    fs_err::write(out, result.stdout)?;
    Ok(())
}

/// Rewrite `binary` in place with `llvm-bolt` and `args`; its output.
fn rewrite(bolt: &Path, binary: &Path, args: &[String], what: &str) -> Result<String> {
    let rewritten = binary.with_extension("bolt-tmp");
    let mut all = vec![
        binary.to_string_lossy().into_owned(),
        "-o".to_owned(),
        rewritten.to_string_lossy().into_owned(),
    ];
    all.extend_from_slice(args);
    let output = run(
        bolt,
        &all,
        &format!("llvm-bolt {what} on {}", binary.display()),
    )?;
    // llvm-bolt leaves its output mode 0777 whatever the umask: the
    // rewritten binary takes the linked one's mode (0755 as a rule).
    fs_err::set_permissions(&rewritten, fs_err::metadata(binary)?.permissions())?;
    fs_err::rename(&rewritten, binary)?;
    Ok(output)
}

/// Lay out each binary in place from its merged profile in `dirs.profile`.
pub(super) fn optimize(binaries: &[PathBuf], dirs: &StageDirs) -> Result<()> {
    let bolt = find_tool("llvm-bolt")?;
    for binary in binaries {
        let name = file_name(binary);
        let profile = merged_path(&dirs.profile, &name);
        if !profile.is_file() {
            // A binary training never ran (a multi-binary target's tool):
            // nothing to lay out by.
            crate::progress::warn(format_args!(
                "no BOLT profile for binary `{name}` in {} (training never ran it): left as linked",
                dirs.profile.display()
            ));
            continue;
        }
        let mut args = vec![format!("-data={}", profile.display())];
        args.extend(OPTIMIZE_FLAGS.iter().map(|f| (*f).to_owned()));
        let output = rewrite(&bolt, binary, &args, "-data")?;
        fs_err::write(log_path(binary), output)?;
    }
    Ok(())
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
