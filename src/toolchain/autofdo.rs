//! AutoFDO: a sampled profile instead of an instrumented one. The profiled
//! build is the finished code plus line tables; training runs it under
//! `perf record` (branch stacks, `-b`, where the CPU has LBR);
//! `create_llvm_prof` turns each recording into a sample profile for each
//! binary; `llvm-profdata merge -sample` merges them across workloads and
//! binaries; the final build reads it with `-fprofile-sample-use=`.
//!
//! Sampling needs a PMU. Where perf has none (most VMs) the variant is
//! refused, saying so, unless it names a software event itself
//! (`sample_event = "cpu-clock"`): timer samples give a weaker profile with
//! no branch or call-target data, but exercise the whole path.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use anyhow::{bail, Context, Result};

use super::{
    find_files, merged_profiles, no_profile_error, raw_dir, require_merged, store_merged, Compiler,
    Flags, Pgo, StageDirs,
};
use crate::process::{capture_command, quote_output};

/// Why `autofdo` is refused with gcc here.
pub const GCC_REFUSAL: &str = "AutoFDO with gcc needs a create_gcov that writes gcc's current profile format; Debian 12's autofdo 0.19 does not (gcc 12 rejects its profile's version, and crashes on one written with --gcov_version=2); use compiler = \"clang\" for autofdo, or `pgo` with gcc";

/// AutoFDO for clang.
pub struct AutoFdo;

/// The AutoFDO implementation of `compiler` (clang's; the others are
/// refused when the experiment is read).
pub fn for_compiler(_compiler: Compiler) -> &'static dyn Pgo {
    &AutoFdo
}

const RAW_EXTENSION: &str = "perfdata";
const MERGED_EXTENSION: &str = "afdo";
/// Written beside the raw recordings: how they were sampled.
const SAMPLING_FILE: &str = "sampling.txt";

/// Line tables the profile is mapped back to source with, in the profiled
/// and the final build alike. DWARF 4, because `create_llvm_prof` 0.19 reads
/// no profile out of clang 14's default DWARF 5.
const DEBUG_FLAGS: &[&str] = &[
    "-gline-tables-only",
    "-gdwarf-4",
    "-fdebug-info-for-profiling",
];

const TIMEOUT: Duration = Duration::from_mins(10);

/// How training runs are sampled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sampling {
    /// The perf event.
    pub event: String,
    /// Whether each sample carries a branch stack (LBR).
    pub branch_stack: bool,
}

/// What this machine's perf can do, probed once.
fn machine() -> (bool, bool) {
    static PROBED: OnceLock<(bool, bool)> = OnceLock::new();
    *PROBED.get_or_init(|| {
        (
            crate::env::perf_counts_instructions(),
            crate::env::has_branch_stacks(),
        )
    })
}

/// How to sample: the variant's own event if it names one, else hardware
/// cycles with branch stacks where the CPU has LBR. The error says why the
/// machine cannot, and what works instead.
pub fn sampling(event: Option<&str>) -> Result<Sampling, String> {
    let (counters, lbr) = machine();
    let chosen = choose(event, counters, lbr)?;
    can_record(&chosen)?;
    Ok(chosen)
}

/// Whether perf may record `sampling` here at all (a container's seccomp
/// or `perf_event_paranoid` may forbid it even where the CPU could).
fn can_record(sampling: &Sampling) -> Result<(), String> {
    let mut command = Command::new("perf");
    command.args(["record", "-q", "-e", &sampling.event]);
    if sampling.branch_stack {
        command.arg("-b");
    }
    command.args(["-o", "/dev/null", "--", "true"]);
    match capture_command(&mut command, Duration::from_secs(30)) {
        Ok(out) if out.success() => Ok(()),
        Ok(out) => Err(format!(
            "perf cannot record `{}` here:\n{}\nhint: check /proc/sys/kernel/perf_event_paranoid (and a container's seccomp profile), or use optimize = [\"pgo\"], which needs no perf",
            sampling.event,
            quote_output(out.stderr.trim())
        )),
        Err(e) => Err(format!(
            "perf did not run ({e})\nhint: install it with `apt-get install -y linux-perf`"
        )),
    }
}

