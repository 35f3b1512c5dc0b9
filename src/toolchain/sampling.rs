//! Training under `perf record`, shared by the sampled optimizers (AutoFDO,
//! BOLT from perf): which event to sample, whether with branch stacks (LBR),
//! whether this machine's perf can record it at all, and the command prefix
//! that records each training process into its own file.

use std::path::Path;
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use anyhow::Result;

use super::{raw_dir, StageDirs};
use crate::process::{capture_command, quote_output};

/// The extension of the recordings training leaves.
pub const RAW_EXTENSION: &str = "perfdata";
/// Written beside the raw recordings: how they were sampled.
const SAMPLING_FILE: &str = "sampling.txt";

/// How training runs are sampled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sampling {
    /// The perf event.
    pub event: String,
    /// Whether each sample carries a branch stack (LBR).
    pub branch_stack: bool,
}

/// Who samples, for the messages: the optimizer's name and what works
/// instead on a machine without a PMU.
pub struct Sampler {
    pub what: &'static str,
    pub instead: &'static str,
}

/// What this machine's perf can do (hardware counters, LBR), probed once.
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
pub fn sampling(event: Option<&str>, sampler: &Sampler) -> Result<Sampling, String> {
    if !super::tools::is_installed("perf") {
        return Err(format!(
            "{} records training runs with perf, which is not installed\nhint: install it with `apt-get install -y linux-perf` (afterburner does when it runs as root)",
            sampler.what
        ));
    }
    let (counters, lbr) = machine();
    let chosen = choose(event, counters, lbr, sampler)?;
    can_record(&chosen)?;
    Ok(chosen)
}

/// Whether user-space cycles with branch stacks can be recorded here: the
/// CPU has LBR and perf may use it. Probed once.
pub fn lbr_sampling_works() -> bool {
    static PROBED: OnceLock<bool> = OnceLock::new();
    *PROBED.get_or_init(|| {
        if !super::tools::is_installed("perf") {
            return false;
        }
        let (counters, lbr) = machine();
        counters
            && lbr
            && can_record(&Sampling {
                event: "cycles:u".to_owned(),
                branch_stack: true,
            })
            .is_ok()
    })
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

fn choose(
    event: Option<&str>,
    counters: bool,
    lbr: bool,
    sampler: &Sampler,
) -> Result<Sampling, String> {
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
        return Err(format!(
            "{} samples the CPU's hardware events, and perf finds no hardware counters on this machine (no PMU, as in most VMs), let alone LBR branch stacks\nhint: {}; to try the sampled path anyway on timer samples (a weaker profile, no branch data) set sample_event = \"cpu-clock\" on the variant",
            sampler.what, sampler.instead
        ));
    }
    Ok(Sampling {
        event: "cycles:u".to_owned(),
        branch_stack: lbr,
    })
}

/// Choose the sampling for a training round, note it beside the raw
/// recordings and return the prefix training runs are started under.
pub fn start(dirs: &StageDirs, event: Option<&str>, sampler: &Sampler) -> Result<Vec<String>> {
    let sampling = sampling(event, sampler).map_err(anyhow::Error::msg)?;
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

/// Whether the round's recordings carry branch stacks (as `start` noted).
pub fn recorded_branch_stacks(dirs: &StageDirs) -> bool {
    fs_err::read_to_string(raw_dir(dirs).join(SAMPLING_FILE))
        .is_ok_and(|s| s.contains("branch_stack=true"))
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

#[cfg(test)]
mod tests {
    use super::*;

    const AUTOFDO: Sampler = Sampler {
        what: "AutoFDO",
        instead: "use optimize = [\"pgo\"]",
    };

    #[test]
    fn no_pmu_is_refused_with_what_works_instead() {
        let err = choose(None, false, false, &AUTOFDO).unwrap_err();
        assert!(err.starts_with("AutoFDO samples"), "{err}");
        assert!(err.contains("no hardware counters"), "{err}");
        assert!(err.contains("optimize = [\"pgo\"]"), "{err}");
        assert!(err.contains("sample_event = \"cpu-clock\""), "{err}");
    }

    #[test]
    fn lbr_is_used_where_the_cpu_has_it_and_never_on_timer_samples() {
        assert_eq!(
            choose(None, true, true, &AUTOFDO),
            Ok(Sampling {
                event: "cycles:u".into(),
                branch_stack: true
            })
        );
        assert!(!choose(None, true, false, &AUTOFDO).unwrap().branch_stack);
        assert!(
            !choose(Some("cpu-clock:u"), true, true, &AUTOFDO)
                .unwrap()
                .branch_stack
        );
        assert!(choose(Some("cpu-clock"), false, false, &AUTOFDO).is_ok());
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