fn choose(event: Option<&str>, counters: bool, lbr: bool) -> Result<Sampling, String> {
    if let Some(event) = event {
        let software = ["cpu-clock", "task-clock"]
            .iter()
            .any(|s| event.starts_with(s));
        return Ok(Sampling {
            event: event.to_owned(),
            branch_stack: lbr && !software,
        });
    }
    if !counters {
        return Err("AutoFDO samples the CPU's hardware events, and perf finds no hardware counters on this machine (no PMU, as in most VMs), let alone LBR branch stacks\nhint: use optimize = [\"pgo\"] (instrumented: needs no PMU), or `bolt` (instrumented too); to try the AutoFDO path anyway on timer samples (a weaker profile, no branch data) set sample_event = \"cpu-clock\" on the variant".to_owned());
    }
    Ok(Sampling {
        event: "cycles:u".to_owned(),
        branch_stack: lbr,
    })
}

/// The `perf` words that record one process tree into `raw/<pid>.perfdata`.
fn record_prefix(sampling: &Sampling, raw: &Path) -> Vec<String> {
    let branch = if sampling.branch_stack { " -b" } else { "" };
    vec![
        "sh".to_owned(),
        "-c".to_owned(),
        format!(
            "exec perf record -q -e {}{branch} -o \"$0/$$.{RAW_EXTENSION}\" -- \"$@\"",
            sampling.event
        ),
        raw.to_string_lossy().into_owned(),
    ]
}

fn converter() -> Result<&'static str> {
    if super::tools::is_installed("create_llvm_prof") {
        Ok("create_llvm_prof")
    } else {
        bail!("create_llvm_prof is missing, so perf recordings cannot become a profile\nhint: install it with `apt-get install -y autofdo`")
    }
}

/// Convert one recording for one binary; `None` when it holds no sample of
/// that binary.
fn convert(
    recording: &Path,
    binary: &Path,
    out: &Path,
    branch_stack: bool,
) -> Result<Option<PathBuf>> {
    let mut command = Command::new(converter()?);
    command
        .arg(format!("--binary={}", binary.display()))
        .arg(format!("--profile={}", recording.display()))
        .arg(format!("--out={}", out.display()))
        .arg(format!("--use_lbr={branch_stack}"))
        // glog would otherwise leave log files in /tmp on every call.
        .arg("--logtostderr");
    let result = capture_command(&mut command, TIMEOUT).context("running create_llvm_prof")?;
    if !result.success() {
        bail!(
            "create_llvm_prof failed on {} for {}:\n{}",
            recording.display(),
            binary.display(),
            quote_output(&result.stderr)
        );
    }
    Ok(has_samples(out)?.then(|| out.to_path_buf()))
}

/// Whether a sample profile names at least one function with samples.
fn has_samples(profile: &Path) -> Result<bool> {
    if !profile.is_file() {
        return Ok(false);
    }
    let tool = super::find_llvm_profdata()?;
    let mut command = Command::new(tool);
    command.args(["show", "--sample"]).arg(profile);
    let result = capture_command(&mut command, TIMEOUT).context("running llvm-profdata show")?;
    Ok(result.success() && result.stdout.contains("Function: "))
}

impl Pgo for AutoFdo {
    fn name(&self) -> &'static str {
        "autofdo"
    }

    fn instrument(&self, flags: &mut Flags, _dirs: &StageDirs) {
        flags
            .cflags
            .extend(DEBUG_FLAGS.iter().map(|f| (*f).to_owned()));
    }

    fn training_env(&self, _dirs: &StageDirs) -> Vec<(String, String)> {
        Vec::new()
    }

    fn training_prefix(&self, dirs: &StageDirs, event: Option<&str>) -> Result<Vec<String>> {
        let sampling = sampling(event).map_err(anyhow::Error::msg)?;
        let raw = raw_dir(dirs);
        fs_err::create_dir_all(&raw)?;
        fs_err::write(
            raw.join(SAMPLING_FILE),
            format!(
                "{} branch_stack={}\n",
                sampling.event, sampling.branch_stack
            ),
        )?;
        Ok(record_prefix(&sampling, &raw))
    }

    fn raw_extension(&self) -> &'static str {
        RAW_EXTENSION
    }

    fn instruments_final_code(&self) -> bool {
        true
    }

    fn merge(&self, dirs: &StageDirs, binaries: &[PathBuf]) -> Result<Vec<PathBuf>> {
        let raw = find_files(&raw_dir(dirs), RAW_EXTENSION);
        if raw.is_empty() {
            return Err(no_profile_error(&raw_dir(dirs), RAW_EXTENSION));
        }
        let branch_stack = fs_err::read_to_string(raw_dir(dirs).join(SAMPLING_FILE))
            .is_ok_and(|s| s.contains("branch_stack=true"));
        let converted = dirs.profile.join("converted");
        fs_err::create_dir_all(&converted)?;
        let mut profiles = Vec::new();
        for (i, recording) in raw.iter().enumerate() {
            for binary in binaries {
                let name = binary.file_name().unwrap_or_default().to_string_lossy();
                let out = converted.join(format!("{i}-{name}.{MERGED_EXTENSION}"));
                profiles.extend(convert(recording, binary, &out, branch_stack)?);
            }
        }
        if profiles.is_empty() {
            bail!(
                "perf recorded {} training runs in {}, but none holds a sample of the binaries ({})\nhint: the training workloads must run the profiled binaries ({{bin.NAME}}) long enough to be sampled (perf samples about 4000 times a second)",
                raw.len(),
                raw_dir(dirs).display(),
                binaries.iter().map(|b| b.display().to_string()).collect::<Vec<_>>().join(", ")
            );
        }
        let tool = super::find_llvm_profdata()?;
        let staging = dirs.profile.join("merging.tmp");
        let mut command = Command::new(&tool);
        command
            .args(["merge", "-sample", "-o"])
            .arg(&staging)
            .args(&profiles);
        let result =
            capture_command(&mut command, TIMEOUT).with_context(|| format!("running {tool}"))?;
        if !result.success() {
            bail!(
                "`{tool} merge -sample` failed on {} profiles:\n{}",
                profiles.len(),
                quote_output(&result.stderr)
            );
        }
        Ok(vec![store_merged(
            &dirs.profile,
            &staging,
            MERGED_EXTENSION,
        )?])
    }

    fn profile_files(&self, profile_dir: &Path) -> Result<Vec<PathBuf>> {
        require_merged(profile_dir, MERGED_EXTENSION)
    }

    fn use_profile(&self, flags: &mut Flags, dirs: &StageDirs) {
        flags
            .cflags
            .extend(DEBUG_FLAGS.iter().map(|f| (*f).to_owned()));
        let merged = merged_profiles(&dirs.profile, MERGED_EXTENSION)
            .into_iter()
            .next()
            .unwrap_or_else(|| {
                dirs.profile
                    .join(format!("merged-missing.{MERGED_EXTENSION}"))
            });
        let option = format!("-fprofile-sample-use={}", merged.display());
        flags.cflags.push(option.clone());
        flags.ldflags.push(option);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_pmu_is_refused_with_what_works_instead() {
        let err = choose(None, false, false).unwrap_err();
        assert!(err.contains("no hardware counters"), "{err}");
        assert!(err.contains("optimize = [\"pgo\"]"), "{err}");
        assert!(err.contains("sample_event = \"cpu-clock\""), "{err}");
    }

    #[test]
    fn lbr_is_used_where_the_cpu_has_it_and_never_on_timer_samples() {
        assert_eq!(
            choose(None, true, true),
            Ok(Sampling {
                event: "cycles:u".into(),
                branch_stack: true
            })
        );
        assert!(!choose(None, true, false).unwrap().branch_stack);
        assert!(
            !choose(Some("cpu-clock:u"), true, true)
                .unwrap()
                .branch_stack
        );
        assert!(choose(Some("cpu-clock"), false, false).is_ok());
    }

    #[test]
    fn each_recorded_process_writes_its_own_file() {
        let sampling = Sampling {
            event: "cycles:u".into(),
            branch_stack: true,
        };
        let prefix = record_prefix(&sampling, Path::new("/p/raw"));
        assert_eq!(prefix[0], "sh");
        assert!(prefix[2].contains("perf record -q -e cycles:u -b -o \"$0/$$.perfdata\""));
        assert_eq!(prefix[3], "/p/raw");
    }
}
